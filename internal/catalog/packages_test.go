package catalog

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/treekit"
	"github.com/upcheck/upcheck/internal/tree"
)

// writeTree replaces the installed tree with the one of lines
// (treekit.Tree), as the lockfile sync writes it: express and socket.io
// are components.
func writeTree(t testing.TB, b *bundle, lines ...string) {
	t.Helper()
	treekit.Write(t, b.store, "package-lock.json", treekit.Tree(t, lines...),
		map[string]string{"express": "express", "socket.io": "socket.io"})
}

// site is a small tree: express (a component) brings send and debug 2.6.9,
// socket.io (a component) brings ws 8.11.0 nested, the site has ws 8.17.1
// at the top, a dev-only debug 4.3.4 under mocha, a git dependency and a
// package with an install script.
func site() []string {
	return []string{
		"node_modules/express 4.17.1",
		"node_modules/send 0.17.1 by=express",
		"node_modules/send/node_modules/debug 2.6.9",
		"node_modules/mocha 10.0.0 dev",
		"node_modules/debug 4.3.4 dev by=mocha",
		"node_modules/socket.io 4.5.0",
		"node_modules/engine.io 6.2.0 by=socket.io",
		"node_modules/engine.io/node_modules/ws 8.11.0",
		"node_modules/ws 8.17.1",
		"node_modules/left-pad 1.3.0 git",
		"node_modules/esbuild 0.19.0 dev script",
	}
}

func names(rows []readmodel.PackageRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Name
	}
	return out
}

// Each filter lists what it counts, by its predicate; search and a
// component narrow both; every package is one row however many
// instances, with its versions, heads and shortest path.
func TestPackagesFilters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	writeTree(t, b, site()...)
	for _, tc := range []struct {
		f    store.PackageFilter
		want []string
	}{
		{store.PackageFilter{}, []string{"debug", "engine.io", "esbuild", "express", "left-pad", "mocha", "send", "socket.io", "ws"}},
		{store.PackageFilter{Filter: readmodel.PackagesDev}, []string{"esbuild", "mocha"}},
		{store.PackageFilter{Filter: readmodel.PackagesScripts}, []string{"esbuild"}},
		{store.PackageFilter{Filter: readmodel.PackagesSources}, []string{"left-pad"}},
		{store.PackageFilter{Component: "express"}, []string{"debug", "express", "send"}},
		{store.PackageFilter{Component: "socket.io", Search: "W"}, []string{"ws"}},
		{store.PackageFilter{Search: "DEB"}, []string{"debug"}},
		{store.PackageFilter{Search: "%"}, []string{}},
	} {
		tc.f.Limit = 100
		page, err := b.reads.Packages(ctx, store.LocalSite, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(page.Rows); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.f, got, tc.want)
		}
		if n := page.Counts.Of(tc.f.Filter); n != len(tc.want) {
			t.Errorf("%+v: counted %d, listed %d", tc.f, n, len(tc.want))
		}
		if page.Next != "" || page.Tree == nil || page.Tree.Packages != len(site()) {
			t.Errorf("%+v: next %q, tree %+v", tc.f, page.Next, page.Tree)
		}
	}
	page, err := b.reads.Packages(ctx, store.LocalSite, store.PackageFilter{Search: "ws", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	ws := page.Rows[0]
	if !slices.Equal(ws.Versions, []string{"8.11.0", "8.17.1"}) || ws.Instances != 2 || !slices.Equal(ws.Heads, []string{"socket.io", "ws"}) ||
		!slices.Equal(ws.Components, []string{"socket.io"}) || !slices.Equal(ws.Path, []string{"ws"}) || ws.Dev {
		t.Errorf("ws: %+v", ws)
	}
	page, _ = b.reads.Packages(ctx, store.LocalSite, store.PackageFilter{Search: "debug", Limit: 10})
	if d := page.Rows[0]; d.Dev || !slices.Equal(d.Path, []string{"mocha", "debug"}) {
		t.Errorf("debug is installed for production too, and its shortest path is mocha's: %+v", d)
	}
}

// Keyset paging walks every package once, and a package added before the
// cursor does not shift the pages after it.
func TestPackagesKeyset(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	writeTree(t, b, site()...)
	var got []string
	after := ""
	for range 10 {
		page, err := b.reads.Packages(ctx, store.LocalSite, store.PackageFilter{Limit: 2, After: after})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, names(page.Rows)...)
		if page.Next == "" {
			break
		}
		after = page.Next
		if after == "express" { // the second page was read: something sorts in before the cursor
			writeTree(t, b, append(site(), "node_modules/accepts 1.3.8 by=express")...)
		}
	}
	want := []string{"debug", "engine.io", "esbuild", "express", "left-pad", "mocha", "send", "socket.io", "ws"}
	if !slices.Equal(got, want) {
		t.Errorf("pages of 2: %v, want %v", got, want)
	}
}

