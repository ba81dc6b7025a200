package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/tree"
)

// TreeFixFinding is one finding as the fix step decides it: on the
// installed instance PackageID (Name at Version), the advisory AdvisoryID
// (Keys: its id and aliases, upper-cased), its severity and first fixed
// version ("" for none).
type TreeFixFinding struct {
	PackageID, Name, Version, AdvisoryID string
	Keys                                 []string
	Severity                             string
	FixedIn                              string
}

// TreeFixInput is what the fix step reads: the stored tree (packages and
// edges), the lockfile it was read from, and its findings, all of one
// tree (one repeatable-read transaction). Tree is nil when no tree is
// stored.
type TreeFixInput struct {
	Site     int64
	Path     string
	TreeHash []byte
	Tree     *tree.Tree
	Findings []TreeFixFinding
}

// TreeSites lists the sites whose tree was read once (synced or pushed).
func (e *Executor) TreeSites(ctx context.Context) ([]int64, error) {
	ids, err := e.q.TreeSitesWithTree(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(fmt.Errorf("list the sites with a tree: %w", err))
	}
	return ids, nil
}

// TreeFixInput reads site's stored tree and its findings for the fix step.
func (s *Store) TreeFixInput(ctx context.Context, site int64) (TreeFixInput, error) {
	var in TreeFixInput
	err := s.ReadTx(ctx, func(tx *Tx) error {
		st, ok, err := tx.TreeState(ctx, site)
		if err != nil || !ok {
			return err
		}
		in.Site, in.Path, in.TreeHash = site, st.Path, st.TreeHash
		pkgs, err := tx.q.TreePackagesAll(ctx, tx.tx, site)
		if err != nil {
			return mapError(fmt.Errorf("read the tree for its fixes: %w", err))
		}
		edges, err := tx.q.TreeEdgesAll(ctx, tx.tx, site)
		if err != nil {
			return mapError(fmt.Errorf("read the tree's edges for its fixes: %w", err))
		}
		t := &tree.Tree{Packages: make([]tree.Package, len(pkgs)), Edges: make([]tree.Edge, len(edges))}
		for i, p := range pkgs {
			t.Packages[i] = tree.Package{ID: p.ID, Name: p.Name, Alias: p.Alias, Version: p.Version, Dev: p.Dev,
				Optional: p.Optional, Peer: p.Peer, Source: tree.Source(p.Source), Resolved: p.Resolved,
				Integrity: p.Integrity, InstallScript: p.InstallScript}
		}
		for i, e := range edges {
			t.Edges[i] = tree.Edge{From: e.FromID, Name: e.Name, Kind: tree.Kind(e.Kind), Range: e.Range, To: e.ToID}
		}
		t.Sort()
		in.Tree = t
		rows, err := tx.q.TreeFindingsForFixes(ctx, tx.tx, site)
		if err != nil {
			return mapError(fmt.Errorf("read the tree's findings for their fixes: %w", err))
		}
		in.Findings = make([]TreeFixFinding, len(rows))
		for i, r := range rows {
			f := TreeFixFinding{PackageID: r.PackageID, Name: r.Name, Version: r.Version, AdvisoryID: r.AdvisoryID,
				Keys: r.AdvisoryKeys, Severity: r.Severity}
			if r.FixedIn != nil {
				f.FixedIn = *r.FixedIn
			}
			in.Findings[i] = f
		}
		return nil
	})
	return in, err
}

// TreeFixesDeleteStale deletes the fixes whose finding is gone (the
// instance's version changed, its row kept its id; or the advisory no
// longer affects it), in the evaluation's fenced transaction: a fix never
// outlives its finding. Of the sites m evaluated: every site's when
// m.Every (the feeds moved), else only those whose trees moved, which
// alone can have a finding gone.
func (t *Tx) TreeFixesDeleteStale(ctx context.Context, m TreeToMatch) (int64, error) {
	n, err := t.q.TreeFixesDeleteStale(ctx, t.tx, db.TreeFixesDeleteStaleParams{Every: m.Every, Sites: m.siteIDs()})
	if err != nil {
		return 0, mapError(fmt.Errorf("delete the fixes of findings gone: %w", err))
	}
	return n, nil
}

// EventPlanTreeFindings queues, in tx, the tree.finding event of each
// counted finding (under mode) that tx's evaluation wrote new, on every
// enabled channel, once.
func (t *Tx) EventPlanTreeFindings(ctx context.Context, site int64, mode readmodel.DevMode, epoch int64) ([]uuid.UUID, error) {
	p := db.EventPlanTreeFindingsParams{Site: site, DevMode: string(mode)}
	if epoch != 0 {
		p.Epoch = &epoch
	}
	out, err := t.q.EventPlanTreeFindings(ctx, t.tx, p)
	return out, mapError(err)
}
