package updatedoc

import (
	"fmt"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
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
	// Packages is keyed by component code: the domain's packages
	// (release.Package), which the document produces.
	Packages map[string]*release.Package `json:"packages"`
}

// Package is what the document says about the component code, nil when it
// says nothing (or there is no document): release.Evaluate says Missing.
func (d *Document) Package(code string) *release.Package {
	if d == nil {
		return nil
	}
	return d.Packages[code]
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
