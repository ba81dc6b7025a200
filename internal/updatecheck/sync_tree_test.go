package updatecheck

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/wait"
	"github.com/upcheck/upcheck/internal/tree"
)

// treeOfSite: express (a component) → debug, and mocha, a devDependency
// that is no component, → debug.
func treeOfSite(debug string) *tree.Tree {
	t := &tree.Tree{
		Packages: []tree.Package{
			{ID: "node_modules/express", Name: "express", Version: "4.17.1", Source: tree.SourceRegistry},
			{ID: "node_modules/debug", Name: "debug", Version: debug, Source: tree.SourceRegistry},
			{ID: "node_modules/mocha", Name: "mocha", Version: "10.0.0", Source: tree.SourceRegistry, Dev: true},
		},
		Edges: []tree.Edge{
			{From: tree.Root, Name: "express", Range: "^4", Kind: tree.KindProd, To: "node_modules/express"},
			{From: tree.Root, Name: "mocha", Range: "^10", Kind: tree.KindDev, To: "node_modules/mocha"},
			{From: "node_modules/express", Name: "debug", Range: "^4", Kind: tree.KindProd, To: "node_modules/debug"},
			{From: "node_modules/mocha", Name: "debug", Range: "^4", Kind: tree.KindProd, To: "node_modules/debug"},
		},
	}
	t.Sort()
	return t
}

var siteComponents = &manifest.Manifest{Components: []manifest.Component{
	{Code: "core", Name: "express", Version: "4.17.1", Source: "npm:express"},
}}

// The tree's write takes the lease's lock: it waits while a check's
// fenced write (here, any holder of the lock) runs, and then writes the
// whole tree, each package with the components that bring it in.
func TestTreeSyncWaitsForTheLeaseLock(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	s := NewTreeSyncer(b.checker)
	if st, err := s.State(ctx, store.LocalSite); err != nil || st.Epoch != 0 {
		t.Fatalf("state before any sync = %+v, %v", st, err)
	}
	synced := make(chan error, 1)
	err := b.lease.WithLock(ctx, func(*store.Tx) error {
		go func() {
			_, err := s.Sync(ctx, TreeRead{Site: store.LocalSite, Path: "package-lock.json", FileHash: [32]byte{1}, Tree: treeOfSite("4.3.4"), Components: siteComponents})
			synced <- err
		}()
		wait.For(t, "the tree's sync to wait for the lease's lock", 10*time.Second, func() (bool, error) {
			var n int
			err := b.db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&n)
			return n > 0, err
		})
		if _, ok, err := b.store.TreeState(ctx, store.LocalSite); ok || err != nil {
			t.Errorf("a tree was written while the lease's lock was held (%v)", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-synced; err != nil {
		t.Fatal(err)
	}
	debug, err := b.store.TreePackagesByName(ctx, store.LocalSite, "debug")
	if err != nil || len(debug) != 1 || !slices.Equal(debug[0].Components, []string{"core"}) || debug[0].DevOnly {
		t.Fatalf("debug = %+v, %v; want brought in by the component core, not dev-only", debug, err)
	}
	mocha, err := b.store.TreePackagesByName(ctx, store.LocalSite, "mocha")
	if err != nil || len(mocha) != 1 || len(mocha[0].Components) != 0 || !mocha[0].DevOnly {
		t.Fatalf("mocha = %+v, %v; want dev-only, no component", mocha, err)
	}
}

// A sync that read the epoch before another sync wrote is refused and
// writes nothing; read again, it is written, and an unchanged one after it
// writes nothing but its time.
func TestTreeSyncFromAStaleReadIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	s := NewTreeSyncer(b.checker)
	read := func(debug string, st store.TreeState) (TreeReport, error) {
		return s.Sync(ctx, TreeRead{Site: store.LocalSite, Path: "package-lock.json", FileHash: [32]byte{debug[len(debug)-1]}, Tree: treeOfSite(debug),
			Components: siteComponents, State: st})
	}
	stale, _ := s.State(ctx, store.LocalSite)
	if _, err := read("4.3.4", stale); err != nil {
		t.Fatal(err)
	}
	if _, err := read("4.3.5", stale); !errors.Is(err, store.ErrTreeMoved) {
		t.Fatalf("sync from a stale read: %v, want store.ErrTreeMoved", err)
	}
	now, _ := s.State(ctx, store.LocalSite)
	rep, err := read("4.3.5", now)
	if err != nil || rep.Changed != 1 || rep.Installed != 1 || rep.Uninstalled != 1 || rep.Unchanged {
		t.Fatalf("sync read again = %+v, %v; want debug changed, 4.3.5 installed, 4.3.4 uninstalled", rep, err)
	}
	now, _ = s.State(ctx, store.LocalSite)
	if rep, err := read("4.3.5", now); err != nil || !rep.Unchanged {
		t.Fatalf("unchanged sync = %+v, %v", rep, err)
	}
	// The unchanged sync, which takes no lock, moved the epoch too: one
	// that read the state before it is refused, unchanged or not.
	if _, err := read("4.3.5", now); !errors.Is(err, store.ErrTreeMoved) {
		t.Fatalf("unchanged sync from a stale read: %v, want store.ErrTreeMoved", err)
	}
	after, _ := s.State(ctx, store.LocalSite)
	if after.Epoch != now.Epoch+1 || !after.SyncedAt.After(now.SyncedAt) || !after.ChangedAt.Equal(now.ChangedAt) {
		t.Fatalf("state after the unchanged sync = %+v, was %+v; want the epoch and synced_at moved, changed_at not", after, now)
	}
}