// One package: every instance with its paths, and its history; a name
// the tree never installed is not found; without a tree, nothing is
// read as safe: Tree is nil.
func TestPackage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	page, err := b.reads.Packages(ctx, store.LocalSite, store.PackageFilter{Limit: 10})
	if err != nil || page.Tree != nil || len(page.Rows) != 0 {
		t.Fatalf("no tree: %+v, %v", page, err)
	}
	if sum, err := b.store.Summary(ctx, store.LocalSite, readmodel.DevSeparate); err != nil || sum.TreePackages != nil || sum.TreeReadAt != nil {
		t.Fatalf("the summary of no tree: %v, %v, %v", sum.TreePackages, sum.TreeReadAt, err)
	}
	// The history: a sync with ws 8.2.0 at the top and gone, then one
	// with ws 8.17.1 there and gone gone.
	before := slices.DeleteFunc(site(), func(l string) bool { return l == "node_modules/ws 8.17.1" })
	writeTree(t, b, append(before, "node_modules/ws 8.2.0", "node_modules/gone 1.0.0")...)
	writeTree(t, b, site()...)
	if sum, err := b.store.Summary(ctx, store.LocalSite, readmodel.DevSeparate); err != nil || sum.TreePackages == nil || *sum.TreePackages != len(site()) || sum.TreeReadAt == nil {
		t.Fatalf("the summary of a tree: %v, %v, %v", sum.TreePackages, sum.TreeReadAt, err)
	}
	treekit.WriteFixes(t, b.store, store.TreeFix{PackageID: "node_modules/engine.io/node_modules/ws", AdvisoryID: "GHSA-1",
		Fix: []byte(`{"kind": "none_yet", "package": "ws", "component": "socket.io", "pinned_by": "engine.io",
		  "pinned_by_version": "6.2.0", "range": "~8.11.0"}`)})
	p, err := b.reads.Package(ctx, store.LocalSite, "ws", readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	if f := p.Instances[0].Fixes; len(f) != 1 || f[0].AdvisoryID != "GHSA-1" ||
		f[0].Text != "no fix yet through socket.io: engine.io 6.2.0 requires ws ~8.11.0" || len(p.Instances[1].Fixes) != 0 {
		t.Errorf("fixes: %+v, %+v", p.Instances[0].Fixes, p.Instances[1].Fixes)
	}
	if len(p.Instances) != 2 || p.Instances[0].ID != "node_modules/engine.io/node_modules/ws" ||
		!slices.Equal(p.Instances[0].Via[0].Path, []string{"socket.io", "engine.io", "ws"}) || p.Instances[1].Version != "8.17.1" {
		t.Errorf("instances: %+v", p.Instances)
	}
	if len(p.History) != 3 || p.History[0].Version != "8.17.1" || p.History[2].RemovedAt == nil || p.History[0].RemovedAt != nil {
		t.Errorf("history: %+v", p.History)
	}
	if g, err := b.reads.Package(ctx, store.LocalSite, "gone", readmodel.DevSeparate); err != nil || len(g.Instances) != 0 || len(g.History) != 1 {
		t.Errorf("a package removed is still read by its history: %+v, %v", g, err)
	}
	if _, err := b.reads.Package(ctx, store.LocalSite, "never", readmodel.DevSeparate); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a package never installed: %v", err)
	}
}

// A component's page counts what it brings in, itself left out; without
// a tree it reads none (nil: not checked).
func TestDetailDependencies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.db.MustExec(t, `INSERT INTO components (code, name, installed_version, source_url, package) VALUES
		('express', 'express', '4.17.1', 'npm:express', 'express'), ('socket.io', 'socket.io', '4.5.0', 'npm:socket.io', 'socket.io')`)
	d, err := b.reads.Detail(ctx, "express")
	if err != nil || d.Dependencies != nil {
		t.Fatalf("no tree: %v, %v", d.Dependencies, err)
	}
	writeTree(t, b, site()...)
	for code, want := range map[string]int{"express": 2, "socket.io": 2} {
		d, err := b.reads.Detail(ctx, code)
		if err != nil {
			t.Fatal(err)
		}
		if d.Dependencies == nil || *d.Dependencies != want {
			t.Errorf("%s: %v, want %d packages", code, d.Dependencies, want)
		}
	}
}

