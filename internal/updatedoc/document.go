package updatedoc

import (
	"fmt"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// Format is the only document format this package understands.
const Format = 1

// Limits on the size of a document. A publisher feed with more is almost
// certainly broken or hostile, and each entry costs work on every
// evaluation, so it is refused as a whole rather than truncated.
const (
	// MaxPackages is the most packages one document may hold.
	MaxPackages = 10000
	// MaxReleasesPerPackage is the most releases one package may list.
	MaxReleasesPerPackage = 1000
	// MaxAdvisoriesPerPackage is the most advisories one package may list.
	MaxAdvisoriesPerPackage = 1000
	// MaxAdvisoryID is the most bytes an advisory id may have: the one
	// limit of every advisory id (readmodel.MaxAdvisoryID).
	MaxAdvisoryID = readmodel.MaxAdvisoryID
)

// severities lists the allowed values of a severity, lowest first.
var severities = []string{"low", "medium", "high", "critical"}

// Document is a parsed and validated update document of format 1. Values
// produced by [Parse] are read-only: several evaluations may share one.
type Document struct {
	Format    int    `json:"format"`
	Publisher string `json:"publisher"`
	// Sequence only grows from one publication to the next; see
	// [CheckSequence].
	Sequence int64 `json:"sequence"`
	// Expires is the zero time when the publisher set no expiry.
	Expires time.Time `json:"expires,omitzero"`
	// Packages is keyed by component code.
	Packages map[string]*Package `json:"packages"`
}

// Package is what a document says about one component.
type Package struct {
	Releases   []Release  `json:"releases"`
	Advisories []Advisory `json:"advisories"`
}

// Release is one published version of a package.
type Release struct {
	Version string `json:"version"`
	// Released is the zero time when the publisher did not say.
	Released time.Time `json:"released,omitzero"`
	// RequiresCore is the range of core versions this release runs on;
	// empty means any.
	RequiresCore string `json:"requires_core,omitempty"`
	Security     bool   `json:"security,omitempty"`
	Severity     string `json:"severity,omitempty"`
	Summary      string `json:"summary,omitempty"`
	URL          string `json:"url,omitempty"`

	// The parsed forms, filled by Parse so that evaluations do not parse
	// again. Evaluate falls back to parsing the text when they are nil (a
	// Release built by hand).
	version      *semver.Version
	requiresCore *Range
}

// Advisory is a published vulnerability of a package.
type Advisory struct {
	ID       string `json:"id"`
	Severity string `json:"severity,omitempty"`
	// Affected is the range of vulnerable versions.
	Affected string `json:"affected"`
	// FixedIn is empty while there is no fix.
	FixedIn string `json:"fixed_in,omitempty"`
	Summary string `json:"summary,omitempty"`
	URL     string `json:"url,omitempty"`
	// OSV's members (osv.go). Aliases are other databases' ids of the same
	// advisory (CVE, GHSA, …).
	Aliases []string `json:"aliases,omitempty"`
	// CVSS is a CVSS v3.0, v3.1 or v4.0 vector and CVSSScore its base
	// score (meaningful only when CVSS is set). Severity is the
	// publisher's word, or when the publisher gave none, the word of the
	// score on CVSS's qualitative scale.
	CVSS      string  `json:"cvss,omitempty"`
	CVSSScore float64 `json:"cvss_score,omitempty"`
	// Withdrawn is when the publisher withdrew the advisory (zero: it
	// stands). A withdrawn advisory affects nothing: Evaluate lists it
	// apart, in Evaluation.Withdrawn.
	Withdrawn time.Time `json:"withdrawn,omitzero"`
	// Modified is when the publisher last changed the advisory (zero: not
	// said).
	Modified   time.Time   `json:"modified,omitzero"`
	References []Reference `json:"references,omitempty"`

	affected *Range
}

// CheckSequence refuses a document whose sequence is lower than the stored
// one (haveStored false means nothing is stored yet). An equal sequence is
// accepted: it is the same publication fetched again.
func CheckSequence(stored, incoming int64, haveStored bool) error {
	if haveStored && incoming < stored {
		return fmt.Errorf("%w: sequence %d is lower than the stored sequence %d", ErrRollback, incoming, stored)
	}
	return nil
}
