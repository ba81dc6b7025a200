package updatecheck

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/npmver"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// What a lockfile change brought (docs/npm.md "What a lockfile change
// brought"): every version a lockfile sync installed (tree_brings, written
// pending by the sync) is read by the next check, after its sources,
// under its lease: its package's document, fetched whole through the npm
// client's guarded fetcher (at most ChangeDocuments packages a check),
// gives the diff of the version it replaced against it, worded as an
// offer's (diffSignals), its added dependencies read through the check's
// dependency documents (the offers', once per check, within their
// bound); a package newly brought in is read for its own install
// scripts, exotic sources, trust and age.

// DefaultChangeDocuments is how many changed packages' own documents one
// check fetches at most (UPCHECK_NPM_CHANGE_DOCUMENTS): a change past it
// is said not read, and a later check reads it.
const DefaultChangeDocuments = 100

// LimitChangeDocuments makes each check fetch at most n changed packages'
// documents (UPCHECK_NPM_CHANGE_DOCUMENTS; 0: none, every change is then
// said not read); DefaultChangeDocuments otherwise. Call it before the
// first check.
func (c *Checker) LimitChangeDocuments(n int) { c.changeLimit = &n }

func (c *Checker) changeDocuments() int {
	if c.changeLimit == nil {
		return DefaultChangeDocuments
	}
	return *c.changeLimit
}

// dependencyDocsKey carries a check's dependency documents (checkDeps).
type dependencyDocsKey struct{}

// withDependencyDocs is ctx carrying d: the offers and the lockfile
// changes of one check share it.
func withDependencyDocs(ctx context.Context, d *dependencyDocs) context.Context {
	return context.WithValue(ctx, dependencyDocsKey{}, d)
}

// checkDeps is the dependency documents of ctx's check, or new ones
// within c's bound.
func checkDeps(ctx context.Context, c *Checker) *dependencyDocs {
	if d, ok := ctx.Value(dependencyDocsKey{}).(*dependencyDocs); ok {
		return d
	}
	return newDependencyDocs(c.dependencyDocuments())
}

// treeBrings reads what the due lockfile changes brought and writes it,
// with their signals' notifications, fenced under l. No npm client, or
// no change due: nothing.
func (c *Checker) treeBrings(ctx context.Context, l lease.Lease) error {
	if c.npm == nil {
		return nil
	}
	due, err := c.store.TreeBringsDue(ctx)
	if err != nil || len(due) == 0 {
		return err
	}
	byName := map[string][]store.TreeChange{}
	var names []string
	for _, ch := range due {
		if _, ok := byName[ch.Name]; !ok {
			names = append(names, ch.Name)
		}
		byName[ch.Name] = append(byName[ch.Name], ch)
	}
	limit := c.changeDocuments()
	var out []store.TreeBrings
	unread := func(name string, why readmodel.UnreadReason) {
		for _, ch := range byName[name] {
			out = append(out, store.TreeBrings{IntervalID: ch.IntervalID, State: readmodel.ChangeUnread, Unread: why})
		}
	}
	if len(names) > limit {
		c.logger.WarnContext(ctx, "lockfile changes: documents past the bound are not fetched", "packages", len(names), "bound", limit)
		for _, name := range names[limit:] {
			unread(name, readmodel.UnreadPastBound)
		}
		names = names[:limit]
	}
	docs, err := c.changeDocumentsFetch(ctx, names, byName)
	if err != nil {
		return err
	}
	read := map[string]*npmDoc{}
	for _, name := range names {
		if pkg := docs[name]; pkg != nil {
			read[name] = &npmDoc{pkg: pkg}
		} else {
			unread(name, readmodel.UnreadFailed)
		}
	}
	deps, rows, err := c.changeDependencies(ctx, read, byName)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(read)) {
		n := read[name]
		n.deps = deps
		for _, ch := range byName[name] {
			out = append(out, changeBrings(n, ch))
		}
	}
	if len(out) == 0 {
		return nil
	}
	err = c.lease.WithLease(ctx, l.Owner, func(tx *store.Tx) error {
		if len(rows) > 0 {
			if err := tx.NpmDependencySave(ctx, rows, l.Epoch); err != nil {
				return err
			}
		}
		ids, err := tx.TreeBringsSave(ctx, out, l.Epoch)
		if err != nil || c.notifier == nil || len(ids) == 0 {
			return err
		}
		return c.notifier.QueueTreeBrings(ctx, tx, ids, l.Epoch)
	})
	if err != nil {
		return err
	}
	c.reads.Changed()
	return nil
}

