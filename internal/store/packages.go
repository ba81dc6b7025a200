package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/npmver"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// PackageFilter narrows the installed packages (queries/packages.sql):
// Filter is one of readmodel.PackageFilters, Component a component's code
// (the packages it brings in; "" for all), Search a part of the name. A
// page holds up to Limit packages after the name After ("" from the
// first), in name order. DevMode is UPCHECK_LOCKFILE_DEV: which findings
// the vulnerable, malicious and exploited filters read (upcheck_tree_shown).
type PackageFilter struct {
	Filter    readmodel.PackageFilter
	DevMode   readmodel.DevMode
	Component string
	Search    string
	After     string
	Limit     int
}

// Packages reads one page of the installed packages as f asks.
func (e *Executor) Packages(ctx context.Context, site int64, f PackageFilter) ([]readmodel.PackageRow, error) {
	rows, err := e.q.PackageList(ctx, e.dbtx, db.PackageListParams{Site: site, DevMode: string(f.DevMode), Filter: string(f.Filter), Component: f.Component,
		Search: f.Search, After: f.After, RowLimit: int64(f.Limit)})
	if err != nil {
		return nil, mapError(fmt.Errorf("read packages: %w", err))
	}
	out := make([]readmodel.PackageRow, len(rows))
	for i, r := range rows {
		out[i] = readmodel.PackageRow{Name: r.Name, Versions: r.Versions, Instances: int(r.Instances), Dev: r.Dev,
			InstallScript: r.InstallScript, OtherSources: r.OtherSources, Components: r.Components, Heads: r.Heads}
		slices.SortFunc(out[i].Versions, npmver.Compare) // as versions, not as text
		if err := json.Unmarshal(r.Path, &out[i].Path); err != nil {
			return nil, fmt.Errorf("decode the path of %q: %w", r.Name, err)
		}
		if out[i].Path == nil {
			out[i].Path = []string{}
		}
	}
	return out, nil
}

// PackageCounts counts the packages each filter shows, with f's component
// and search (f's filter and page are not read).
func (e *Executor) PackageCounts(ctx context.Context, site int64, f PackageFilter) (readmodel.PackageCounts, error) {
	r, err := e.q.PackageCounts(ctx, e.dbtx, db.PackageCountsParams{Site: site, DevMode: string(f.DevMode), Component: f.Component, Search: f.Search})
	if err != nil {
		return readmodel.PackageCounts{}, mapError(fmt.Errorf("count packages: %w", err))
	}
	return readmodel.PackageCounts{All: int(r.Total), Vulnerable: int(r.Vulnerable), Malicious: int(r.Malicious),
		Exploited: int(r.Exploited), Dev: int(r.Dev), Scripts: int(r.Scripts), Sources: int(r.Sources)}, nil
}

// PackageInstances reads every installed instance of the package name
// (TreePackagesByName) as the pages show it; none when it is not
// installed.
func (e *Executor) PackageInstances(ctx context.Context, site int64, name string) ([]readmodel.PackageInstance, error) {
	ps, err := e.TreePackagesByName(ctx, site, name)
	if err != nil {
		return nil, err
	}
	out := make([]readmodel.PackageInstance, len(ps))
	for i, p := range ps {
		out[i] = readmodel.PackageInstance{ID: p.ID, Alias: p.Alias, Version: p.Version, Dev: p.Dev, Optional: p.Optional,
			Peer: p.Peer, DevOnly: p.DevOnly, Source: string(p.Source), Resolved: p.Resolved, Integrity: p.Integrity,
			InstallScript: p.InstallScript, Components: p.Components, Via: make([]readmodel.PackageVia, len(p.Via)),
			Fixes: []readmodel.PackageFix{}, Findings: []readmodel.PackageFinding{}}
		if out[i].Components == nil {
			out[i].Components = []string{}
		}
		for k, v := range p.Via {
			out[i].Via[k] = readmodel.PackageVia{Head: v.Head, Path: v.Path}
		}
	}
	return out, nil
}

// PackageFixes reads what clears each finding on the instances of the
// package name (tree_fixes), by instance ID.
func (e *Executor) PackageFixes(ctx context.Context, site int64, name string) (map[string][]readmodel.PackageFix, error) {
	rows, err := e.q.PackageFixes(ctx, e.dbtx, db.PackageFixesParams{Site: site, Name: name})
	if err != nil {
		return nil, mapError(fmt.Errorf("read the fixes of %q: %w", name, err))
	}
	out := map[string][]readmodel.PackageFix{}
	for _, r := range rows {
		f := readmodel.PackageFix{AdvisoryID: r.AdvisoryID}
		if err := json.Unmarshal(r.Fix, &f.Fix); err != nil {
			return nil, fmt.Errorf("decode the fix of %s on %q: %w", r.AdvisoryID, r.PackageID, err)
		}
		f.Text = readmodel.TreeFixText(f.Fix)
		out[r.PackageID] = append(out[r.PackageID], f)
	}
	return out, nil
}

