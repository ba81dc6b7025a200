package store_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/dev/lockgen"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/tree"
)

// siteTree: express → send → debug@2 (nested), express → debug@4
// (hoisted), mocha (dev) → debug@4, and an optional dependency left out.
func siteTree() *tree.Tree {
	pkg := func(id, name, version string) tree.Package {
		return tree.Package{ID: id, Name: name, Version: version, Source: tree.SourceRegistry, Integrity: "sha512-" + name + version}
	}
	t := &tree.Tree{
		Packages: []tree.Package{
			pkg("node_modules/express", "express", "4.17.1"),
			pkg("node_modules/send", "send", "0.17.1"),
			pkg("node_modules/send/node_modules/debug", "debug", "2.6.9"),
			pkg("node_modules/debug", "debug", "4.3.4"),
			pkg("node_modules/mocha", "mocha", "10.0.0"),
		},
		Edges: []tree.Edge{
			{From: tree.Root, Name: "express", Range: "^4.17.0", Kind: tree.KindProd, To: "node_modules/express"},
			{From: tree.Root, Name: "mocha", Range: "^10", Kind: tree.KindDev, To: "node_modules/mocha"},
			{From: "node_modules/express", Name: "send", Range: "0.17.1", Kind: tree.KindProd, To: "node_modules/send"},
			{From: "node_modules/express", Name: "debug", Range: "^4", Kind: tree.KindProd, To: "node_modules/debug"},
			{From: "node_modules/express", Name: "fsevents", Range: "^2", Kind: tree.KindOptional},
			{From: "node_modules/send", Name: "debug", Range: "2.6.9", Kind: tree.KindProd, To: "node_modules/send/node_modules/debug"},
			{From: "node_modules/mocha", Name: "debug", Range: "^4", Kind: tree.KindProd, To: "node_modules/debug"},
		},
	}
	t.Packages[4].Dev = true
	t.Sort()
	return t
}

