package catalog

import (
	"context"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// The installed tree's packages (docs/npm.md): not cached, each request
// reads them, every read of one answer in one read-only transaction
// (store.ReadTx), so that a lockfile sync committed between two reads
// cannot mix two trees on one page. One page is one statement over
// tree_packages: nothing to gain from a cache that a tree write would have
// to turn.

// PackagesPage is one page of the installed packages.
type PackagesPage struct {
	Rows []readmodel.PackageRow
	// Counts is how many packages each filter shows with the page's
	// component and search.
	Counts readmodel.PackageCounts
	// Next is the name a next page starts after; "" on the last page.
	Next string
	// Tree is the tree as last read; nil: never read, the dependencies
	// are not checked (readmodel.DependenciesNotCheckedText).
	Tree *readmodel.TreeState
}

// Packages reads one page of the packages site installs as f asks
// (f.Limit rows at most, 1 when not positive).
func (r *Reads) Packages(ctx context.Context, site int64, f store.PackageFilter) (PackagesPage, error) {
	var out PackagesPage
	limit := max(f.Limit, 1)
	err := r.store.ReadTx(ctx, func(tx *store.Tx) error {
		var err error
		if out.Tree, err = tx.TreeStateRow(ctx, site); err != nil {
			return err
		}
		if out.Counts, err = tx.PackageCounts(ctx, site, f); err != nil {
			return err
		}
		// One row more than the page tells whether a next page exists.
		f.Limit = limit + 1
		out.Rows, err = tx.Packages(ctx, site, f)
		return err
	})
	if err != nil {
		return PackagesPage{}, err
	}
	if len(out.Rows) > limit {
		out.Rows = out.Rows[:limit]
		out.Next = out.Rows[limit-1].Name
	}
	return out, nil
}

// Package is one installed package as its page shows it.
type Package struct {
	Name string
	// Instances are every installed instance, by where it sits; empty when
	// no version of it is installed now (History says when one was).
	Instances []readmodel.PackageInstance
	// History is the newest versions the tree installed, newest first
	// (readmodel.PackageHistoryLimit).
	History []readmodel.PackageVersionSpan
	// Tree is the tree as last read; nil: never read.
	Tree *readmodel.TreeState
}

// Package reads the package name in site's tree: its instances (with their findings
// that mode shows and what clears each) and its history, in one read-only
// transaction; store.ErrNotFound when the tree neither installs it nor
// ever did within its history.
func (r *Reads) Package(ctx context.Context, site int64, name string, mode readmodel.DevMode) (Package, error) {
	out := Package{Name: name}
	err := r.store.ReadTx(ctx, func(tx *store.Tx) error {
		var err error
		if out.Tree, err = tx.TreeStateRow(ctx, site); err != nil {
			return err
		}
		if out.Instances, err = tx.PackageInstances(ctx, site, name); err != nil {
			return err
		}
		fixes, err := tx.PackageFixes(ctx, site, name)
		if err != nil {
			return err
		}
		for i, in := range out.Instances {
			if f := fixes[in.ID]; f != nil {
				out.Instances[i].Fixes = f
			}
		}
		findings, err := tx.TreeFindingsOfPackage(ctx, site, name, mode)
		if err != nil {
			return err
		}
		attachFindings(out.Instances, findings)
		out.History, err = tx.PackageHistory(ctx, site, name, readmodel.PackageHistoryLimit)
		return err
	})
	if err != nil {
		return Package{}, err
	}
	if len(out.Instances) == 0 && len(out.History) == 0 {
		return Package{}, store.ErrNotFound
	}
	return out, nil
}

// attachFindings lists on each instance the findings of its version that
// the mode read shows, each with what clears it on that instance.
func attachFindings(instances []readmodel.PackageInstance, findings []store.TreeInstanceFinding) {
	at := make(map[string]int, len(instances))
	for i, in := range instances {
		at[in.ID] = i
	}
	for _, f := range findings {
		i, ok := at[f.InstanceID]
		if !ok || !f.Shown {
			continue
		}
		pf := readmodel.PackageFinding{AdvisoryID: f.AdvisoryID, Severity: f.Severity, Malicious: f.Malicious,
			KnownExploited: f.KnownExploited, EPSS: f.EPSS, FixedIn: f.FixedIn, Withdrawn: f.Withdrawn, Dismissed: f.Dismissed,
			Dev: f.FindingDev, Counted: f.Counted}
		for _, fx := range instances[i].Fixes {
			if fx.AdvisoryID == f.AdvisoryID {
				pf.Fix, pf.FixText = &fx.Fix, fx.Text
			}
		}
		instances[i].Findings = append(instances[i].Findings, pf)
	}
}
