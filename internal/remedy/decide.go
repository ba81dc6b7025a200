package remedy

import (
	"cmp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/upcheck/upcheck/internal/npmver"
	"github.com/upcheck/upcheck/internal/tree"
)

// Decide says what clears each finding of in, in the order of
// in.Findings. A finding is
//
//   - KindNoFix when its advisory names no fixed version;
//   - KindInRange when every dependent of its instance declares a range
//     whose pick (Document.Pick) is a release that clears it;
//   - KindComponent when each component that brings it in (tree.Reach's
//     heads) has a release, the lowest above the installed one, from which
//     resolving the path as npm does (the pick of each range, down to the
//     package) reaches a release that clears it, or no longer depends on
//     the next package of the path;
//   - KindNoneYet when a component has no such release: the package that
//     pins it is the first on the path, read from the component's latest
//     release down, whose range holds no release leading to a fix;
//   - KindUnknown when a document it needs was not read.
//
// The findings that one component's update clears are moved to one
// target: the highest release any of them needs, when it clears each.
func Decide(in Input) []Decided {
	d := newDecider(in)
	out := make([]Decided, len(in.Findings))
	heads := make([]map[string]map[string]bool, len(in.Findings))
	for i, f := range in.Findings {
		out[i], heads[i] = d.decide(f)
	}
	// One target a component: the highest any finding needs, for every
	// finding it clears too.
	target := map[string]*semver.Version{}
	for _, dd := range out {
		for _, u := range dd.Fix.Updates {
			if v, err := npmver.Parse(u.To); err == nil && (target[u.Component] == nil || v.GreaterThan(target[u.Component])) {
				target[u.Component] = v
			}
		}
	}
	for i := range out {
		for j, u := range out[i].Fix.Updates {
			if t := target[u.Component]; t != nil && heads[i][u.Component][t.Original()] {
				out[i].Fix.Updates[j].To = t.Original()
			}
		}
	}
	return out
}

type decider struct {
	in         Input
	byID       map[string]*tree.Package
	dependents map[string][]tree.Edge
	from       map[string][]tree.Edge
	reach      map[string]*tree.Reach
}

func newDecider(in Input) *decider {
	d := &decider{in: in, byID: map[string]*tree.Package{}, dependents: map[string][]tree.Edge{},
		from: map[string][]tree.Edge{}, reach: in.Tree.Reach()}
	for i := range in.Tree.Packages {
		d.byID[in.Tree.Packages[i].ID] = &in.Tree.Packages[i]
	}
	for _, e := range in.Tree.Edges {
		if e.To != "" && d.byID[e.To] != nil {
			d.dependents[e.To] = append(d.dependents[e.To], e)
			d.from[e.From] = append(d.from[e.From], e)
		}
	}
	return d
}