// PackageHistory reads the newest limit versions of the package name the
// tree installed (TreeVersionsOf), newest first, in UTC.
func (e *Executor) PackageHistory(ctx context.Context, site int64, name string, limit int) ([]readmodel.PackageVersionSpan, error) {
	vs, err := e.TreeVersionsOf(ctx, site, name)
	if err != nil {
		return nil, err
	}
	out := make([]readmodel.PackageVersionSpan, 0, min(len(vs), limit))
	for _, v := range vs[:min(len(vs), limit)] {
		out = append(out, readmodel.PackageVersionSpan{Version: v.Version, InstalledAt: v.InstalledAt.UTC(), RemovedAt: utc(v.RemovedAt)})
	}
	return out, nil
}

// TreeStateRow is the tree's state (TreeState) as the pages read it, in
// UTC; nil when no tree was ever read.
func (e *Executor) TreeStateRow(ctx context.Context, site int64) (*readmodel.TreeState, error) {
	st, ok, err := e.TreeState(ctx, site)
	if err != nil || !ok {
		return nil, err
	}
	return &readmodel.TreeState{Path: st.Path, Packages: st.Packages, ReadAt: st.SyncedAt.UTC(), ChangedAt: st.ChangedAt.UTC()}, nil
}

// ComponentDependencies counts the package instances the component code
// brings in, its own instance (its package pkg, a direct dependency of the
// site) left out.
func (e *Executor) ComponentDependencies(ctx context.Context, site int64, code, pkg string) (int, error) {
	n, err := e.q.ComponentDependencies(ctx, e.dbtx, db.ComponentDependenciesParams{Site: site, Code: code, Package: pkg})
	if err != nil {
		return 0, mapError(fmt.Errorf("count the dependencies of %q: %w", code, err))
	}
	return int(n), nil
}

// ComponentTreeFindings reads what in the dependencies of the component
// code (whose npm package is pkg, "" for none) needs attention under mode
// (upcheck_component_tree_attention): the counts, and the first
// readmodel.DependencyFindingsLimit findings, each with its path and fix.
func (e *Executor) ComponentTreeFindings(ctx context.Context, site int64, code, pkg string, mode readmodel.DevMode) (
	readmodel.DependencyCounts, []readmodel.DependencyFinding, error) {
	c, err := e.q.ComponentTreeCounts(ctx, e.dbtx, db.ComponentTreeCountsParams{Site: site, DevMode: string(mode), Code: code})
	if err != nil {
		return readmodel.DependencyCounts{}, nil, mapError(fmt.Errorf("count the findings in %q's dependencies: %w", code, err))
	}
	rows, err := e.q.ComponentTreeFindings(ctx, e.dbtx, db.ComponentTreeFindingsParams{Site: site, DevMode: string(mode), Code: code,
		Package: pkg, MaxRows: readmodel.DependencyFindingsLimit})
	if err != nil {
		return readmodel.DependencyCounts{}, nil, mapError(fmt.Errorf("list the findings in %q's dependencies: %w", code, err))
	}
	out := make([]readmodel.DependencyFinding, len(rows))
	for i, r := range rows {
		f := readmodel.DependencyFinding{Name: r.Name, Version: r.Version, AdvisoryID: r.AdvisoryID,
			Kind: readmodel.AttentionKind(r.Kind), Malicious: r.Malicious, Severity: r.Severity, FixedIn: r.FixedIn, Path: []string{}}
		if err := json.Unmarshal(r.Path, &f.Path); err != nil {
			return readmodel.DependencyCounts{}, nil, fmt.Errorf("decode the path to %s: %w", r.InstanceID, err)
		}
		if r.Fix != nil {
			var fix readmodel.TreeFix
			if err := json.Unmarshal(r.Fix, &fix); err != nil {
				return readmodel.DependencyCounts{}, nil, fmt.Errorf("decode the fix of %s on %s: %w", r.AdvisoryID, r.InstanceID, err)
			}
			f.Fix, f.FixText = &fix, readmodel.TreeFixText(fix)
		}
		out[i] = f
	}
	return readmodel.DependencyCounts{Counted: int(c.Counted), Malicious: int(c.Malicious)}, out, nil
}
