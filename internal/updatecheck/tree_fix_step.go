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
// (fleetFixes), fed from the stored tree and its findings, each finding
// read by its OSV records' own rules (remedy.Finding.Affects: a record of
// several ranges affects a version in any of them), worded for the
// site's lockfile's client. No tree stored: nothing to decide.
func (w *writer) fixStep(ctx context.Context, l lease.Lease) error {
	ids, err := w.store.TreeSites(ctx)
	if err != nil || len(ids) == 0 {
		return err
	}
	sites := make([]siteFixes, 0, len(ids))
	for _, id := range ids {
		in, err := w.store.TreeFixInput(ctx, id)
		if err != nil {
			return err
		}
		if in.Tree == nil {
			continue
		}
		s := siteFixes{site: id, treeHash: in.TreeHash, manager: managerOf(in.Path)}
		if len(in.Findings) > 0 { // a site without findings: its fixes are cleared, its tree not kept
			s.tree = in.Tree
			if s.findings, err = w.fixFindings(ctx, in.Findings); err != nil {
				return err
			}
		}
		sites = append(sites, s)
	}
	_, err = w.fleetFixes(ctx, l, sites)
	return err
}

// fixFindings is the findings of one site's tree as remedy reads them,
// each with its advisory's rules by the records the feeds hold.
func (w *writer) fixFindings(ctx context.Context, in []store.TreeFixFinding) ([]remedy.Finding, error) {
	var names []string
	for _, f := range in {
		if f.FixedIn != "" {
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
