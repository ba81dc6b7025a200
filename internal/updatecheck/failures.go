package updatecheck

import (
	"context"
	"slices"
	"strings"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// SourceFailure is why one source gave no usable document in a check: its
// address, the kind of failure the check recorded (readmodel.ErrorKind)
// and the sentence Source health shows for it (readmodel.ProblemSentence),
// never the technical text, which may quote what a server sent.
type SourceFailure struct {
	Source  string              `json:"source"`
	Kind    readmodel.ErrorKind `json:"kind"`
	Message string              `json:"message"`
}

// Failures lists the sources that the check of res failed to read, sorted
// by address: those whose row that check wrote last (stamped with its
// epoch) with a failure. It reads what the check stored, so it is called
// after the check and lists nothing for a check that did not run (no
// epoch); a source a later check has written since is no longer listed.
func (c *Checker) Failures(ctx context.Context, res Result) ([]SourceFailure, error) {
	out := []SourceFailure{}
	if res.Epoch == 0 || res.Failed == 0 {
		return out, nil
	}
	sources, err := c.store.Sources(ctx)
	if err != nil {
		return nil, err
	}
	ours := make(map[string]bool)
	for _, s := range sources {
		if s.Epoch == res.Epoch && s.ConsecutiveFailures > 0 {
			ours[s.URL] = true
		}
	}
	health, err := c.store.SourceHealth(ctx)
	if err != nil {
		return nil, err
	}
	for _, h := range health {
		if ours[h.URL] {
			out = append(out, SourceFailure{Source: h.URL, Kind: readmodel.ErrorKind(h.LastErrorKind),
				Message: readmodel.ProblemSentence(h.LastErrorKind, h.LastErrorArgs)})
		}
	}
	slices.SortFunc(out, func(a, b SourceFailure) int { return strings.Compare(a.Source, b.Source) })
	return out, nil
}
