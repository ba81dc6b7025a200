package updatecheck

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/npmver"
	"github.com/upcheck/upcheck/internal/remedy"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/tree"
)

// MaxFixDocuments caps the registry documents one check fetches to decide
// what clears the tree's findings (docs/npm.md, "What clears a finding"):
// first those never read (or read from a higher release than now
// needed), the packages the most findings need first (remedy.Needs),
// then those read longest ago. A package past the cap is decided from its
// stored document when one covers it, as last read; without one its
// findings stay undecided (remedy.KindUnknown) until a later check reads
// it: a fleet whose findings need N documents has read them all within
// N / MaxFixDocuments checks.
const MaxFixDocuments = 100

// siteFixes is one site's part of the fix step: its tree (read at
// treeHash; nil: no guard), the client its lockfile is for, and the
// findings to decide.
type siteFixes struct {
	site     int64
	treeHash []byte
	tree     *tree.Tree
	manager  remedy.Manager
	findings []remedy.Finding
}

// treeFixes is the fix step of one tree, the local site's (fleetFixes of
// it alone).
func (w *writer) treeFixes(ctx context.Context, l lease.Lease, t *tree.Tree, manager remedy.Manager, findings []remedy.Finding) ([]remedy.Decided, error) {
	decided, err := w.fleetFixes(ctx, l, []siteFixes{{site: store.LocalSite, tree: t, manager: manager, findings: findings}})
	if err != nil {
		return nil, err
	}
	return decided[0], nil
}

// fleetFixes is the fix step of a check over the sites' trees: for the
// findings on each site's tree (whose lockfile manager's client words the
// in-range updates), it fetches the documents of the packages on their
// paths (remedy.Needs), each once however many sites need it (at the
// lowest floor any needs, the most needed first: by how many sites, then
// by rank in a site's; at most MaxFixDocuments), but the components' own,
// which their sources' fetch in this check stored (componentPackages),
// through the npm client's guarded fetcher with the registries and tokens
// the npm sources use, each conditionally on the validators stored by the
// last check, decides what clears each site's findings (remedy.Decide)
// and writes the documents and every site's fixes in one transaction,
// fenced under l; a site whose tree moved since it was read keeps its
// fixes until the next check. Only findings with a fixed version fetch
// anything; none at all fetches nothing. A cancelled ctx (the lease lost)
// stops the fetches and writes nothing. The check's fix step over every
// site (fixStep) does the same without holding every tree at once.
func (w *writer) fleetFixes(ctx context.Context, l lease.Lease, sites []siteFixes) ([][]remedy.Decided, error) {
	docs, err := w.fixDocuments(ctx, mergeNeeds(sites))
	if err != nil {
		return nil, err
	}
	decided := make([][]remedy.Decided, len(sites))
	writes := make([]siteFixWrite, len(sites))
	for i, s := range sites {
		if decided[i], writes[i], err = decideSite(s, docs.byName); err != nil {
			return nil, err
		}
	}
	if err := w.writeFixes(ctx, l, docs, writes); err != nil {
		return nil, err
	}
	return decided, nil
}

// fixDocumentCap is MaxFixDocuments, or the tests' lower cap.
func (w *writer) fixDocumentCap() int {
	if w.maxFixDocuments > 0 {
		return w.maxFixDocuments
	}
	return MaxFixDocuments
}

// fetchOrder is needs in the order the fix step fetches them: the
// packages whose stored document does not cover the release they need
// (never read, or read from a higher one) first, in needs' order (the
// most needed first), then the others, the one read longest ago first.
func fetchOrder(needs []remedy.Need, stored map[string]store.TreeFixDocument) []remedy.Need {
	out := slices.Clone(needs)
	slices.SortStableFunc(out, func(a, b remedy.Need) int {
		sa, aok := stored[a.Name]
		sb, bok := stored[b.Name]
		aok, bok = aok && covers(sa.Floor, a.Floor), bok && covers(sb.Floor, b.Floor)
		switch {
		case aok != bok:
			if bok {
				return -1
			}
			return 1
		case !aok:
			return 0
		}
		return sa.FetchedAt.Compare(sb.FetchedAt)
	})
	return out
}

// siteFixWrite is what the fix step writes of one site: its fixes, while
// its tree is the one read (treeHash).
type siteFixWrite struct {
	site     int64
	treeHash []byte
	fixes    []store.TreeFix
}

// decideSite decides what clears s's findings from docs, and what to
// write of them.
func decideSite(s siteFixes, docs map[string]*remedy.Document) ([]remedy.Decided, siteFixWrite, error) {
	var decided []remedy.Decided
	if len(s.findings) > 0 {
		decided = remedy.Decide(remedy.Input{Tree: s.tree, Manager: s.manager, Findings: s.findings, Documents: docs})
	}
	out := siteFixWrite{site: s.site, treeHash: s.treeHash, fixes: make([]store.TreeFix, len(decided))}
	for k, d := range decided {
		b, err := json.Marshal(d.Fix)
		if err != nil {
			return nil, out, err
		}
		out.fixes[k] = store.TreeFix{PackageID: d.Finding.Instance, AdvisoryID: d.Finding.Advisory, Fix: b, Direct: d.Direct}
	}
	return decided, out, nil
}

