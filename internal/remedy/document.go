package remedy

import (
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/upcheck/upcheck/internal/npmver"
	"github.com/upcheck/upcheck/internal/release"
)

// Document is what a fix needs of a package's registry document: its
// releases at or above Floor, each with the ranges it declares for its
// dependencies, and the version its "latest" tag names. Versions below
// Floor are not kept (a package document can be tens of megabytes): a
// range that only versions below the lowest installed one satisfy is
// taken to admit no fix, which never calls a finding fixable that is not.
//
// It is stored as this JSON between checks (tree_fix_documents). Pick
// remembers what it picked: a Document is not safe for concurrent use.
type Document struct {
	Name string `json:"name"`
	// Latest is the version the "latest" dist-tag names, "" when none.
	Latest string `json:"latest,omitempty"`
	// Floor is the lowest version kept; "" when every version is.
	Floor    string             `json:"floor,omitempty"`
	Versions map[string]Version `json:"versions"`

	sorted []docVersion // the releases, lowest first (sort)
	picks  map[string]string
}

// Version is one release's dependencies, as its manifest declares them.
type Version struct {
	// Dependencies are its dependencies and optionalDependencies (name as
	// declared → range as declared).
	Dependencies map[string]string `json:"deps,omitempty"`
	Deprecated   bool              `json:"deprecated,omitempty"`
}

type docVersion struct {
	text string
	v    *semver.Version
}

// sort lists d's releases in order once. Pre-releases are left out: npm
// installs one only for a range that names a pre-release of the same
// version, which the fixes here do not follow.
func (d *Document) sort() []docVersion {
	if d.sorted != nil || len(d.Versions) == 0 {
		return d.sorted
	}
	d.sorted = make([]docVersion, 0, len(d.Versions))
	for text := range d.Versions {
		v, err := npmver.Parse(text)
		if err != nil || v.Prerelease() != "" {
			continue
		}
		d.sorted = append(d.sorted, docVersion{text: text, v: v})
	}
	slices.SortFunc(d.sorted, func(a, b docVersion) int { return a.v.Compare(b.v) })
	return d.sorted
}

// Pick is the version npm installs for spec, the range a dependent
// declares: the "latest" tag's version when the range holds it, else the
// highest release the range holds that is not deprecated, else the
// highest it holds (npm-pick-manifest's order). "" and "*" hold every
// release; "npm:NAME@RANGE" (an alias) is read as RANGE. ok is false when
// no kept release is in the range or spec is not a version range (a tag
// other than latest, a git or file dependency): a fix is never read
// through what cannot be resolved from the registry.
func (d *Document) Pick(spec string) (string, bool) {
	if v, ok := d.picks[spec]; ok {
		return v, v != ""
	}
	v := d.pick(spec)
	if d.picks == nil {
		d.picks = map[string]string{}
	}
	d.picks[spec] = v
	return v, v != ""
}

func (d *Document) pick(spec string) string {
	r, ok := readRange(spec)
	if !ok {
		if strings.TrimSpace(spec) == "latest" {
			if _, kept := d.Versions[d.Latest]; kept {
				return d.Latest
			}
		}
		return ""
	}
	if lv, err := npmver.Parse(d.Latest); err == nil && lv.Prerelease() == "" && r.Contains(lv) {
		if _, kept := d.Versions[d.Latest]; kept {
			return d.Latest
		}
	}
	best := ""
	sorted := d.sort()
	for i := len(sorted) - 1; i >= 0; i-- {
		if !r.Contains(sorted[i].v) {
			continue
		}
		if !d.Versions[sorted[i].text].Deprecated {
			return sorted[i].text
		}
		if best == "" {
			best = sorted[i].text
		}
	}
	return best
}

// readRange reads a dependency's range as npm does: "" is "*", an
// alias's "npm:NAME@RANGE" is RANGE; false for what is not a version
// range.
func readRange(spec string) (release.Range, bool) {
	spec = strings.TrimSpace(spec)
	if _, r, ok := alias(spec); ok {
		spec = r
	}
	if spec == "" {
		spec = "*"
	}
	r, err := release.ParseRange(spec)
	return r, err == nil
}

// alias reads a dependency declared as an alias of another package
// ("npm:NAME@RANGE", "npm:NAME" for any version): the package and the
// range; ok is false for any other spec.
func alias(spec string) (name, r string, ok bool) {
	rest, ok := strings.CutPrefix(spec, "npm:")
	if !ok {
		return "", "", false
	}
	if at := strings.LastIndex(rest, "@"); at > 0 {
		return rest[:at], rest[at+1:], true
	}
	return rest, "*", true
}

// dependency is the range v declares for the package name: under its own
// name, or an alias of it ("x": "npm:name@^1"). ok is false when v does
// not depend on name.
func (v Version) dependency(name string) (string, bool) {
	if r, ok := v.Dependencies[name]; ok {
		if _, _, isAlias := alias(r); !isAlias {
			return r, true
		}
	}
	for _, r := range v.Dependencies {
		if real, _, ok := alias(r); ok && real == name {
			return r, true
		}
	}
	return "", false
}
