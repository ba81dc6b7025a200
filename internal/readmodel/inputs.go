package readmodel

import (
	"encoding/json"
	"fmt"
	"time"
)

// Input is one of the site's own inputs that serve reads to know what is
// installed: the manifest (UPCHECK_MANIFEST) or the lockfile
// (UPCHECK_LOCKFILE). Its SQL twin is input_refusals.input's check.
type Input string

// The inputs.
const (
	InputManifest Input = "manifest"
	InputLockfile Input = "lockfile"
)

// Inputs lists every Input, in the order pages and /metrics name them.
var Inputs = []Input{InputLockfile, InputManifest}

// Noun is the input as a sentence names it.
func (i Input) Noun() string {
	if i == InputLockfile {
		return "lockfile"
	}
	return "manifest"
}

// InputRefusal says that serve read one of the site's inputs and refused
// it: the installed components stay as the last accepted input left them,
// so every result is about what the site ran before the file changed.
type InputRefusal struct {
	Input Input  `json:"input"`
	Path  string `json:"path"`
	// Error names the file, the line and the problem, never a value read
	// from it.
	Error string `json:"error"`
	// Since is when the input was first refused with this error, RefusedAt
	// when it last was (every look while it stays refused).
	Since     time.Time `json:"since"`
	RefusedAt time.Time `json:"refused_at"`
}

// Headline is the refusal in one sentence, for the dashboard, the banner
// and chat: what was refused and what upcheck does meanwhile.
func (r InputRefusal) Headline() string {
	return fmt.Sprintf("The %s %s was refused: the installed components are those of the last %s accepted, and what upcheck says is about them.",
		r.Input.Noun(), r.Path, r.Input.Noun())
}

// InputRefusals are the inputs refused now; in JSON an empty list, never
// null, whoever built the summary.
type InputRefusals []InputRefusal

// MarshalJSON writes none as [].
func (rs InputRefusals) MarshalJSON() ([]byte, error) {
	if rs == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]InputRefusal(rs))
}
