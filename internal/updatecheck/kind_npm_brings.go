// What an offered npm update brings into the site (docs/npm.md "What an
// update brings"): its diff against the installed version, read from the
// package's own document, and the dependencies it adds, read from theirs
// (fetched once per check, at most MaxDependencyDocuments).

package updatecheck

import (
	"context"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/npmver"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
)

// MaxDependencyDocuments caps the documents of added dependencies one
// check fetches: an added dependency past the cap raises no
// young_dependency signal until a check that reads it.
const MaxDependencyDocuments = 200

// dependencyFacts are what a check keeps of an added dependency's
// document: its first publish time and its versions' publish times.
type dependencyFacts struct {
	first     time.Time
	published map[string]time.Time
	latest    string
}

// dependencyDocs are the added dependencies' documents of one check,
// shared by its npm sources: each fetched once (nil: not read).
type dependencyDocs struct {
	mu      sync.Mutex
	fetched map[string]*dependencyFacts
	waits   map[string]chan struct{}
}

func newDependencyDocs() *dependencyDocs {
	return &dependencyDocs{fetched: map[string]*dependencyFacts{}, waits: map[string]chan struct{}{}}
}

// getAll is the facts of the documents of names (nil for one that
// cannot be read or is past the cap): those no source of the check asked
// for yet are fetched at once, in parallel through c's npm client and its
// fetcher's limits; those another source is fetching are waited for.
func (d *dependencyDocs) getAll(ctx context.Context, c *Checker, names []string) map[string]*dependencyFacts {
	var mine []string
	var others []chan struct{}
	d.mu.Lock()
	for _, name := range names {
		if wait, ok := d.waits[name]; ok {
			others = append(others, wait)
			continue
		}
		if len(d.waits) >= MaxDependencyDocuments {
			continue
		}
		d.waits[name] = make(chan struct{})
		mine = append(mine, name)
	}
	d.mu.Unlock()

	got := make([]*dependencyFacts, len(mine))
	var reqs []fetch.Request
	var prs []*npm.PackageRequest
	var at []int
	for i, name := range mine {
		pr, err := c.npm.PackageRequest(npm.Name(name), "", "")
		if err != nil {
			continue
		}
		reqs, prs, at = append(reqs, pr.Request), append(prs, pr), append(at, i)
	}
	_ = c.npm.Fetcher.Run(ctx, reqs, func(ctx context.Context, k int, resp fetch.Response, err error) {
		fetched, err := prs[k].Result(resp, err)
		if err != nil || fetched.Package == nil {
			if err != nil && ctx.Err() == nil {
				c.logger.WarnContext(ctx, "an added dependency's document was not read", "package", mine[at[k]], "error", err)
			}
			return
		}
		facts := &dependencyFacts{published: fetched.Package.Published, latest: fetched.Package.DistTags["latest"]}
		for _, t := range fetched.Package.Published {
			if facts.first.IsZero() || t.Before(facts.first) {
				facts.first = t
			}
		}
		got[at[k]] = facts
	})
	d.mu.Lock()
	for i, name := range mine {
		d.fetched[name] = got[i]
		close(d.waits[name])
	}
	d.mu.Unlock()
	for _, wait := range others {
		select {
		case <-wait:
		case <-ctx.Done():
			return nil
		}
	}
	out := make(map[string]*dependencyFacts, len(names))
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, name := range names {
		out[name] = d.fetched[name]
	}
	return out
}

// addedDependencies are the registry dependencies that offered adds over
// installed in pkg (none when either manifest was not kept).
func addedDependencies(pkg *npm.Package, installed, offered string) []npm.Declared {
	b, ok := npm.Diff(pkg, installed, offered)
	if !ok {
		return nil
	}
	var out []npm.Declared
	for _, d := range b.Added {
		if npm.SourceOf(d.Spec) == "" {
			out = append(out, d)
		}
	}
	return out
}