// decide is one finding's fix, and for each component of a
// KindComponent fix the releases of it that clear the finding.
func (d *decider) decide(f Finding) (Decided, map[string]map[string]bool) {
	out := Decided{Finding: f}
	p := d.byID[f.Instance]
	if p == nil {
		out.Fix = Fix{Kind: KindUnknown}
		return out, nil
	}
	out.Direct = slices.ContainsFunc(d.dependents[p.ID], func(e tree.Edge) bool { return e.From == tree.Root })
	if f.Fixed == "" {
		out.Fix = Fix{Kind: KindNoFix}
		return out, nil
	}
	fixed, err := npmver.Parse(npmver.Clean(f.Fixed))
	if err != nil {
		out.Fix = Fix{Kind: KindNoFix}
		return out, nil
	}
	doc := d.in.Documents[p.Name]
	if doc == nil {
		out.Fix = Fix{Kind: KindUnknown, Package: p.Name}
		return out, nil
	}
	// (a) In range: every dependent's range already picks a fix.
	if deps := d.dependents[p.ID]; len(deps) > 0 && !slices.ContainsFunc(deps, func(e tree.Edge) bool {
		v, ok := doc.Pick(e.Range)
		return !ok || !f.clears(fixed, v)
	}) {
		out.Fix = Fix{Kind: KindInRange, Manager: d.in.Manager, Package: p.Name}
		return out, nil
	}
	// (b) Through each component that brings it in, or (c) none yet.
	r := d.reach[p.ID]
	if r == nil || len(r.Via) == 0 {
		out.Fix = Fix{Kind: KindUnknown, Package: p.Name}
		return out, nil
	}
	fix := Fix{Kind: KindComponent}
	goods := map[string]map[string]bool{}
	for _, via := range r.Via {
		step := d.throughComponent(f, fixed, via)
		switch {
		case step.missing != "":
			out.Fix = Fix{Kind: KindUnknown, Package: step.missing}
			return out, nil
		case step.pin != nil:
			out.Fix = *step.pin
			return out, nil
		case step.update != nil:
			fix.Updates = append(fix.Updates, *step.update)
			goods[step.update.Component] = step.good
		case step.inRange != "" && fix.Package == "":
			fix.Manager, fix.Package = d.in.Manager, step.inRange
		}
	}
	if len(fix.Updates) == 0 {
		fix.Kind = KindInRange
	}
	slices.SortFunc(fix.Updates, func(a, b Update) int { return strings.Compare(a.Component, b.Component) })
	out.Fix = fix
	return out, goods
}

// step is what clears a finding through one component.
type step struct {
	update *Update
	// good are the component's releases that clear the finding.
	good map[string]bool
	// inRange is the package on the path to update in range: the
	// component's installed release clears it already.
	inRange string
	pin     *Fix
	missing string
}

// throughComponent decides how via's component clears f.
func (d *decider) throughComponent(f Finding, fixed *semver.Version, via tree.Via) step {
	path := via.Path
	docs := make([]*Document, len(path))
	for k, name := range path {
		if docs[k] = d.in.Documents[name]; docs[k] == nil {
			return step{missing: name}
		}
	}
	// good[k]: the releases of path[k] from which the path resolves to a
	// release that clears, computed from the package up.
	n := len(path) - 1
	good := make([]map[string]bool, len(path))
	good[n] = map[string]bool{}
	for _, v := range docs[n].sort() {
		if f.clears(fixed, v.text) {
			good[n][v.text] = true
		}
	}
	for k := n - 1; k >= 0; k-- {
		good[k] = map[string]bool{}
		for _, v := range docs[k].sort() {
			spec, ok := docs[k].Versions[v.text].dependency(path[k+1])
			if !ok {
				good[k][v.text] = true // it no longer brings the package in
				continue
			}
			if pick, ok := docs[k+1].Pick(spec); ok && good[k+1][pick] {
				good[k][v.text] = true
			}
		}
	}
	installed := d.installedPath(via)
	head := installed[0]
	if good[0][head] {
		// The installed component admits a fix: the first package below
		// it that its ranges pick at another release is updated in range.
		at := head
		for k := 1; k <= n; k++ {
			spec, _ := docs[k-1].Versions[at].dependency(path[k])
			pick, _ := docs[k].Pick(spec)
			if pick != installed[k] {
				return step{inRange: path[k]}
			}
			at = pick
		}
		return step{inRange: path[n]}
	}
	if hv, err := npmver.Parse(head); err == nil {
		for _, v := range docs[0].sort() {
			if v.v.GreaterThan(hv) && good[0][v.text] {
				return step{update: &Update{Component: via.Head, From: head, To: v.text}, good: good[0]}
			}
		}
	}
	return step{pin: d.pin(via, docs, good)}
}