// comparedOf is the version a change is diffed against: of the versions
// of its package the same sync removed, the newest one below it in its
// major line, else the newest below it, else the oldest (a downgrade);
// "" when none was removed (a package newly brought in).
func comparedOf(ch store.TreeChange) string {
	v, err := npmver.Parse(ch.Version)
	if err != nil || len(ch.Previous) == 0 {
		if len(ch.Previous) > 0 {
			return ch.Previous[len(ch.Previous)-1]
		}
		return ""
	}
	prev := slices.Clone(ch.Previous)
	slices.SortFunc(prev, npmver.Compare)
	best := ""
	for _, p := range prev {
		pv, err := npmver.Parse(p)
		if err != nil || !pv.LessThan(v) {
			continue
		}
		if best == "" || pv.Major() == v.Major() {
			best = p
		}
	}
	if best == "" {
		best = prev[0]
	}
	return best
}

// changeDocumentsFetch fetches, whole, the documents of names, keeping the
// manifests of the versions their changes name (the new ones and those
// compared with); a document that cannot be read is left out, and
// logged; a cancelled ctx is an error.
func (c *Checker) changeDocumentsFetch(ctx context.Context, names []string, byName map[string][]store.TreeChange) (map[string]*npm.Package, error) {
	var reqs []fetch.Request
	var prs []*npm.PackageRequest
	var at []string
	for _, name := range names {
		pr, err := c.npm.PackageRequest(npm.Name(name), "", "")
		if err != nil {
			c.logger.WarnContext(ctx, "lockfile changes: no registry for a package", "package", name, "error", err)
			continue
		}
		keep := map[string]bool{}
		for _, ch := range byName[name] {
			keep[ch.Version] = true
			if v := comparedOf(ch); v != "" {
				keep[v] = true
			}
		}
		pr.Keep = func(version string) bool { return keep[version] }
		reqs, prs, at = append(reqs, pr.Request), append(prs, pr), append(at, name)
	}
	var mu sync.Mutex
	docs := map[string]*npm.Package{}
	runErr := c.npm.Fetcher.Run(ctx, reqs, func(ctx context.Context, k int, resp fetch.Response, err error) {
		got, err := prs[k].Result(resp, err)
		if err != nil || got.Package == nil {
			if !fetch.IsCancelled(ctx, err) {
				c.logger.WarnContext(ctx, "lockfile changes: a document was not read", "package", at[k], "error", err)
			}
			return
		}
		mu.Lock()
		defer mu.Unlock()
		docs[at[k]] = got.Package
	})
	if runErr != nil || ctx.Err() != nil {
		return nil, errors.Join(runErr, context.Cause(ctx))
	}
	return docs, nil
}

// changeDependencies reads, through the check's dependency documents, the
// registry dependencies each changed version adds over the one it is
// compared with (each with the earliest publish time of a version adding
// it), and returns what the check knows of them and the rows to store.
func (c *Checker) changeDependencies(ctx context.Context, read map[string]*npmDoc, byName map[string][]store.TreeChange) (map[string]dependencyRead, []store.NpmDependency, error) {
	need := map[string]time.Time{}
	for name, n := range read {
		for _, ch := range byName[name] {
			compared := comparedOf(ch)
			released, timed := n.pkg.Published[ch.Version]
			if compared == "" || !timed {
				continue
			}
			for _, d := range addedDependencies(n.pkg, compared, ch.Version) {
				if t, ok := need[d.Name]; !ok || released.Before(t) {
					need[d.Name] = released
				}
			}
		}
	}
	if len(need) == 0 {
		return nil, nil, nil
	}
	deps, rows, err := checkDeps(ctx, c).getAll(ctx, c, need)
	if ctx.Err() != nil {
		return nil, nil, context.Cause(ctx)
	}
	if err != nil {
		c.logger.WarnContext(ctx, "lockfile changes: the added dependencies' stored facts were not read", "error", err)
	}
	return deps, rows, nil
}