// readDependencies fetches, for every result of p whose offer adds
// registry dependencies, their documents (once per check) into p's
// npmDoc, and evaluates p again when any was read; false when the check
// was cancelled.
func (c *Checker) readDependencies(ctx context.Context, p pending, deps *dependencyDocs, epoch int64) (pending, bool) {
	if p.doc == nil || p.doc.npm == nil || deps == nil || c.npm == nil {
		return p, true
	}
	n := p.doc.npm
	installed := map[string]string{}
	for _, in := range p.job.inputs() {
		installed[in.Code] = in.InstalledVersion
	}
	seen := map[string]bool{}
	var names []string
	for _, r := range p.results {
		if r.UpdateVersion == "" {
			continue
		}
		for _, d := range addedDependencies(n.pkg, installed[r.Code], r.UpdateVersion) {
			if !seen[d.Name] {
				seen[d.Name] = true
				names = append(names, d.Name)
			}
		}
	}
	if len(names) == 0 {
		return p, true
	}
	read := deps.getAll(ctx, c, names)
	if ctx.Err() != nil {
		return p, false
	}
	doc := *p.doc
	nd := *n
	nd.deps = read
	doc.npm = &nd
	p.doc = &doc
	return evaluated(p, epoch), true
}

// bringsSignals are the signals of what offered brings over installed
// (readmodel.SignalKind), most pressing first; none when either manifest
// was not kept.
func bringsSignals(n *npmDoc, installed, offered string) []readmodel.Signal {
	b, ok := npm.Diff(n.pkg, installed, offered)
	if !ok {
		return nil
	}
	var out []readmodel.Signal
	add := func(k readmodel.SignalKind, a readmodel.SignalArgs) {
		a.Version = offered
		out = append(out, readmodel.Signal{Kind: k, Args: a})
	}
	for _, s := range b.Scripts {
		add(readmodel.SignalInstallScript, readmodel.SignalArgs{Name: s.Name, Text: s.New.Text, Cut: s.New.Cut,
			SHA256: s.New.SHA256, Added: s.Added})
	}
	if b.InstallScriptFlag && len(b.Scripts) == 0 {
		add(readmodel.SignalInstallScript, readmodel.SignalArgs{Added: true})
	}
	for _, e := range b.Exotic {
		add(readmodel.SignalExoticSource, readmodel.SignalArgs{Name: e.Name, Section: e.Section, Spec: e.Spec, Source: e.Source})
	}
	// Below the installed version's rank; provenance lost against it is
	// already said (provenance_lost), so only a fall from trusted
	// publishing is said here. Below the line's rank: whatever fell.
	switch {
	case b.Trust < b.TrustInstalled && !(b.TrustInstalled == npm.TrustProvenance && b.Trust == npm.TrustNone):
		add(readmodel.SignalTrustLower, readmodel.SignalArgs{Trust: b.Trust.String(), Was: b.TrustInstalled.String(), Compared: installed})
	case b.Line != "" && b.Line != installed && b.Trust < b.LineTrust:
		add(readmodel.SignalTrustLower, readmodel.SignalArgs{Trust: b.Trust.String(), Was: b.LineTrust.String(), Compared: b.Line})
	}
	released, timed := n.pkg.Published[offered]
	for _, d := range b.Added {
		facts := n.deps[d.Name]
		if facts == nil || facts.first.IsZero() || !timed || npm.SourceOf(d.Spec) != "" {
			continue
		}
		if released.Sub(facts.first) >= readmodel.YoungDependency {
			continue
		}
		a := readmodel.SignalArgs{Name: d.Name, Section: d.Section, Spec: d.Spec, FirstPublished: &facts.first, Released: &released}
		if v := facts.pick(d.Spec); v != "" {
			a.DependencyVersion = v
			if t, ok := facts.published[v]; ok {
				a.Published = &t
			}
		}
		add(readmodel.SignalYoungDependency, a)
	}
	if b.Burst > npm.BurstVersions {
		add(readmodel.SignalBurst, readmodel.SignalArgs{Count: b.Burst, Window: int(npm.BurstWindow / time.Minute)})
	}
	readmodel.SortSignals(out)
	return out
}

// pick is the version of the dependency that spec takes: the newest one
// in its range, not newer than latest (npm's choice); "" when none is or
// the range does not read.
func (f *dependencyFacts) pick(spec string) string {
	rng, err := release.ParseRange(spec)
	if err != nil {
		return ""
	}
	ceiling, _ := npmver.Parse(f.latest)
	var best *semver.Version
	text := ""
	for v := range f.published {
		p, err := npmver.Parse(v)
		if err != nil || p.Prerelease() != "" || !rng.Contains(p) || (ceiling != nil && p.GreaterThan(ceiling)) {
			continue
		}
		if best == nil || p.GreaterThan(best) {
			best, text = p, v
		}
	}
	return text
}