// A package's page is one moment of the tree: while another connection
// swaps a tree of three ws instances for one of one, in one transaction
// each, every read counts the instances the tree it read says it holds.
func TestPackageIsOneSnapshot(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	// Three instances nothing depends on (entries the lockfile keeps):
	// the tree's packages are ws's instances alone.
	three := []string{"node_modules/ws 1.0.0", "node_modules/a/node_modules/ws 2.0.0", "node_modules/b/node_modules/ws 3.0.0"}
	trees := [2]*tree.Tree{treekit.Tree(t, three[:1]...), treekit.Tree(t, three...)}
	writeTree(t, b, three...)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			// The lockfile sync's write, one of one ws, then one of three.
			err := b.store.WithTx(ctx, func(tx *store.Tx) error {
				st, _, err := tx.TreeState(ctx, store.LocalSite)
				if err != nil {
					return err
				}
				_, err = tx.TreeWrite(ctx, &store.TreeWrite{Site: store.LocalSite, Path: "package-lock.json", FileHash: [32]byte{byte(i)}, Tree: trees[i%2],
					Epoch: st.Epoch})
				return err
			})
			if err != nil {
				t.Error(err)
				return
			}
		}
	})
	var mixed, one, many int
	for range 400 {
		p, err := b.reads.Package(ctx, store.LocalSite, "ws", readmodel.DevSeparate)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case len(p.Instances) != p.Tree.Packages:
			mixed++
		case len(p.Instances) == 1:
			one++
		default:
			many++
		}
	}
	close(done)
	wg.Wait()
	if mixed > 0 {
		t.Errorf("%d reads of 400 mixed two trees (%d of one, %d of three)", mixed, one, many)
	}
	if one == 0 || many == 0 {
		t.Errorf("the writer raced no read: %d of one, %d of three", one, many)
	}
}

// treeFinding is one finding of the tree, written as its evaluation
// writes them (treekit.WriteFindings).
type treeFinding struct {
	name, version, id               string
	malicious, exploited, withdrawn bool
}

// writeFindings replaces the tree's findings with fs.
func writeFindings(t testing.TB, b *bundle, fs ...treeFinding) {
	t.Helper()
	var out []store.TreeFinding
	for _, f := range fs {
		a := release.AdvisoryMatch{Advisory: release.Advisory{ID: f.id, Severity: "high", Affected: "*", FixedIn: "9.9.9"},
			Malicious: f.malicious, KnownExploited: f.exploited}
		out = append(out, treekit.Finding(t, f.name, f.version, a, f.withdrawn))
	}
	treekit.WriteFindings(t, b.store, out, nil)
}

// The findings' filters list the packages with a finding the dev mode
// shows (upcheck_tree_shown), withdrawn ones left out, and count what
// they list: omit hides a development package's advisory, never a
// malicious one.
func TestPackagesFindingFilters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	writeTree(t, b, site()...)
	writeFindings(t, b,
		treeFinding{name: "ws", version: "8.11.0", id: "GHSA-ws", exploited: true},
		treeFinding{name: "esbuild", version: "0.19.0", id: "GHSA-esbuild"},
		treeFinding{name: "mocha", version: "10.0.0", id: "MAL-mocha", malicious: true},
		treeFinding{name: "send", version: "0.17.1", id: "GHSA-send", withdrawn: true},
		treeFinding{name: "debug", version: "9.9.9", id: "GHSA-not-installed"})
	for _, tc := range []struct {
		mode readmodel.DevMode
		f    readmodel.PackageFilter
		want []string
	}{
		{readmodel.DevSeparate, readmodel.PackagesVulnerable, []string{"esbuild", "mocha", "ws"}},
		{readmodel.DevInclude, readmodel.PackagesVulnerable, []string{"esbuild", "mocha", "ws"}},
		{readmodel.DevOmit, readmodel.PackagesVulnerable, []string{"mocha", "ws"}},
		{readmodel.DevOmit, readmodel.PackagesMalicious, []string{"mocha"}},
		{readmodel.DevSeparate, readmodel.PackagesExploited, []string{"ws"}},
	} {
		f := store.PackageFilter{Filter: tc.f, DevMode: tc.mode, Limit: 100}
		page, err := b.reads.Packages(ctx, store.LocalSite, f)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(page.Rows); !slices.Equal(got, tc.want) {
			t.Errorf("%s %s: %v, want %v", tc.mode, tc.f, got, tc.want)
		}
		if n := page.Counts.Of(tc.f); n != len(tc.want) {
			t.Errorf("%s %s: counted %d, listed %d", tc.mode, tc.f, n, len(tc.want))
		}
	}
}