// changeBrings is what the change ch brought, read from n: the diff of
// the version it replaced against it, worded as an offer's; or, for a
// package newly brought in (or one whose earlier version's manifest is
// not in its document), what its own manifest brings (its install
// scripts, exotic sources, trust, a burst) and its package's age when the
// lockfile with it was read.
func changeBrings(n *npmDoc, ch store.TreeChange) store.TreeBrings {
	out := store.TreeBrings{IntervalID: ch.IntervalID, State: readmodel.ChangeRead, Signals: []readmodel.Signal{},
		UnreadDependencies: []readmodel.UnreadDependency{}}
	compared := comparedOf(ch)
	if v, ok := n.pkg.Versions[ch.Version]; !ok || !v.Kept {
		// The registry does not have the version the lockfile installed.
		out.State, out.Unread = readmodel.ChangeUnread, readmodel.UnreadFailed
		return out
	}
	if b, ok := npm.Diff(n.pkg, compared, ch.Version); ok && compared != "" {
		out.Compared = compared
		// The repository a provenance names is not compared for a change
		// (its attestation bundle is not fetched): provenanceUnread left.
		out.Signals, out.UnreadDependencies, _ = diffSignals(n, b, compared, ch.Version)
		// An offer's provenance lost is provenance_lost's to say, which a
		// lockfile change has not: said here.
		lower := func(s readmodel.Signal) bool { return s.Kind == readmodel.SignalTrustLower }
		if b.TrustInstalled == npm.TrustProvenance && b.Trust == npm.TrustNone && !slices.ContainsFunc(out.Signals, lower) {
			out.Signals = append(out.Signals, readmodel.Signal{Kind: readmodel.SignalTrustLower, Args: readmodel.SignalArgs{
				Version: ch.Version, Trust: b.Trust.String(), Was: b.TrustInstalled.String(), Compared: compared}})
			readmodel.SortSignals(out.Signals)
		}
	} else {
		out.Signals = newPackageSignals(n, ch)
	}
	if out.Signals == nil {
		out.Signals = []readmodel.Signal{}
	}
	if out.UnreadDependencies == nil {
		out.UnreadDependencies = []readmodel.UnreadDependency{}
	}
	return out
}

// newPackageSignals are the signals of a package newly brought in: the
// diff of its version against an empty manifest, its dependencies left
// out (each one the tree installs newly is a change of its own), and a
// young_dependency of itself when its package was first published less
// than readmodel.YoungDependency before the lockfile with it was read.
func newPackageSignals(n *npmDoc, ch store.TreeChange) []readmodel.Signal {
	pkg := *n.pkg
	pkg.Versions = maps.Clone(n.pkg.Versions)
	pkg.Versions[""] = npm.Version{Kept: true} // nothing installed before
	b, ok := npm.Diff(&pkg, "", ch.Version)
	if !ok {
		return nil
	}
	b.Added = nil
	signals, _, _ := diffSignals(&npmDoc{pkg: &pkg}, b, "", ch.Version)
	var first time.Time
	for _, t := range n.pkg.Published {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	if !first.IsZero() && ch.InstalledAt.Sub(first) < readmodel.YoungDependency {
		installed := ch.InstalledAt
		a := readmodel.SignalArgs{Version: ch.Version, Name: n.pkg.Name, DependencyVersion: ch.Version, FirstPublished: &first,
			Installed: &installed}
		if t, ok := n.pkg.Published[ch.Version]; ok {
			a.Published = &t
		}
		signals = append(signals, readmodel.Signal{Kind: readmodel.SignalYoungDependency, Args: a})
		readmodel.SortSignals(signals)
	}
	return signals
}
