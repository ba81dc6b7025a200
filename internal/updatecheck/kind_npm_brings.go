// What an offered npm update brings into the site (docs/npm.md "What an
// update brings"): its diff against the installed version, read from the
// package's own document, and the dependencies it adds, read from theirs
// (fetched once per check, at most MaxDependencyDocuments).

package updatecheck

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// DefaultDependencyDocuments is how many added dependencies' documents
// one check fetches at most (UPCHECK_NPM_DEPENDENCY_DOCUMENTS): an added
// dependency past it is said "not read" unless its facts are stored.
const DefaultDependencyDocuments = 200

// dependencyFacts are what a check knows of an added dependency's
// document: its package's first publish time, and, for a package young
// for an offer that adds it, its latest version and its versions' publish
// times (nil otherwise: they are never said of an older one).
type dependencyFacts struct {
	first     time.Time
	published map[string]time.Time
	latest    string
}

// dependencyRead is what a check got of one added dependency: its facts,
// or why it has none (unread).
type dependencyRead struct {
	facts  *dependencyFacts
	unread readmodel.UnreadReason
}

// dependencyDocs are the added dependencies' documents of one check,
// shared by its npm sources: each asked for at most once, at most limit
// fetched in all.
type dependencyDocs struct {
	limit   int
	mu      sync.Mutex
	fetched int
	read    map[string]dependencyRead
	waits   map[string]chan struct{}
	// scopes, when set, take the publish times of the scoped
	// dependencies' documents read (a burst across a scope).
	scopes *scopeLedger
}

func newDependencyDocs(limit int) *dependencyDocs {
	return &dependencyDocs{limit: limit, read: map[string]dependencyRead{}, waits: map[string]chan struct{}{}}
}

// claim takes a fetch of the check's bound; false past it.
func (d *dependencyDocs) claim() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fetched >= d.limit {
		return false
	}
	d.fetched++
	return true
}

// getAll is what the check knows of the documents of the dependencies
// need names (each with the earliest publish time of an offer adding it),
// and the rows to store of those it read: those no source of the check
// asked for yet are looked up in the store; a stored one whose first
// publish time decides (older than readmodel.YoungDependency before every
// offer adding it) is taken as stored, the others are fetched, with the
// stored validators (a 304 costs no decoding), in parallel through c's
// npm client and its fetcher's limits, within the check's bound; those
// another source is asking for are waited for. A fetch that fails, or
// one past the bound, leaves the stored facts (first publish times do
// not change) or, with none, the dependency unread.
func (d *dependencyDocs) getAll(ctx context.Context, c *Checker, need map[string]time.Time) (map[string]dependencyRead, []store.NpmDependency, error) {
	var mine []string
	var others []chan struct{}
	d.mu.Lock()
	for name := range need {
		if wait, ok := d.waits[name]; ok {
			others = append(others, wait)
			continue
		}
		d.waits[name] = make(chan struct{})
		mine = append(mine, name)
	}
	d.mu.Unlock()

	got := make(map[string]dependencyRead, len(mine))
	rows, err := d.readMine(ctx, c, mine, need, got)
	d.mu.Lock()
	for _, name := range mine {
		r, ok := got[name]
		if !ok {
			r = dependencyRead{unread: readmodel.UnreadFailed}
		}
		d.read[name] = r
		close(d.waits[name])
	}
	d.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	for _, wait := range others {
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, nil, context.Cause(ctx)
		}
	}
	out := make(map[string]dependencyRead, len(need))
	d.mu.Lock()
	defer d.mu.Unlock()
	for name := range need {
		out[name] = d.read[name]
	}
	return out, rows, nil
}

// readMine reads the dependencies names (getAll) into got and returns
// the rows to store.
func (d *dependencyDocs) readMine(ctx context.Context, c *Checker, names []string, need map[string]time.Time, got map[string]dependencyRead) ([]store.NpmDependency, error) {
	byRegistry := map[string][]string{}
	registryOf := map[string]string{}
	for _, name := range names {
		reg, err := c.npm.Registries.For(npm.Name(name))
		if err != nil {
			got[name] = dependencyRead{unread: readmodel.UnreadFailed}
			continue
		}
		registryOf[name] = reg.String()
		byRegistry[reg.String()] = append(byRegistry[reg.String()], name)
	}
	stored := map[string]store.NpmDependency{}
	for reg, regNames := range byRegistry {
		rows, err := c.store.NpmDependencies(ctx, reg, regNames)
		if err != nil {
			return nil, err
		}
		maps.Copy(stored, rows)
	}
	// Those never read claim the bound before those read already, asked
	// again only to take their newer versions: a dependency is read by a
	// later check even when young ones asked again fill each check's.
	var first, again []string
	for name := range registryOf {
		s, ok := stored[name]
		switch {
		case ok && s.FirstPublished != nil && need[name].Sub(*s.FirstPublished) >= readmodel.YoungDependency:
			got[name] = dependencyRead{facts: factsOf(s)}
		case ok:
			again = append(again, name)
		default:
			first = append(first, name)
		}
	}
	var reqs []fetch.Request
	var prs []*npm.PackageRequest
	var at []string
	for _, name := range append(first, again...) {
		s, ok := stored[name]
		if !d.claim() {
			if ok {
				got[name] = dependencyRead{facts: factsOf(s)}
			} else {
				got[name] = dependencyRead{unread: readmodel.UnreadPastBound}
			}
			continue
		}
		pr, err := c.npm.PackageRequest(npm.Name(name), s.ETag, s.LastModified)
		if err != nil {
			got[name] = dependencyRead{unread: readmodel.UnreadFailed}
			continue
		}
		reqs, prs, at = append(reqs, pr.Request), append(prs, pr), append(at, name)
	}
	return d.fetchDependencies(ctx, c, reqs, prs, at, stored, registryOf, need, got)
}