// pin is the KindNoneYet fix through via's component: walking down from
// its latest release by npm's picks, the first package whose range holds
// no release leading to a fix, while the registry has one.
func (d *decider) pin(via tree.Via, docs []*Document, good []map[string]bool) *Fix {
	path := via.Path
	fix := &Fix{Kind: KindNoneYet, Component: via.Head}
	at := docs[0].Latest
	if _, ok := docs[0].Versions[at]; !ok {
		if s := docs[0].sort(); len(s) > 0 {
			at = s[len(s)-1].text
		}
	}
	for k := 0; k < len(path)-1; k++ {
		spec, _ := docs[k].Versions[at].dependency(path[k+1])
		holds := false
		for v := range good[k+1] {
			if r, ok := readRange(spec); ok {
				if sv, err := npmver.Parse(v); err == nil && r.Contains(sv) {
					holds = true
					break
				}
			}
		}
		pick, ok := docs[k+1].Pick(spec)
		if len(good[k+1]) > 0 && !holds || !ok {
			fix.PinnedBy, fix.PinnedByVersion, fix.Package, fix.Range = path[k], at, path[k+1], spec
			return fix
		}
		at = pick
	}
	// The registry has no release of the package that clears it.
	last := path[len(path)-1]
	fix.PinnedBy, fix.Package = last, last
	return fix
}

// installedPath is the installed version of each package of via's path,
// found by following the tree's edges from the site by name.
func (d *decider) installedPath(via tree.Via) []string {
	out := make([]string, len(via.Path))
	at := tree.Root
	for k, name := range via.Path {
		i := slices.IndexFunc(d.from[at], func(e tree.Edge) bool {
			if k == 0 {
				return e.Name == via.Head
			}
			return d.byID[e.To].Name == name
		})
		if i < 0 {
			break
		}
		at = d.from[at][i].To
		out[k] = d.byID[at].Version
	}
	return out
}

// Need is a package whose document the findings' fixes read, and the
// lowest of its installed versions: the floor below which its releases
// are not kept.
type Need struct {
	Name  string
	Floor string
}

// Needs lists the documents Decide reads for findings on t: the package
// of every finding with a fixed version and every package on the paths
// to it that is installed from a registry (a workspace's own package, a
// git or a file dependency has no document there: its findings stay
// KindUnknown), the most needed first (by the count of findings, then their
// worst severity, then name), so that a cap on the fetches leaves out
// the least needed.
func Needs(t *tree.Tree, findings []Finding) []Need {
	byID := map[string]*tree.Package{}
	floor := map[string]*semver.Version{}
	registry := map[string]bool{}
	for i := range t.Packages {
		p := &t.Packages[i]
		byID[p.ID] = p
		if p.Source != "" && p.Source != tree.SourceRegistry {
			continue // a workspace's, a git or a file package: no registry document is its
		}
		registry[p.Name] = true
		if v, err := npmver.Parse(npmver.Clean(p.Version)); err == nil && (floor[p.Name] == nil || v.LessThan(floor[p.Name])) {
			floor[p.Name] = v
		}
	}
	reach := t.Reach()
	type weight struct{ count, severity int }
	w := map[string]*weight{}
	for _, f := range findings {
		p := byID[f.Instance]
		if p == nil || f.Fixed == "" {
			continue
		}
		names := []string{p.Name}
		if r := reach[p.ID]; r != nil {
			for _, via := range r.Via {
				names = append(names, via.Path...)
			}
		}
		slices.Sort(names)
		for _, name := range slices.Compact(names) {
			if !registry[name] {
				continue
			}
			if w[name] == nil {
				w[name] = &weight{}
			}
			w[name].count++
			w[name].severity = max(w[name].severity, f.Severity)
		}
	}
	out := make([]Need, 0, len(w))
	for name := range w {
		n := Need{Name: name}
		if v := floor[name]; v != nil {
			n.Floor = v.Original()
		}
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b Need) int {
		wa, wb := w[a.Name], w[b.Name]
		return cmp.Or(cmp.Compare(wb.count, wa.count), cmp.Compare(wb.severity, wa.severity), strings.Compare(a.Name, b.Name))
	})
	return out
}
