package updatecheck

import (
	"context"
	"path/filepath"
	"slices"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/osv"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/remedy"
	"github.com/upcheck/upcheck/internal/store"
)

// fixStep is the check's fix step, after the trees' findings are
// evaluated: what clears each stored finding on each site's tree
// (fleetFixes' rules), fed from the stored tree and its findings, each
// finding read by its OSV records' own rules (remedy.Finding.Affects: a
// record of several ranges affects a version in any of them), worded for
// the site's lockfile's client. No tree stored: nothing to decide.
//
// It holds one site's tree at a time, whatever the fleet's size: a first
// pass reads each site's tree to learn which documents its findings need
// (merged as fleetFixes merges them), the documents are fetched, and a
// second pass reads each tree again and keeps only its decided fixes,
// written with the documents in one fenced transaction (writeFixes). A
// site whose tree moved between the passes is decided on the tree the
// second pass read, guarded by its hash as always; a package only its new
// tree needs waits for the next check. (Holding every site's tree until
// the write took about 0.5 MiB a site of 1,000 packages: 5 GiB at
// 10,000 sites, docs/performance.md "The fleet".)
func (w *writer) fixStep(ctx context.Context, l lease.Lease) error {
	ids, err := w.store.TreeSites(ctx)
	if err != nil || len(ids) == 0 {
		return err
	}
	var needs needsMerge
	for _, id := range ids {
		s, ok, err := w.siteFixInput(ctx, id, false)
		if err != nil {
			return err
		}
		if ok {
			needs.add(s)
		}
	}
	docs, err := w.fixDocuments(ctx, needs.list())
	if err != nil {
		return err
	}
	writes := make([]siteFixWrite, 0, len(ids))
	for _, id := range ids {
		s, ok, err := w.siteFixInput(ctx, id, true)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		_, write, err := decideSite(s, docs.byName)
		if err != nil {
			return err
		}
		writes = append(writes, write)
	}
	return w.writeFixes(ctx, l, docs, writes)
}

// siteFixInput reads site's stored tree and findings as the fix step
// decides them; false when no tree is stored. A site without findings has
// no tree kept (its fixes are cleared). Without rules, each finding is
// read without its OSV records' rules (no read of the feeds): enough to
// know which documents it needs (remedy.Needs), not to decide it.
func (w *writer) siteFixInput(ctx context.Context, site int64, rules bool) (siteFixes, bool, error) {
	in, err := w.store.TreeFixInput(ctx, site)
	if err != nil || in.Tree == nil {
		return siteFixes{}, false, err
	}
	s := siteFixes{site: site, treeHash: in.TreeHash, manager: managerOf(in.Path)}
	if len(in.Findings) > 0 {
		s.tree = in.Tree
		if s.findings, err = w.fixFindings(ctx, in.Findings, rules); err != nil {
			return siteFixes{}, false, err
		}
	}
	return s, true, nil
}

// fixFindings is the findings of one site's tree as remedy reads them,
// each with its advisory's rules by the records the feeds hold (when
// rules).
func (w *writer) fixFindings(ctx context.Context, in []store.TreeFixFinding, rules bool) ([]remedy.Finding, error) {
	var names []string
	for _, f := range in {
		if rules && f.FixedIn != "" {
			names = append(names, f.Name)
		}
	}
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	var k *knowledge
	if len(names) > 0 {
		var err error
		if k, err = w.knowledge(ctx, names); err != nil {
			return nil, err
		}
	}
	findings := make([]remedy.Finding, len(in))
	for i, f := range in {
		findings[i] = remedy.Finding{Instance: f.PackageID, Advisory: f.AdvisoryID,
			Severity: readmodel.Severity(f.Severity).Rank(), Fixed: f.FixedIn}
		if f.FixedIn != "" && k != nil {
			findings[i].Affects = affectsOf(k.osv[f.Name], f)
		}
	}
	return findings, nil
}

// affectsOf says whether the advisory of f affects a version of its
// package by the records the feeds hold of it (those sharing an id or an
// alias with it); nil when none is held (every version below the fixed
// one is then affected).
func affectsOf(records []*osv.Record, f store.TreeFixFinding) func(string) bool {
	var rs []*osv.Record
	for _, r := range records {
		if slices.ContainsFunc(advisoryKeys(r.ID, r.Aliases), func(key string) bool { return slices.Contains(f.Keys, key) }) {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return nil
	}
	return func(version string) bool {
		return slices.ContainsFunc(rs, func(r *osv.Record) bool {
			_, ok, _ := matchRecord(r, f.Name, version)
			return ok
		})
	}
}

// managerOf is the client whose lockfile path is: pnpm's
// pnpm-lock.yaml, npm's otherwise.
func managerOf(path string) remedy.Manager {
	if filepath.Base(path) == "pnpm-lock.yaml" {
		return remedy.ManagerPNPM
	}
	return remedy.ManagerNPM
}

// TreeDevMode sets UPCHECK_LOCKFILE_DEV, by which a new tree finding is
// counted, and so notified (readmodel.DevSeparate when never set).
func (c *Checker) TreeDevMode(m readmodel.DevMode) { c.devMode = m }

// treeDevMode is the dev mode the tree's findings are counted by.
func (w *writer) treeDevMode() readmodel.DevMode {
	if w.devMode == "" {
		return readmodel.DevSeparate
	}
	return w.devMode
}
