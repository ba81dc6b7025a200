// Package npmver reads a version as npm does: the product's one reading of one
// (Parse), below the domain (internal/release) and the vocabulary
// (internal/readmodel), which both compare versions.
package npmver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Parse parses a strict semantic version: MAJOR.MINOR.PATCH with an
// optional pre-release and build metadata ("1.2.3", "1.2.3-beta.1",
// "1.2.3+build.7"), the versions npm publishes. Loose spellings such as
// "v1.2.3", "1.2" or "01.2.3" are refused: a version that two tools could
// read differently has no place in a comparison that decides whether a site
// is vulnerable. It is the product's one reading of a version: every
// package that compares versions reads them here (archtest refuses
// semver's parsers anywhere else).
func Parse(s string) (*semver.Version, error) {
	v, err := semver.StrictNewVersion(s)
	if err != nil {
		return nil, &invalidError{msg: fmt.Sprintf("%q is not a semantic version", s), cause: err}
	}
	return v, nil
}

// Clean drops what npm's own parser drops before it reads an
// installed version (semver.clean): surrounding spaces and leading "v" and
// "=". It is for versions read from the outside as installed (a lockfile,
// an OSV query), never for a publisher's document, where "v1.2.3" is an
// error.
func Clean(s string) string {
	return strings.TrimLeft(strings.TrimSpace(s), "v=")
}

// ErrInvalid is wrapped by the error of a version that does not parse;
// release.ErrInvalid (and so updatedoc's) is this same value.
var ErrInvalid = errors.New("invalid input")

// invalidError names the version refused, wraps ErrInvalid and keeps
// semver's error reachable.
type invalidError struct {
	msg   string
	cause error
}

func (e *invalidError) Error() string { return e.msg }

func (e *invalidError) Unwrap() []error { return []error{ErrInvalid, e.cause} }
