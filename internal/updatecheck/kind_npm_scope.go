// A burst across a scope (docs/npm.md "What an update brings"): more
// than npm.BurstVersions versions of a scope's packages published within
// one npm.BurstWindow holding an offered version's publish time, more
// versions than packages (some package published twice or more: a
// monorepo's ordinary release publishes one version of each of its
// packages, however many; the TanStack releases, 84 versions of 42
// packages), counted across the scope's package documents the check read
// (its npm sources' and the added dependencies' fetched), decided once
// every source was read (scopeBurstStep), so that no source's signals
// depend on the order in which the documents came.

package updatecheck

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/store"
)

// scopeOf is the scope of a package name ("@acme" of "@acme/blog"), ""
// for an unscoped one.
func scopeOf(name string) string {
	if !strings.HasPrefix(name, "@") {
		return ""
	}
	scope, _, ok := strings.Cut(name, "/")
	if !ok {
		return ""
	}
	return scope
}

// scopeBurst is a burst across a scope stored for one version: Count
// versions of Scope's packages.
type scopeBurst struct {
	scope string
	count int
}

// scopeAsk is a version of a scoped package whose signals a source's
// evaluation said: the component that said them, the version's publish
// time, its package's own burst and the burst across its scope its
// evaluation used (stored by an earlier check; 0 none).
type scopeAsk struct {
	registry, name, version string
	published               time.Time
	own, used               int
	component               store.Unevaluated
}

// scopeLedger is one check's reading of its scoped packages' publish
// times (by registry and scope, then package: a package read twice, as a
// component and as a dependency, counts once), the versions whose
// signals its sources said (asks), and the bursts across a scope stored
// before it (stored: registry, package, version).
type scopeLedger struct {
	mu     sync.Mutex
	times  map[string]map[string][]time.Time
	asks   []scopeAsk
	stored map[string]map[string]map[string]store.NpmScopeBurst
}

func newScopeLedger(stored map[string]map[string]map[string]store.NpmScopeBurst) *scopeLedger {
	return &scopeLedger{times: map[string]map[string][]time.Time{}, stored: stored}
}

// read records the publish times of name's versions read from registry;
// an unscoped name is passed over.
func (l *scopeLedger) read(registry, name string, published map[string]time.Time) {
	scope := scopeOf(name)
	if l == nil || scope == "" || len(published) == 0 {
		return
	}
	times := slices.Collect(maps.Values(published))
	l.mu.Lock()
	defer l.mu.Unlock()
	key := registry + " " + scope
	if l.times[key] == nil {
		l.times[key] = map[string][]time.Time{}
	}
	// A dependency's stored facts may hold fewer versions than its
	// document: the most read is kept.
	if len(times) > len(l.times[key][name]) {
		l.times[key][name] = times
	}
}

// storedScopeBursts are the bursts across a scope stored of name's versions from
// registry, by version; nil none.
func storedScopeBursts(stored map[string]map[string]map[string]store.NpmScopeBurst, registry, name string) map[string]scopeBurst {
	rows := stored[registry][name]
	if len(rows) == 0 {
		return nil
	}
	out := make(map[string]scopeBurst, len(rows))
	for v, b := range rows {
		out[v] = scopeBurst{scope: b.Scope, count: b.Count}
	}
	return out
}

