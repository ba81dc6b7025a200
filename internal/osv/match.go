package osv

import (
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/upcheck/upcheck/internal/release"
)

// Match says how a record affects an installed version.
type Match struct {
	// Affected is the index in Record.Affected of the entry that matched.
	Affected int
	Package  Package
	// InVersions is true when the entry's explicit versions list named
	// the version (then Fixed and LastAffected come from no range).
	InVersions bool
	// Fixed is the lowest fixed event above the version in the range that
	// matched; "" when the range has none (no fix is known).
	Fixed string
	// LastAffected is the lowest last_affected event at or above the
	// version in the range that matched, when the range closes with one.
	LastAffected string
}

// Packages lists the distinct (ecosystem, name) pairs of affected[], in
// the order they first appear; PURL is left empty.
func (r *Record) Packages() []Package {
	var out []Package
	for _, a := range r.Affected {
		if !a.HasPackage {
			continue
		}
		p := Package{Ecosystem: a.Package.Ecosystem, Name: a.Package.Name}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Affects reports whether the record affects the package at version; a
// withdrawn record affects nothing.
func (r *Record) Affects(ecosystem, name, version string) (bool, error) {
	_, ok, err := r.Match(ecosystem, name, version)
	return ok, err
}

// Match evaluates the record for the package at version as the OSV schema
// specifies ("Evaluation"): an affected entry of the same package (the
// ecosystem and the name compared exactly, as the ecosystem spells them)
// matches when its versions list holds the version or one of its ranges
// does. A SEMVER range, or an ECOSYSTEM range of npm, holds the version
// when the version is below one of its limits (none: no bound) and the
// last of its events, sorted by version with "0" lowest, that the version
// reaches leaves it affected: introduced at or below it, fixed at or below
// it, last_affected below it. GIT ranges, and ECOSYSTEM ranges of other
// ecosystems (whose ordering this package does not know), are skipped.
// The first matching entry is returned; a withdrawn record matches nothing
// (the caller reads Withdrawn to say so). An installed version that cannot
// be ordered is an error wrapping ErrVersion; an npm version may be written
// with a leading "v" or "=", as npm allows.
func (r *Record) Match(ecosystem, name, version string) (Match, bool, error) {
	if r.IsWithdrawn() {
		return Match{}, false, nil
	}
	var installed *semver.Version
	listed := version // as a versions list writes it
	if ecosystem == EcosystemNPM {
		listed = strings.TrimLeft(strings.TrimSpace(version), "v=")
	}
	for i, a := range r.Affected {
		if !a.HasPackage || a.Package.Ecosystem != ecosystem || a.Package.Name != name {
			continue
		}
		if installed == nil && ecosystem == EcosystemNPM {
			// Said even when a versions list would match: an npm
			// version that is not SemVer is the caller's mistake.
			v, err := parseInstalled(version)
			if err != nil {
				return Match{}, false, err
			}
			installed = v
		}
		if slices.Contains(a.Versions, listed) {
			return Match{Affected: i, Package: a.Package, InVersions: true}, true, nil
		}
		for _, rg := range a.Ranges {
			if !orderable(rg.Type, ecosystem) {
				continue
			}
			if installed == nil {
				v, err := parseInstalled(version)
				if err != nil {
					return Match{}, false, err
				}
				installed = v
			}
			if m, ok := evaluate(rg, installed); ok {
				m.Affected, m.Package = i, a.Package
				return m, true, nil
			}
		}
	}
	return Match{}, false, nil
}

func orderable(rangeType, ecosystem string) bool {
	return rangeType == RangeSemver || rangeType == RangeEcosystem && ecosystem == EcosystemNPM
}

// parseInstalled reads an installed version by the product's one rule
// (release.ParseVersion); a leading "v" or "=" (which npm's parser also
// drops) is allowed (release.CleanVersion).
func parseInstalled(version string) (*semver.Version, error) {
	v, err := release.ParseVersion(release.CleanVersion(version))
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not a SemVer version", ErrVersion, version)
	}
	return v, nil
}

// point is one event with its version read; zero is "0", infinite a limit
// with "*".
type point struct {
	kind     string // introduced, fixed, last_affected, limit
	raw      string
	v        *semver.Version
	zero     bool
	infinite bool
}

func (p point) compare(q point) int {
	switch {
	case p.zero || q.infinite:
		if p.zero && q.zero || p.infinite && q.infinite {
			return 0
		}
		return -1
	case q.zero || p.infinite:
		return 1
	}
	return p.v.Compare(q.v)
}

// cmpVersion compares an installed version with the event's version:
// negative when v is below it.
func (p point) cmpVersion(v *semver.Version) int {
	return point{v: v}.compare(p)
}

func points(events []Event) []point {
	out := make([]point, 0, len(events))
	for _, e := range events {
		p := point{}
		switch {
		case e.Introduced != "":
			p.kind, p.raw, p.zero = "introduced", e.Introduced, e.Introduced == "0"
		case e.Fixed != "":
			p.kind, p.raw = "fixed", e.Fixed
		case e.LastAffected != "":
			p.kind, p.raw = "last_affected", e.LastAffected
		default:
			p.kind, p.raw, p.infinite = "limit", e.Limit, strings.Contains(e.Limit, "*")
		}
		if !p.zero && !p.infinite {
			v, err := release.ParseVersion(p.raw)
			if err != nil {
				continue // Parse checked it; a Record built by hand may not be
			}
			p.v = v
		}
		out = append(out, p)
	}
	slices.SortStableFunc(out, point.compare)
	return out
}

// evaluate is IncludedInRanges for one range, with the fix found.
func evaluate(rg Range, v *semver.Version) (Match, bool) {
	ps := rg.sorted
	if ps == nil {
		ps = points(rg.Events)
	}
	limited, before := false, false
	for _, p := range ps {
		if p.kind == "limit" {
			limited = true
			before = before || p.cmpVersion(v) < 0
		}
	}
	if limited && !before {
		return Match{}, false
	}
	affected := false
	for _, p := range ps {
		c := p.cmpVersion(v) // the installed version against the event's
		switch p.kind {
		case "introduced":
			if c >= 0 {
				affected = true
			}
		case "fixed":
			if c >= 0 {
				affected = false
			}
		case "last_affected":
			if c > 0 {
				affected = false
			}
		}
	}
	if !affected {
		return Match{}, false
	}
	var m Match
	for _, p := range ps {
		c := p.cmpVersion(v)
		if p.kind == "fixed" && c < 0 && m.Fixed == "" {
			m.Fixed = p.raw
		}
		if p.kind == "last_affected" && c <= 0 && m.LastAffected == "" && m.Fixed == "" {
			m.LastAffected = p.raw
		}
	}
	return m, true
}