// writeTree writes t as the lockfile with content body, from the epoch
// stored now, in a transaction of its own.
func (b *bundle) writeTree(t *testing.T, tr *tree.Tree, body string, components map[string]string) store.TreeWritten {
	t.Helper()
	out, err := b.writeTreeAt(tr, body, components, b.treeEpoch(t))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (b *bundle) writeTreeAt(tr *tree.Tree, body string, components map[string]string, epoch int64) (store.TreeWritten, error) {
	w := &store.TreeWrite{Site: store.LocalSite, Path: "/site/package-lock.json", FileHash: sha256.Sum256([]byte(body)), Tree: tr, Reach: tr.Reach(),
		Components: components, Epoch: epoch}
	if err := w.Prepare(); err != nil { // outside the transaction, as the sync does
		return store.TreeWritten{}, err
	}
	var out store.TreeWritten
	began := time.Now()
	err := b.st.WithTx(context.Background(), func(tx *store.Tx) error {
		var err error
		out, err = tx.TreeWrite(context.Background(), w)
		return err
	})
	b.held = time.Since(began)
	return out, err
}

func (b *bundle) treeEpoch(t *testing.T) int64 {
	t.Helper()
	s, _, err := b.st.TreeState(context.Background(), store.LocalSite)
	if err != nil {
		t.Fatal(err)
	}
	return s.Epoch
}

// versions says each row of the tables' current version: a row written
// again (updated, or deleted and inserted) has another xmin.
func (b *bundle) versions(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	rows, err := b.db.Pool.Query(context.Background(), `
		SELECT 'p:' || id, xmin::text FROM tree_packages
		UNION ALL SELECT 'e:' || from_id || '>' || name || '/' || kind, xmin::text FROM tree_edges
		UNION ALL SELECT 'v:' || id, xmin::text FROM tree_versions`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// rewritten counts the rows of after that before did not hold as they are.
func rewritten(before, after map[string]string) (packages, edges, versions int) {
	for k, v := range after {
		if before[k] == v {
			continue
		}
		switch k[0] {
		case 'p':
			packages++
		case 'e':
			edges++
		case 'v':
			versions++
		}
	}
	return
}

// A written tree reads back: its instances with their ways in and
// components, its state, the history's open intervals.
func TestTreeWriteStoresTheTree(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	if _, ok, err := b.st.TreeState(ctx, store.LocalSite); err != nil || ok {
		t.Fatalf("TreeState before any write: ok %v, %v; want none (dependencies not checked)", ok, err)
	}
	tr := siteTree()
	w := b.writeTree(t, tr, "v1", map[string]string{"express": "npm:express"})
	if w.Unchanged || w.Added != 5 || w.EdgesAdded != 7 || w.Opened != 5 || w.Closed != 0 {
		t.Fatalf("first write = %+v; want 5 packages, 7 edges, 5 intervals opened", w)
	}
	st, ok, err := b.st.TreeState(ctx, store.LocalSite)
	if err != nil || !ok || st.Packages != 5 || st.Epoch != 1 || !st.SyncedAt.Equal(w.At) || !st.ChangedAt.Equal(w.At) ||
		st.Path != "/site/package-lock.json" {
		t.Fatalf("state = %+v, %v, %v", st, ok, err)
	}
	debug, err := b.st.TreePackagesByName(ctx, store.LocalSite, "debug")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.TreePackage{
		{Package: tree.Package{ID: "node_modules/send/node_modules/debug", Name: "debug", Version: "2.6.9", Source: tree.SourceRegistry,
			Integrity: "sha512-debug2.6.9"}, Via: []tree.Via{{Head: "express", Path: []string{"express", "send", "debug"}}},
			Components: []string{"npm:express"}},
		{Package: tree.Package{ID: "node_modules/debug", Name: "debug", Version: "4.3.4", Source: tree.SourceRegistry,
			Integrity: "sha512-debug4.3.4"}, Via: []tree.Via{{Head: "express", Path: []string{"express", "debug"}},
			{Head: "mocha", Path: []string{"mocha", "debug"}}}, Components: []string{"npm:express"}},
	}
	if !reflect.DeepEqual(debug, want) {
		t.Fatalf("debug's instances = %+v\nwant %+v", debug, want)
	}
	var all []store.TreeInstalled
	if err := b.st.TreeEach(ctx, store.LocalSite, func(p store.TreeInstalled) error { all = append(all, p); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(all) != 5 || all[2].ID != "node_modules/mocha" || !all[2].DevOnly || len(all[2].Components) != 0 {
		t.Fatalf("TreeEach = %+v", all)
	}
	hist, err := b.st.TreeVersionsOf(ctx, store.LocalSite, "debug")
	if err != nil || len(hist) != 2 || hist[0].RemovedAt != nil || !hist[0].InstalledAt.Equal(w.At) {
		t.Fatalf("debug's history = %+v, %v; want two open intervals from %s", hist, err, w.At)
	}
}

// An unchanged re-sync writes the state's row alone: the same file, or
// another file (reformatted) with the same tree. Another map of
// components is a change, though the file is the same.
func TestTreeUnchangedRewriteWritesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	comps := map[string]string{"express": "npm:express"}
	first := b.writeTree(t, siteTree(), "v1", comps)
	before := b.versions(t)
	for _, body := range []string{"v1", "v1 reformatted"} {
		w := b.writeTree(t, siteTree(), body, comps)
		if !w.Unchanged || w.Added+w.Changed+w.Removed+w.Opened+w.Closed != 0 {
			t.Fatalf("re-write of %q = %+v; want unchanged", body, w)
		}
		if p, e, v := rewritten(before, b.versions(t)); p+e+v != 0 {
			t.Fatalf("re-write of %q rewrote %d packages, %d edges, %d intervals; want none", body, p, e, v)
		}
		st, _, _ := b.st.TreeState(ctx, store.LocalSite)
		if !st.ChangedAt.Equal(first.At) || !st.SyncedAt.Equal(w.At) || !w.At.After(first.At) {
			t.Fatalf("state after the re-write of %q = %+v; want changed at %s, synced at %s", body, st, first.At, w.At)
		}
	}
	w := b.writeTree(t, siteTree(), "v1 reformatted", map[string]string{"express": "npm:express", "mocha": "npm:mocha"})
	if w.Unchanged || w.Changed != 2 || w.Added+w.Removed+w.Opened+w.Closed != 0 {
		t.Fatalf("write with mocha a component = %+v; want mocha and debug@4 changed", w)
	}
	if p, e, v := rewritten(before, b.versions(t)); p != 2 || e+v != 0 {
		t.Fatalf("rewrote %d packages, %d edges, %d intervals; want 2, 0, 0", p, e, v)
	}
}

// A changed tree rewrites only what changed; the history closes the
// versions no longer installed and opens the new ones at one instant of
// the database's clock, the state's changed_at.
func TestTreeChangedRewritesOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	tr := lockgen.Tree(3000, "http://127.0.0.1:1/")
	comps := map[string]string{lockgen.Name(0): "npm:" + lockgen.Name(0)}
	first := b.writeTree(t, tr, "v1", comps)
	t.Logf("first write: %d packages, %d edges, its transaction %s", len(tr.Packages), len(tr.Edges), b.held)
	if first.Added != 3000 || first.EdgesAdded != len(tr.Edges) {
		t.Fatalf("first write = %+v", first)
	}
	before := b.versions(t)
	bumped := lockgen.Bump(tr, 10)
	edges := 0 // the edges to the packages bumped change their range
	for _, e := range tr.Edges {
		if bumped[e.To] {
			edges++
		}
	}
	tr.Packages = tr.Packages[:len(tr.Packages)-1] // and one entry nothing depends on goes
	w := b.writeTree(t, tr, "v2", comps)
	t.Logf("re-write changing 10 packages: its transaction %s", b.held)
	if w.Changed != 10 || w.Removed != 1 || w.Added != 0 || w.EdgesChanged != edges || w.EdgesAdded+w.EdgesRemoved != 0 {
		t.Fatalf("re-write = %+v; want 10 packages changed and 1 removed, %d edges changed", w, edges)
	}
	after := b.versions(t)
	if p, e, v := rewritten(before, after); p != 10 || e != edges || v != w.Closed+w.Opened {
		t.Fatalf("rewrote %d packages, %d edges, %d intervals; want 10, %d, %d", p, e, v, edges, w.Closed+w.Opened)
	}
	if w.Opened != 10 || w.Closed != 11 {
		t.Fatalf("history: %d opened, %d closed; want the 10 new versions opened, their old ones and the entry gone closed", w.Opened, w.Closed)
	}
	hist, err := b.st.TreeVersionsOf(ctx, store.LocalSite, lockgen.Name(lockgen.Heads))
	if err != nil {
		t.Fatal(err)
	}
	var now, was *store.TreeVersion
	for i, v := range hist {
		switch {
		case v.Version == "1.1.0":
			now = &hist[i]
		case strings.HasPrefix(v.Version, "1.0."):
			was = &hist[i]
		}
	}
	if now == nil || was == nil || now.RemovedAt != nil || !now.InstalledAt.Equal(w.At) ||
		was.RemovedAt == nil || !was.RemovedAt.Equal(w.At) || !was.InstalledAt.Equal(first.At) {
		t.Fatalf("history of %s = %+v; want 1.1.0 from %s, the old version from %s to %s", lockgen.Name(lockgen.Heads), hist, w.At, first.At, w.At)
	}
	var dbNow time.Time
	b.db.QueryRow(t, `SELECT clock_timestamp()`).Scan(&dbNow)
	if w.At.After(dbNow) || !w.At.After(first.At) {
		t.Fatalf("the write's time %s is not the database's (now %s, first write %s)", w.At, dbNow, first.At)
	}
}

// A sync whose read of the state is older than the stored tree writes
// nothing: another sync wrote meanwhile, from a read of the file that may
// be newer.
func TestTreeWriteRefusesAStaleEpoch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	comps := map[string]string{}
	stale := b.treeEpoch(t) // both syncs read the state: none yet
	newer := siteTree()
	for i := range newer.Packages {
		if newer.Packages[i].Name == "express" {
			newer.Packages[i].Version = "4.18.0"
		}
	}
	b.writeTree(t, newer, "v2", comps)
	if _, err := b.writeTreeAt(siteTree(), "v1", comps, stale); !errors.Is(err, store.ErrTreeMoved) {
		t.Fatalf("stale write: %v, want ErrTreeMoved", err)
	}
	ex, err := b.st.TreePackagesByName(context.Background(), store.LocalSite, "express")
	if err != nil || len(ex) != 1 || ex[0].Version != "4.18.0" {
		t.Fatalf("express after the stale write = %+v, %v; want the newer sync's 4.18.0", ex, err)
	}
	// An unchanged re-sync moves the epoch too: a sync that read before
	// it is refused.
	stale = b.treeEpoch(t)
	b.writeTree(t, newer, "v2", comps)
	if _, err := b.writeTreeAt(siteTree(), "v1", comps, stale); !errors.Is(err, store.ErrTreeMoved) {
		t.Fatalf("write from before an unchanged re-sync: %v, want ErrTreeMoved", err)
	}
}

// Housekeeping's purge deletes the intervals that ended before the
// retention, never one still open, judged on the database's clock.
func TestTreeVersionsPurge(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// Written by hand: the lockfile sync stamps intervals with the
	// database's now, and these ended hundreds of days ago.
	b.exec(t, `INSERT INTO tree_versions (name, version, installed_at, removed_at) VALUES
		('debug', '4.4.2', clock_timestamp() - interval '500 days', clock_timestamp() - interval '401 days'),
		('debug', '4.4.1', clock_timestamp() - interval '500 days', clock_timestamp() - interval '399 days'),
		('debug', '4.4.3', clock_timestamp() - interval '500 days', NULL)`)
	n, err := b.st.TreeVersionsPurge(context.Background(), 400*24*time.Hour)
	if err != nil || n != 1 {
		t.Fatalf("purge: %d, %v; want 1", n, err)
	}
	if left := b.count(t, `SELECT count(*) FROM tree_versions WHERE version IN ('4.4.1', '4.4.3')`); left != 2 {
		t.Fatalf("%d of the recent and the open interval left, want 2", left)
	}
}
