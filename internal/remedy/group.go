package remedy

import (
	"cmp"
	"slices"
	"strings"
)

// Action is one action and the findings it clears.
type Action struct {
	// Fix is the action: KindInRange or KindComponent.
	Fix Fix
	// Findings are the findings it clears, in Decide's order.
	Findings []Decided
	// Advisories is how many advisories it clears, and InDependencies how
	// many of them are in the components' dependencies (not on a
	// component itself).
	Advisories, InDependencies int
	// Severity is the worst severity it clears (Finding.Severity).
	Severity int
}

// Group gathers the fixable findings by the action that clears them and
// ranks the actions: the most advisories cleared first, then the worst
// severity, then the sum of the severities. A finding whose fix is not
// fixable (KindNoFix, KindNoneYet, KindUnknown) is in no action.
func Group(decided []Decided) []Action {
	byKey := map[string]*Action{}
	var keys []string
	sums := map[string]int{}
	for _, d := range decided {
		if !d.Fix.Kind.Fixable() {
			continue
		}
		k := d.Fix.key()
		a := byKey[k]
		if a == nil {
			a = &Action{Fix: d.Fix}
			byKey[k] = a
			keys = append(keys, k)
		}
		a.Findings = append(a.Findings, d)
		a.Severity = max(a.Severity, d.Finding.Severity)
		sums[k] += d.Finding.Severity
	}
	out := make([]Action, 0, len(keys))
	for _, k := range keys {
		a := byKey[k]
		all, deps := map[string]bool{}, map[string]bool{}
		for _, d := range a.Findings {
			all[d.Finding.Advisory] = true
			if !d.Direct {
				deps[d.Finding.Advisory] = true
			}
		}
		a.Advisories, a.InDependencies = len(all), len(deps)
		out = append(out, *a)
	}
	slices.SortStableFunc(out, func(a, b Action) int {
		return cmp.Or(cmp.Compare(b.Advisories, a.Advisories), cmp.Compare(b.Severity, a.Severity),
			cmp.Compare(sums[b.Fix.key()], sums[a.Fix.key()]), strings.Compare(a.Fix.key(), b.Fix.key()))
	})
	return out
}

// key names the action of a fixable fix: equal for two findings one
// action clears.
func (f Fix) key() string {
	var b strings.Builder
	b.WriteString(string(f.Kind))
	for _, u := range f.Updates {
		b.WriteString("\x00" + u.Component + "\x00" + u.To)
	}
	b.WriteString("\x00" + string(f.Manager) + "\x00" + f.Package)
	return b.String()
}
