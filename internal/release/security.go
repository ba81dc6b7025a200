package release

import (
	"slices"

	"github.com/Masterminds/semver/v3"
)

// securityVersions lists, for Offer, the releases newer than inst that
// their publisher marks security releases, weighed as Offer weighs them,
// oldest first (Evaluation.SecurityVersions); nil when Offer found no
// SecurityRelease, whose version is the newest of them when the publisher
// marks it.
func (ev *Evaluation) securityVersions(inst *semver.Version, includePre bool) []string {
	if ev.SecurityRelease == nil {
		return nil
	}
	type marked struct {
		text string
		v    *semver.Version
	}
	var ms []marked
	for i := range ev.Releases {
		r := &ev.Releases[i]
		v, err := r.parsedVersion()
		if err != nil || !r.Security || !v.GreaterThan(inst) || v.Prerelease() != "" && !includePre {
			continue
		}
		ms = append(ms, marked{r.Version, v})
	}
	slices.SortFunc(ms, func(a, b marked) int { return a.v.Compare(b.v) })
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.text
	}
	return out
}
