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
// the packages the most findings need come first (remedy.Needs); the
// findings that need a package past the cap stay undecided
// (remedy.KindUnknown) until a check with fewer findings.
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
// stops the fetches and writes nothing.
func (w *writer) fleetFixes(ctx context.Context, l lease.Lease, sites []siteFixes) ([][]remedy.Decided, error) {
	needs := mergeNeeds(sites)
	limit := MaxFixDocuments
	if w.maxFixDocuments > 0 {
		limit = w.maxFixDocuments
	}
	if len(needs) > limit {
		w.logger.WarnContext(ctx, "tree fixes: documents past the cap are not fetched", "needed", len(needs), "cap", limit)
		needs = needs[:limit]
	}
	docs, saves, err := w.fixDocuments(ctx, needs)
	if err != nil {
		return nil, err
	}
	decided := make([][]remedy.Decided, len(sites))
	fixes := make([][]store.TreeFix, len(sites))
	for i, s := range sites {
		if len(s.findings) > 0 {
			decided[i] = remedy.Decide(remedy.Input{Tree: s.tree, Manager: s.manager, Findings: s.findings, Documents: docs})
		}
		fixes[i] = make([]store.TreeFix, len(decided[i]))
		for k, d := range decided[i] {
			b, err := json.Marshal(d.Fix)
			if err != nil {
				return nil, err
			}
			fixes[i][k] = store.TreeFix{PackageID: d.Finding.Instance, AdvisoryID: d.Finding.Advisory, Fix: b, Direct: d.Direct}
		}
	}
	// The documents kept are those the fix step fetched: a component's
	// is its source's.
	keep := make([]string, 0, len(saves))
	for _, d := range saves {
		keep = append(keep, d.Name)
	}
	err = w.lease.WithLease(ctx, l.Owner, func(tx *store.Tx) error {
		if err := tx.TreeFixDocumentsSave(ctx, saves, keep, l.Epoch); err != nil {
			return err
		}
		for i, s := range sites {
			wrote, err := tx.TreeFixesSave(ctx, s.site, s.treeHash, fixes[i], l.Epoch)
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
		return nil, fmt.Errorf("tree fixes: %w", err)
	}
	return decided, nil
}

// mergeNeeds is the documents the sites' findings need (remedy.Needs of
// each), each package once at the lowest floor any site needs ("" keeps
// every release), the packages most sites need first, then by their best
// rank in a site's list, then by name.
func mergeNeeds(sites []siteFixes) []remedy.Need {
	type need struct {
		remedy.Need
		sites, rank int
	}
	by := map[string]*need{}
	for _, s := range sites {
		if len(s.findings) == 0 {
			continue
		}
		for rank, n := range remedy.Needs(s.tree, s.findings) {
			m := by[n.Name]
			if m == nil {
				by[n.Name] = &need{Need: n, sites: 1, rank: rank}
				continue
			}
			m.sites++
			m.rank = min(m.rank, rank)
			if !covers(m.Floor, n.Floor) {
				m.Floor = n.Floor
			}
		}
	}
	all := make([]*need, 0, len(by))
	for _, n := range by {
		all = append(all, n)
	}
	slices.SortFunc(all, func(a, b *need) int {
		return cmp.Or(cmp.Compare(b.sites, a.sites), cmp.Compare(a.rank, b.rank), strings.Compare(a.Name, b.Name))
	})
	out := make([]remedy.Need, len(all))
	for i, n := range all {
		out[i] = n.Need
	}
	return out
}

// fixDocuments fetches the documents of needs: the documents read, by
// name, and what to store of each. A document the registry refuses or
// that cannot be read is left out (its findings stay undecided), and
// said in the log; a cancelled ctx is an error.
func (w *writer) fixDocuments(ctx context.Context, needs []remedy.Need) (map[string]*remedy.Document, []store.TreeFixDocument, error) {
	docs := map[string]*remedy.Document{}
	if len(needs) == 0 || w.npm == nil {
		return docs, nil, nil
	}
	names := make([]string, len(needs))
	for i, n := range needs {
		names[i] = n.Name
	}
	stored, err := w.store.TreeFixDocuments(ctx, names)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, context.Cause(ctx)
		}
		return nil, nil, err
	}
	components, err := w.componentPackages(ctx, names)
	if err != nil {
		return nil, nil, err
	}
	var reqs []fetch.Request
	var prs []*npm.PackageRequest
	var which []remedy.Need
	for _, n := range needs {
		// A component's document as its source's fetch stored it in this
		// check, when it kept the dependencies this need reads.
		if pkg := components[n.Name]; pkg != nil && n.Floor != "" && keepsDependencies(pkg, n.Floor) {
			docs[n.Name] = fixDocument(pkg, n.Floor)
			continue
		}
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
	var mu sync.Mutex
	var saves []store.TreeFixDocument
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
		var doc *remedy.Document
		if got.Package == nil { // 304: the stored document stands
			doc = &remedy.Document{}
			if err := json.Unmarshal(stored[n.Name].Document, doc); err != nil {
				w.logger.WarnContext(ctx, "tree fixes: a stored document does not read", "package", n.Name, "err", err)
				return
			}
		} else {
			doc = fixDocument(got.Package, n.Floor)
			if save.Document, err = json.Marshal(doc); err != nil {
				return
			}
		}
		mu.Lock()
		defer mu.Unlock()
		docs[n.Name] = doc
		saves = append(saves, save)
	})
	if runErr != nil || ctx.Err() != nil {
		return nil, nil, errors.Join(runErr, context.Cause(ctx))
	}
	return docs, saves, nil
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
