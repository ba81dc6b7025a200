package store

// The installed tree's reads: its instances by name, every instance for an
// evaluation, and the history of a package's versions (tree.go writes them).

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/npmver"
	"github.com/upcheck/upcheck/internal/tree"
)

// TreePackage is a stored package instance with how the site reaches it.
type TreePackage struct {
	tree.Package
	DevOnly bool
	Via     []tree.Via
	// Components are the codes of the components that bring it in.
	Components []string
}

// TreePackagesByName reads every installed instance of the package name,
// by version as versions sort (npmver.Compare: 9.0.0 before 10.0.0), then
// by where it sits.
func (e *Executor) TreePackagesByName(ctx context.Context, site int64, name string) ([]TreePackage, error) {
	rows, err := e.q.TreePackagesByName(ctx, e.dbtx, db.TreePackagesByNameParams{Site: site, Name: name})
	if err != nil {
		return nil, fmt.Errorf("read tree packages: %w", mapError(err))
	}
	out := make([]TreePackage, len(rows))
	for i, r := range rows {
		out[i] = TreePackage{Package: tree.Package{ID: r.ID, Name: r.Name, Alias: r.Alias, Version: r.Version, Dev: r.Dev,
			Optional: r.Optional, Peer: r.Peer, Source: tree.Source(r.Source), Resolved: r.Resolved, Integrity: r.Integrity,
			InstallScript: r.InstallScript}, DevOnly: r.DevOnly, Components: r.Components}
		if out[i].Via, err = viaOf(r.Via); err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(out, func(a, b TreePackage) int {
		return cmp.Or(npmver.Compare(a.Version, b.Version), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// viaOf reads tree_packages.via.
func viaOf(b []byte) ([]tree.Via, error) {
	var vs []treeVia
	if err := json.Unmarshal(b, &vs); err != nil {
		return nil, fmt.Errorf("read tree packages: via: %w", err)
	}
	out := make([]tree.Via, len(vs))
	for i, v := range vs {
		out[i] = tree.Via{Head: v.Head, Path: v.Path}
	}
	return out, nil
}

// TreeInstalled is what evaluation reads of an installed instance.
type TreeInstalled struct {
	ID, Name, Version string
	DevOnly           bool
	Components        []string
	Via               []tree.Via
}

// treePage is how many instances TreeEach reads a round trip.
const treePage = 1000

// TreeEach hands every installed instance to fn, in the order of their
// IDs, reading them in pages of a thousand within one repeatable-read
// transaction: all of them are of one tree, even when a sync writes
// another meanwhile. An error of fn stops the read and is returned.
func (s *Store) TreeEach(ctx context.Context, site int64, fn func(TreeInstalled) error) error {
	return s.ReadTx(ctx, func(tx *Tx) error {
		after := ""
		for {
			rows, err := tx.q.TreePackagesPage(ctx, tx.tx, db.TreePackagesPageParams{Site: site, After: after, Lim: treePage})
			if err != nil {
				return fmt.Errorf("read tree: %w", mapError(err))
			}
			for _, r := range rows {
				via, err := viaOf(r.Via)
				if err != nil {
					return err
				}
				if err := fn(TreeInstalled{ID: r.ID, Name: r.Name, Version: r.Version, DevOnly: r.DevOnly,
					Components: r.Components, Via: via}); err != nil {
					return err
				}
			}
			if len(rows) < treePage {
				return nil
			}
			after = rows[len(rows)-1].ID
		}
	})
}

// TreeVersion is one interval of the history: Version of Name was
// installed from InstalledAt until RemovedAt (nil: installed now).
type TreeVersion struct {
	Name, Version string
	InstalledAt   time.Time
	RemovedAt     *time.Time
}

// TreeVersionsOf reads the history of the package name, newest interval
// first, and of intervals opened at one instant the newest version first
// (npmver.Compare).
func (e *Executor) TreeVersionsOf(ctx context.Context, site int64, name string) ([]TreeVersion, error) {
	rows, err := e.q.TreeVersionsOf(ctx, e.dbtx, db.TreeVersionsOfParams{Site: site, Name: name})
	if err != nil {
		return nil, fmt.Errorf("read tree history: %w", mapError(err))
	}
	out := make([]TreeVersion, len(rows))
	for i, r := range rows {
		out[i] = TreeVersion{Name: r.Name, Version: r.Version, InstalledAt: r.InstalledAt, RemovedAt: r.RemovedAt}
	}
	// Intervals opened by one sync, at one instant: the newer version
	// first, as versions sort.
	slices.SortStableFunc(out, func(a, b TreeVersion) int {
		return cmp.Or(b.InstalledAt.Compare(a.InstalledAt), npmver.Compare(b.Version, a.Version))
	})
	return out, nil
}

// TreeVersionsPurge deletes the history's intervals that ended more than
// keep ago on the database's clock, and reports how many; an interval
// still open is kept however old.
func (e *Executor) TreeVersionsPurge(ctx context.Context, keep time.Duration) (int64, error) {
	n, err := e.q.TreeVersionsPurge(ctx, e.dbtx, keep.Seconds())
	if err != nil {
		return 0, mapError(fmt.Errorf("purge tree history: %w", err))
	}
	return n, nil
}