// fetchDependencies fetches the dependencies' documents of reqs (prs and
// at, the request and the name of each), each read into got: its times,
// the stored facts on a 304 or a failure, or unread. It returns the rows
// to store of those fetched whole.
func (d *dependencyDocs) fetchDependencies(ctx context.Context, c *Checker, reqs []fetch.Request, prs []*npm.PackageRequest, at []string,
	stored map[string]store.NpmDependency, registryOf map[string]string, need map[string]time.Time,
	got map[string]dependencyRead) ([]store.NpmDependency, error) {
	var mu sync.Mutex
	var rows []store.NpmDependency
	err := c.npm.Fetcher.Run(ctx, reqs, func(ctx context.Context, k int, resp fetch.Response, err error) {
		name := at[k]
		fetched, err := prs[k].Times(resp, err)
		s, wasStored := stored[name]
		var r dependencyRead
		switch {
		case err != nil:
			if ctx.Err() == nil {
				c.logger.WarnContext(ctx, "an added dependency's document was not read", "package", name, "error", err)
			}
			r.unread = readmodel.UnreadFailed
			if wasStored {
				r = dependencyRead{facts: factsOf(s)}
			}
		case fetched.Times == nil && wasStored: // 304
			r.facts = factsOf(s)
			d.scopes.read(registryOf[name], name, s.Published)
		case fetched.Times == nil:
			r.unread = readmodel.UnreadFailed
		default:
			d.scopes.read(registryOf[name], name, fetched.Times.Published)
			row := rowOf(registryOf[name], fetched, need[name])
			r.facts = factsOf(row)
			mu.Lock()
			rows = append(rows, row)
			mu.Unlock()
		}
		mu.Lock()
		got[name] = r
		mu.Unlock()
	})
	if err != nil || ctx.Err() != nil {
		return nil, errors.Join(err, context.Cause(ctx))
	}
	return rows, nil
}

// rowOf is what is stored of a dependency's document read for an offer
// published at release: its versions' publish times only when the
// package is young for it (they are never said of an older one), so that
// memory and the row follow the young packages' few versions, not a
// popular package's thousands.
func rowOf(registry string, f npm.FetchedTimes, release time.Time) store.NpmDependency {
	t := f.Times
	row := store.NpmDependency{Registry: registry, Name: t.Name, ETag: f.Response.ETag, LastModified: f.Response.LastModified,
		Latest: t.Latest, Published: map[string]time.Time{}}
	if !t.Created.IsZero() {
		created := t.Created
		row.FirstPublished = &created
		if release.Sub(created) < readmodel.YoungDependency {
			row.Published = t.Published
		}
	}
	return row
}

// factsOf are the facts of a stored dependency.
func factsOf(s store.NpmDependency) *dependencyFacts {
	f := &dependencyFacts{latest: s.Latest, published: s.Published}
	if s.FirstPublished != nil {
		f.first = *s.FirstPublished
	}
	return f
}

// storedDependencies are the stored facts of every registry dependency
// the kept manifests of pkg (read from registry) declare, for a result
// evaluated without a check: a dependency none are stored of is said not
// read.
func (w *writer) storedDependencies(ctx context.Context, registry string, pkg *npm.Package) (map[string]dependencyRead, error) {
	seen := map[string]bool{}
	var names []string
	for _, v := range pkg.Versions {
		for name, spec := range v.Dependencies {
			if !seen[name] && npm.SourceOf(spec) == "" {
				seen[name] = true
				names = append(names, name)
			}
		}
		for name, spec := range v.PeerDependencies {
			if v.Kept && !seen[name] && npm.SourceOf(spec) == "" {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	rows, err := w.store.NpmDependencies(ctx, registry, names)
	if err != nil {
		return nil, err
	}
	out := make(map[string]dependencyRead, len(rows))
	for name, row := range rows {
		out[name] = dependencyRead{facts: factsOf(row)}
	}
	return out, nil
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

// readDependencies reads, for every result of p whose offer adds
// registry dependencies and has a publish time (a young dependency is
// said against it), what the check knows of their documents (getAll:
// stored, or fetched once per check) into p's npmDoc, with the rows to
// store in p, and reports whether any was added (p is then to be
// evaluated again); false ok when the check was cancelled.
func (c *Checker) readDependencies(ctx context.Context, p pending, deps *dependencyDocs) (pending, bool, bool) {
	if p.doc == nil || p.doc.npm == nil || deps == nil || c.npm == nil {
		return p, false, true
	}
	n := p.doc.npm
	installed := map[string]string{}
	for _, in := range p.job.inputs() {
		installed[in.Code] = in.InstalledVersion
	}
	need := map[string]time.Time{}
	for _, r := range p.results {
		released, timed := n.pkg.Published[r.UpdateVersion]
		if r.UpdateVersion == "" || !timed {
			continue
		}
		for _, d := range addedDependencies(n.pkg, installed[r.Code], r.UpdateVersion) {
			if t, ok := need[d.Name]; !ok || released.Before(t) {
				need[d.Name] = released
			}
		}
	}
	if len(need) == 0 {
		return p, false, true
	}
	read, rows, err := deps.getAll(ctx, c, need)
	if ctx.Err() != nil {
		return p, false, false
	}
	if err != nil {
		c.logger.WarnContext(ctx, "the added dependencies' stored facts were not read", "url", p.job.url, "error", err)
	}
	doc := *p.doc
	nd := *n
	nd.deps = read
	doc.npm = &nd
	p.doc = &doc
	p.dependencies = rows
	return p, true, true
}