// writeFixes writes the documents fetched (saves) and every site's fixes
// in one transaction, fenced under l.
func (w *writer) writeFixes(ctx context.Context, l lease.Lease, docs fixReads, writes []siteFixWrite) error {
	err := w.lease.WithLease(ctx, l.Owner, func(tx *store.Tx) error {
		if err := tx.TreeFixDocumentsSave(ctx, docs.saves, docs.keep, l.Epoch); err != nil {
			return err
		}
		for _, s := range writes {
			wrote, err := tx.TreeFixesSave(ctx, s.site, s.treeHash, s.fixes, l.Epoch)
			if err != nil {
				return err
			}
			if !wrote {
				w.logger.InfoContext(ctx, "tree fixes: the site's tree moved since it was read; its fixes wait for the next check",
					"site", s.site)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("tree fixes: %w", err)
	}
	return nil
}

// needsMerge gathers the documents the sites' findings need, one site at
// a time (add), each package once at the lowest floor any site needs (""
// keeps every release); list orders them: the packages most sites need
// first, then by their best rank in a site's list, then by name.
type needsMerge struct {
	by map[string]*mergedNeed
}

type mergedNeed struct {
	remedy.Need
	sites, rank int
}

func (m *needsMerge) add(s siteFixes) {
	if len(s.findings) == 0 {
		return
	}
	if m.by == nil {
		m.by = map[string]*mergedNeed{}
	}
	for rank, n := range remedy.Needs(s.tree, s.findings) {
		e := m.by[n.Name]
		if e == nil {
			m.by[n.Name] = &mergedNeed{Need: n, sites: 1, rank: rank}
			continue
		}
		e.sites++
		e.rank = min(e.rank, rank)
		if !covers(e.Floor, n.Floor) {
			e.Floor = n.Floor
		}
	}
}

func (m *needsMerge) list() []remedy.Need {
	all := make([]*mergedNeed, 0, len(m.by))
	for _, n := range m.by {
		all = append(all, n)
	}
	slices.SortFunc(all, func(a, b *mergedNeed) int {
		return cmp.Or(cmp.Compare(b.sites, a.sites), cmp.Compare(a.rank, b.rank), strings.Compare(a.Name, b.Name))
	})
	out := make([]remedy.Need, len(all))
	for i, n := range all {
		out[i] = n.Need
	}
	return out
}

// mergeNeeds is the documents the sites' findings need (needsMerge).
func mergeNeeds(sites []siteFixes) []remedy.Need {
	var m needsMerge
	for _, s := range sites {
		m.add(s)
	}
	return m.list()
}

// fixReads is what the fix step read of the documents its findings need.
type fixReads struct {
	// byName is each document read, fetched or stored, by package.
	byName map[string]*remedy.Document
	// saves is what to store of each fetched.
	saves []store.TreeFixDocument
	// keep is every package a finding needs but a component: their stored
	// documents stay, fetched this check or not.
	keep []string
}

// fixDocuments reads the documents of needs: a component's as its
// source's fetch stored it; of the others at most the cap fetched, in
// fetchOrder, conditionally on the stored validators, and past the cap
// the stored document that covers the release needed, as last read. A
// document the registry refuses or that cannot be read is left out (its
// findings stay undecided), and said in the log; a cancelled ctx is an
// error.
func (w *writer) fixDocuments(ctx context.Context, needs []remedy.Need) (fixReads, error) {
	out := fixReads{byName: map[string]*remedy.Document{}}
	if len(needs) == 0 || w.npm == nil {
		return out, nil
	}
	names := make([]string, len(needs))
	for i, n := range needs {
		names[i] = n.Name
	}
	stored, err := w.store.TreeFixDocuments(ctx, names)
	if err != nil {
		if ctx.Err() != nil {
			return out, context.Cause(ctx)
		}
		return out, err
	}
	components, err := w.componentPackages(ctx, names)
	if err != nil {
		return out, err
	}
	var fetches []remedy.Need
	for _, n := range needs {
		// A component's document as its source's fetch stored it in this
		// check, when it kept the dependencies this need reads.
		if pkg := components[n.Name]; pkg != nil && n.Floor != "" && keepsDependencies(pkg, n.Floor) {
			out.byName[n.Name] = fixDocument(pkg, n.Floor)
			continue
		}
		out.keep = append(out.keep, n.Name)
		fetches = append(fetches, n)
	}
	fetches = fetchOrder(fetches, stored)
	if cap := w.fixDocumentCap(); len(fetches) > cap {
		w.logger.WarnContext(ctx, "tree fixes: documents past the cap are not fetched; their stored ones are read",
			"needed", len(fetches), "cap", cap)
		for _, n := range fetches[cap:] {
			if s, ok := stored[n.Name]; ok && covers(s.Floor, n.Floor) {
				w.storedFixDocument(ctx, out.byName, s)
			}
		}
		fetches = fetches[:cap]
	}
	reqs, prs, which := w.fixRequests(ctx, fetches, stored)
	var mu sync.Mutex
	runErr := w.npm.Fetcher.Run(ctx, reqs, func(ctx context.Context, i int, resp fetch.Response, err error) {
		n := which[i]
		got, err := prs[i].Result(resp, err)
		if err != nil {
			if !fetch.IsCancelled(ctx, err) {
				w.logger.WarnContext(ctx, "tree fixes: a document was not read", "package", n.Name, "err", err)
			}
			return
		}
		save := store.TreeFixDocument{Name: n.Name, Floor: n.Floor, ETag: got.Response.ETag, LastModified: got.Response.LastModified}
		mu.Lock()
		defer mu.Unlock()
		if got.Package == nil { // 304: the stored document stands
			if !w.storedFixDocument(ctx, out.byName, stored[n.Name]) {
				return
			}
		} else {
			doc := fixDocument(got.Package, n.Floor)
			if save.Document, err = json.Marshal(doc); err != nil {
				return
			}
			out.byName[n.Name] = doc
		}
		out.saves = append(out.saves, save)
	})
	if runErr != nil || ctx.Err() != nil {
		return out, errors.Join(runErr, context.Cause(ctx))
	}
	return out, nil
}

// fixRequests are the requests of the documents of fetches, each
// conditional on the stored validators when the stored document covers the
// release needed; which is the need of each. A package with no registry
// is left out, and said in the log.
func (w *writer) fixRequests(ctx context.Context, fetches []remedy.Need, stored map[string]store.TreeFixDocument) (
	reqs []fetch.Request, prs []*npm.PackageRequest, which []remedy.Need) {
	for _, n := range fetches {
		etag, lastModified := "", ""
		if s, ok := stored[n.Name]; ok && covers(s.Floor, n.Floor) {
			etag, lastModified = s.ETag, s.LastModified
		}
		pr, err := w.npm.PackageRequest(npm.Name(n.Name), etag, lastModified)
		if err != nil {
			w.logger.WarnContext(ctx, "tree fixes: no registry for a package", "package", n.Name, "err", err)
			continue
		}
		pr.Keep = keepFrom(n.Floor)
		reqs, prs, which = append(reqs, pr.Request), append(prs, pr), append(which, n)
	}
	return reqs, prs, which
}

// storedFixDocument decodes the stored document s into docs; false, and
// said in the log, when it does not read.
func (w *writer) storedFixDocument(ctx context.Context, docs map[string]*remedy.Document, s store.TreeFixDocument) bool {
	doc := &remedy.Document{}
	if err := json.Unmarshal(s.Document, doc); err != nil {
		w.logger.WarnContext(ctx, "tree fixes: a stored document does not read", "package", s.Name, "err", err)
		return false
	}
	docs[s.Name] = doc
	return true
}

// componentPackages are the stored package documents of the npm
// components whose package is one of names, as the check's fetch of their
// sources stored them, from the registry the fix step reads that package
// from; the others' documents the fix step fetches itself.
func (w *writer) componentPackages(ctx context.Context, names []string) (map[string]*npm.Package, error) {
	comps, err := w.store.FleetComponents(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]*npm.Package{}
	for _, c := range comps {
		name, err := npm.ParseSource(c.SourceURL)
		if err != nil || !slices.Contains(names, string(name)) || out[string(name)] != nil {
			continue
		}
		reg, err := w.npm.Registries.For(name)
		if err != nil {
			continue
		}
		src, err := w.store.Source(ctx, c.SourceURL)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if src.Registry != reg.String() {
			continue // stored from another registry than the one named now
		}
		if pkg := w.storedPackage(src); pkg != nil {
			out[string(name)] = pkg
		}
	}
	return out, nil
}

// covers reports whether a document stored with its releases from floor
// holds those from need: the stored one is then fetched conditionally.
func covers(floor, need string) bool {
	if floor == "" {
		return true
	}
	f, err1 := npmver.Parse(floor)
	n, err2 := npmver.Parse(need)
	return err1 == nil && err2 == nil && !n.LessThan(f)
}

// keepFrom keeps the dependencies of the releases at or above floor
// (every release when floor is "").
func keepFrom(floor string) npm.KeepDependencies {
	f, err := npmver.Parse(floor)
	return func(version string) bool {
		if err != nil {
			return true
		}
		v, verr := npmver.Parse(version)
		return verr == nil && v.Prerelease() == "" && !v.LessThan(f)
	}
}

// fixDocument is what a fix reads of p: its releases at or above floor
// with their dependencies, and its latest tag. Pre-releases are left out:
// no fix is read through one (remedy.Document.Pick).
func fixDocument(p *npm.Package, floor string) *remedy.Document {
	keep := keepFrom(floor)
	d := &remedy.Document{Name: p.Name, Latest: p.DistTags["latest"], Floor: floor, Versions: map[string]remedy.Version{}}
	for v, ver := range p.Versions {
		if keep(v) {
			d.Versions[v] = remedy.Version{Dependencies: ver.Dependencies, Deprecated: ver.Deprecated != ""}
		}
	}
	return d
}
