package updatedoc

import (
	"github.com/Masterminds/semver/v3"
)

// ParseVersion parses a strict semantic version: MAJOR.MINOR.PATCH with an
// optional pre-release and build metadata ("1.2.3", "1.2.3-beta.1",
// "1.2.3+build.7"). Loose spellings such as "v1.2.3", "1.2" or "01.2.3" are
// refused: a version that two tools could read differently has no place in a
// comparison that decides whether a site is vulnerable.
func ParseVersion(s string) (*semver.Version, error) {
	v, err := semver.StrictNewVersion(s)
	if err != nil {
		return nil, invalidf(err, "%q is not a semantic version", s)
	}
	return v, nil
}
