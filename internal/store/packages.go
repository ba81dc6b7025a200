package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// PackageFilter narrows the installed packages (queries/packages.sql):
// Filter is one of readmodel.PackageFilters, Component a component's code
// (the packages it brings in; "" for all), Search a part of the name. A
// page holds up to Limit packages after the name After ("" from the
// first), in name order.
type PackageFilter struct {
	Filter    readmodel.PackageFilter
	Component string
	Search    string
	After     string
	Limit     int
}

// Packages reads one page of the installed packages as f asks.
func (e *Executor) Packages(ctx context.Context, f PackageFilter) ([]readmodel.PackageRow, error) {
	rows, err := e.q.PackageList(ctx, e.dbtx, db.PackageListParams{Filter: string(f.Filter), Component: f.Component,
		Search: f.Search, After: f.After, RowLimit: int64(f.Limit)})
	if err != nil {
		return nil, mapError(fmt.Errorf("read packages: %w", err))
	}
	out := make([]readmodel.PackageRow, len(rows))
	for i, r := range rows {
		out[i] = readmodel.PackageRow{Name: r.Name, Versions: r.Versions, Instances: int(r.Instances), Dev: r.Dev,
			InstallScript: r.InstallScript, OtherSources: r.OtherSources, Components: r.Components, Heads: r.Heads}
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
func (e *Executor) PackageCounts(ctx context.Context, f PackageFilter) (readmodel.PackageCounts, error) {
	r, err := e.q.PackageCounts(ctx, e.dbtx, db.PackageCountsParams{Component: f.Component, Search: f.Search})
	if err != nil {
		return readmodel.PackageCounts{}, mapError(fmt.Errorf("count packages: %w", err))
	}
	return readmodel.PackageCounts{All: int(r.Total), Dev: int(r.Dev), Scripts: int(r.Scripts), Sources: int(r.Sources)}, nil
}

// PackageInstances reads every installed instance of the package name,
// by where it sits; none when it is not installed.
func (e *Executor) PackageInstances(ctx context.Context, name string) ([]readmodel.PackageInstance, error) {
	rows, err := e.q.PackageInstances(ctx, e.dbtx, name)
	if err != nil {
		return nil, mapError(fmt.Errorf("read the instances of %q: %w", name, err))
	}
	out := make([]readmodel.PackageInstance, len(rows))
	for i, r := range rows {
		out[i] = readmodel.PackageInstance{ID: r.ID, Alias: r.Alias, Version: r.Version, Dev: r.Dev, Optional: r.Optional,
			Peer: r.Peer, DevOnly: r.DevOnly, Source: r.Source, Resolved: r.Resolved, Integrity: r.Integrity,
			InstallScript: r.InstallScript, Components: r.Components, Fixes: []readmodel.PackageFix{}}
		if err := json.Unmarshal(r.Via, &out[i].Via); err != nil {
			return nil, fmt.Errorf("decode the paths of %q: %w", r.ID, err)
		}
		if out[i].Via == nil {
			out[i].Via = []readmodel.PackageVia{}
		}
	}
	return out, nil
}

// PackageFixes reads what clears each finding on the instances of the
// package name (tree_fixes), by instance ID.
func (e *Executor) PackageFixes(ctx context.Context, name string) (map[string][]readmodel.PackageFix, error) {
	rows, err := e.q.PackageFixes(ctx, e.dbtx, name)
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
// tree installed, newest first, in UTC.
func (e *Executor) PackageHistory(ctx context.Context, name string, limit int) ([]readmodel.PackageVersionSpan, error) {
	rows, err := e.q.PackageHistory(ctx, e.dbtx, db.PackageHistoryParams{Name: name, RowLimit: int64(limit)})
	if err != nil {
		return nil, mapError(fmt.Errorf("read the history of %q: %w", name, err))
	}
	out := make([]readmodel.PackageVersionSpan, len(rows))
	for i, r := range rows {
		out[i] = readmodel.PackageVersionSpan{Version: r.Version, InstalledAt: r.InstalledAt.UTC(), RemovedAt: utc(r.RemovedAt)}
	}
	return out, nil
}

// TreeState reads the installed tree's state, in UTC; nil when no tree was
// ever read.
func (e *Executor) TreeState(ctx context.Context) (*readmodel.TreeState, error) {
	rows, err := e.q.TreeStateRead(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(fmt.Errorf("read the tree's state: %w", err))
	}
	if len(rows) == 0 {
		return nil, nil
	}
	r := rows[0]
	return &readmodel.TreeState{Path: r.Path, Packages: int(r.Packages), ReadAt: r.SyncedAt.UTC(), ChangedAt: r.ChangedAt.UTC()}, nil
}

// ComponentDependencies counts the package instances the component code
// brings in, its own instance (its package pkg, a direct dependency of the
// site) left out.
func (e *Executor) ComponentDependencies(ctx context.Context, code, pkg string) (int, error) {
	n, err := e.q.ComponentDependencies(ctx, e.dbtx, db.ComponentDependenciesParams{Code: code, Package: pkg})
	if err != nil {
		return 0, mapError(fmt.Errorf("count the dependencies of %q: %w", code, err))
	}
	return int(n), nil
}
