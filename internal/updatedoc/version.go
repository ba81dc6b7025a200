package updatedoc

import (
	"strings"

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

// Range is a set of versions written in the range syntax of
// github.com/Masterminds/semver: comparisons (">=1.8.0", "<2.4.0"), several
// of them joined by commas or spaces meaning "and" (">=1.0.0, <2.4.0"),
// alternatives separated by "||", x-ranges ("1.2.x", "2"), tilde and caret
// ranges ("~1.2.3", "^1.2.3") and hyphen ranges ("1.2.0 - 1.4.0").
//
// Unlike the library's default, a Range places pre-release versions by
// their position in the version order instead of leaving them out: an
// installed 2.3.0-beta.1 is inside "<2.4.0", and so is 2.4.0-beta.1, since
// both come before 2.4.0. Leaving them out would report a site running a
// vulnerable beta as unaffected. A partial version stands for the lowest
// release it names ("<2.4" is "<2.4.0", ">=2.4" is ">=2.4.0"), and the
// series named by an x-, tilde or caret range starts at that release and
// stops before the pre-releases of the next series: "2.4.x" holds 2.4.0,
// 2.4.7-rc.1 and 2.4.9 but neither 2.4.0-beta.1 (which comes before 2.4.0)
// nor 2.5.0-beta.1.
//
// The zero Range holds no version. A Range is safe for concurrent use.
type Range struct {
	text        string
	constraints *semver.Constraints
}

// ParseRange parses a range; surrounding white space is ignored and an empty
// range is refused, because an empty "affected" or "requires_core" is far
// more likely a publisher's mistake than a deliberate "every version".
func ParseRange(s string) (Range, error) {
	text := strings.TrimSpace(s)
	if text == "" {
		return Range{}, invalidf(nil, "range %q is empty", s)
	}
	c, err := semver.NewConstraint(text)
	if err != nil {
		return Range{}, invalidf(err, "%q is not a valid range: %v", s, err)
	}
	// Including pre-releases makes every comparison a plain comparison in
	// the version order (see the type's comment); the library's default
	// would answer "no" for any pre-release outside a range that itself
	// names one.
	c.IncludePrerelease = true
	return Range{text: text, constraints: c}, nil
}

// Contains reports whether v is in the range. A nil version or the zero
// Range never match.
func (r Range) Contains(v *semver.Version) bool {
	if r.constraints == nil || v == nil {
		return false
	}
	return r.constraints.Check(v)
}

// String returns the range as it was written, without surrounding space.
func (r Range) String() string {
	return r.text
}
