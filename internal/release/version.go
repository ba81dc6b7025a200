package release

import (
	"strings"

	"github.com/Masterminds/semver/v3"
)

// ParseVersion parses a strict semantic version: MAJOR.MINOR.PATCH with an
// optional pre-release and build metadata ("1.2.3", "1.2.3-beta.1",
// "1.2.3+build.7"), the versions npm publishes. Loose spellings such as
// "v1.2.3", "1.2" or "01.2.3" are refused: a version that two tools could
// read differently has no place in a comparison that decides whether a site
// is vulnerable. It is the product's one reading of a version: every
// package that compares versions reads them here (archtest refuses
// semver's parsers anywhere else).
func ParseVersion(s string) (*semver.Version, error) {
	v, err := semver.StrictNewVersion(s)
	if err != nil {
		return nil, invalidf(err, "%q is not a semantic version", s)
	}
	return v, nil
}

// CleanVersion drops what npm's own parser drops before it reads an
// installed version (semver.clean): surrounding spaces and leading "v" and
// "=". It is for versions read from the outside as installed (a lockfile,
// an OSV query), never for a publisher's document, where "v1.2.3" is an
// error.
func CleanVersion(s string) string {
	return strings.TrimLeft(strings.TrimSpace(s), "v=")
}