// A package's page lists on each instance the findings of its version
// the dev mode shows: separate lists a development package's apart (not
// counted), omit hides it, include counts it; a withdrawn one is listed,
// never counted.
func TestPackageFindings(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	writeTree(t, b, site()...)
	writeFindings(t, b,
		treeFinding{name: "ws", version: "8.11.0", id: "GHSA-ws", exploited: true},
		treeFinding{name: "ws", version: "8.11.0", id: "GHSA-old", withdrawn: true},
		treeFinding{name: "esbuild", version: "0.19.0", id: "GHSA-esbuild"})
	p, err := b.reads.Package(ctx, store.LocalSite, "ws", readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range p.Instances {
		switch in.Version {
		case "8.11.0":
			if len(in.Findings) != 2 {
				t.Fatalf("ws 8.11.0: %+v", in.Findings)
			}
			old, f := in.Findings[0], in.Findings[1]
			if f.AdvisoryID != "GHSA-ws" || !f.KnownExploited || !f.Counted || f.Dev || f.FixedIn == nil || *f.FixedIn != "9.9.9" ||
				f.Severity != "high" {
				t.Errorf("ws 8.11.0's finding: %+v", f)
			}
			if !old.Withdrawn || old.Counted {
				t.Errorf("a withdrawn finding: %+v", old)
			}
		default:
			if len(in.Findings) != 0 {
				t.Errorf("ws %s has no advisory: %+v", in.Version, in.Findings)
			}
		}
	}
	for mode, want := range map[readmodel.DevMode]int{readmodel.DevSeparate: 1, readmodel.DevInclude: 1, readmodel.DevOmit: 0} {
		p, err := b.reads.Package(ctx, store.LocalSite, "esbuild", mode)
		if err != nil {
			t.Fatal(err)
		}
		fs := p.Instances[0].Findings
		if len(fs) != want {
			t.Fatalf("%s: esbuild's findings %+v", mode, fs)
		}
		if want == 1 && (!fs[0].Dev || fs[0].Counted != (mode == readmodel.DevInclude)) {
			t.Errorf("%s: esbuild's finding %+v", mode, fs[0])
		}
	}
}

// A package's versions sort as versions (npmver.Compare), not as text:
// 9.0.0 before 10.0.0-beta.1 before 10.0.0 before 11.0.0, in the list's
// versions and the instances; the history, newest interval first, lists
// the versions one sync installed newest first.
func TestPackageVersionsSortAsVersions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	writeTree(t, b, "node_modules/ws 2.0.0")
	writeTree(t, b, "node_modules/ws 10.0.0", "node_modules/a 1.0.0", "node_modules/a/node_modules/ws 9.0.0",
		"node_modules/b 1.0.0", "node_modules/b/node_modules/ws 11.0.0", "node_modules/c 1.0.0", "node_modules/c/node_modules/ws 10.0.0-beta.1")
	asc := []string{"9.0.0", "10.0.0-beta.1", "10.0.0", "11.0.0"}
	page, err := b.reads.Packages(ctx, store.LocalSite, store.PackageFilter{Search: "ws", Limit: 10})
	if err != nil || len(page.Rows) != 1 {
		t.Fatalf("ws: %+v, %v", page.Rows, err)
	}
	if got := page.Rows[0].Versions; !slices.Equal(got, asc) {
		t.Errorf("the list's versions of ws: %v, want %v", got, asc)
	}
	p, err := b.reads.Package(ctx, store.LocalSite, "ws", readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	var instances, history []string
	for _, in := range p.Instances {
		instances = append(instances, in.Version)
	}
	for _, h := range p.History {
		history = append(history, h.Version)
	}
	if !slices.Equal(instances, asc) {
		t.Errorf("ws's instances: %v, want %v", instances, asc)
	}
	if want := []string{"11.0.0", "10.0.0", "10.0.0-beta.1", "9.0.0", "2.0.0"}; !slices.Equal(history, want) {
		t.Errorf("ws's history: %v, want %v", history, want)
	}
}