// prepared records what a source's preparation read and said: its
// package's times (n) and, of its results, the versions of a scoped
// package whose signals were said (signalVersions), with the component
// each is of, from j.
func (l *scopeLedger) prepared(j job, n *npmDoc, results []store.Result) {
	if l == nil || n == nil || scopeOf(n.pkg.Name) == "" {
		return
	}
	l.read(n.registry, n.pkg.Name, n.pkg.Published)
	comps := map[store.ComponentKey]store.Component{}
	for _, c := range j.components {
		comps[c.Key()] = c
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range results {
		c, ok := comps[r.Key()]
		if !ok {
			continue
		}
		for _, v := range signalVersions(r) {
			at, timed := n.pkg.Published[v]
			if !timed {
				continue
			}
			l.asks = append(l.asks, scopeAsk{registry: n.registry, name: n.pkg.Name, version: v, published: at,
				own: burstOf(n.pkg, at), used: n.scopeBursts[v].count,
				component: store.Unevaluated{Site: c.Site, Code: c.Code, InstalledVersion: c.InstalledVersion, SourceURL: j.url, PinnedKey: c.PinnedKey,
					Package: c.Package, Policy: c.Policy, Skipped: j.skips[c.Key()], Approvals: j.approvals[c.Key()]}})
		}
	}
}

// burstOf is the package's own burst at at.
func burstOf(pkg *npm.Package, at time.Time) int {
	times := make([]time.Time, 0, len(pkg.Published))
	for _, t := range pkg.Published {
		times = append(times, t)
	}
	return npm.BurstAt(times, at)
}

// decide is, once every source was read, the bursts across a scope of
// the versions asked that are more than npm.BurstVersions, more than of
// the package alone, and more than its evaluation used, and the
// components to evaluate again for them.
func (l *scopeLedger) decide() ([]store.NpmScopeBurst, []store.Unevaluated) {
	if l == nil {
		return nil, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	merged := map[string][]stamp{}
	var bursts []store.NpmScopeBurst
	var todo []store.Unevaluated
	saved, again := map[[3]string]bool{}, map[string]bool{}
	for _, a := range l.asks {
		key := a.registry + " " + scopeOf(a.name)
		stamps, ok := merged[key]
		if !ok {
			for name, pkg := range l.times[key] {
				for _, t := range pkg {
					stamps = append(stamps, stamp{at: t, pkg: name})
				}
			}
			slices.SortFunc(stamps, func(a, b stamp) int { return a.at.Compare(b.at) })
			merged[key] = stamps
		}
		n := scopeBurstAt(stamps, a.published)
		if n <= npm.BurstVersions || n <= a.own || n <= a.used {
			continue
		}
		if id := [3]string{a.registry, a.name, a.version}; !saved[id] {
			saved[id] = true
			bursts = append(bursts, store.NpmScopeBurst{Registry: a.registry, Name: a.name, Version: a.version, Scope: scopeOf(a.name), Count: n})
		}
		if !again[a.component.Code] {
			again[a.component.Code] = true
			todo = append(todo, a.component)
		}
	}
	return bursts, todo
}

// scopeLedgerOf is the check's ledger, shared by its npm jobs; nil when
// it has none.
func scopeLedgerOf(jobs []job) *scopeLedger {
	for i := range jobs {
		if n, ok := jobs[i].state.(*npmJob); ok && n.scopes != nil {
			return n.scopes
		}
	}
	return nil
}

// scopeBurstStep stores the bursts across a scope the check saw, once
// every source was read and written, and evaluates again, from their
// stored documents, the components whose signals they change, writing
// their results fenced by l (their notifications queued with them).
func (c *Checker) scopeBurstStep(ctx context.Context, l lease.Lease, jobs []job) error {
	bursts, todo := scopeLedgerOf(jobs).decide()
	if len(bursts) == 0 {
		return nil
	}
	err := c.lease.WithLease(ctx, l.Owner, func(tx *store.Tx) error {
		return tx.NpmScopeBurstSave(ctx, bursts, l.Epoch)
	})
	if err != nil {
		return err
	}
	// Ordered by source, as evaluateFromStored reads them.
	byURL := map[string][]store.Unevaluated{}
	var urls []string
	for _, u := range todo {
		if _, ok := byURL[u.SourceURL]; !ok {
			urls = append(urls, u.SourceURL)
		}
		byURL[u.SourceURL] = append(byURL[u.SourceURL], u)
	}
	todo = todo[:0]
	for _, u := range urls {
		todo = append(todo, byURL[u]...)
	}
	_, err = feedHost{w: c.writer}.Reevaluate(ctx, l, todo)
	return err
}

// stamp is one version's publish time, of the package pkg.
type stamp struct {
	at  time.Time
	pkg string
}

// scopeBurstAt is the most of stamps (sorted by time) within one
// npm.BurstWindow holding at, among the windows that hold more versions
// than packages; 0 when none does. Only the stamps within a window of at
// are looked at.
func scopeBurstAt(stamps []stamp, at time.Time) int {
	byTime := func(s stamp, t time.Time) int { return s.at.Compare(t) }
	lo, _ := slices.BinarySearchFunc(stamps, at.Add(-npm.BurstWindow), byTime)
	hi, _ := slices.BinarySearchFunc(stamps, at.Add(npm.BurstWindow), byTime)
	near := stamps[lo:hi]
	most := 0
	for i, start := range near {
		if start.at.After(at) {
			break
		}
		if start.at.Add(npm.BurstWindow).Before(at) {
			continue
		}
		packages := map[string]bool{}
		n := 0
		for _, s := range near[i:] {
			if s.at.Sub(start.at) >= npm.BurstWindow {
				break
			}
			n++
			packages[s.pkg] = true
		}
		if n > len(packages) && n > most {
			most = n
		}
	}
	return most
}
