package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/dev/lockgen"
	"github.com/upcheck/upcheck/internal/dev/osvgen"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/tree"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// `components sync --lockfile` stores the installed tree after the
// components and says what changed; the same lockfile again changes
// nothing; a refused lockfile leaves the tree as it was; a manifest's
// sync stores no tree (its dependencies are not checked).
func TestComponentsSyncLockfileStoresTheTree(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	dir := t.TempDir()
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_NPM_REGISTRY": "http://127.0.0.1:9/"}
	manifestPath := filepath.Join(dir, "manifest.json")
	os.WriteFile(manifestPath, []byte(`{"components": [{"code": "core", "name": "Core", "version": "1.0.0"}]}`), 0o644)
	if _, code := cli(t, env, "components", "sync", "--manifest", manifestPath); code != 0 {
		t.Fatal("manifest sync failed")
	}
	states := func() (n int, xmin string) {
		d.QueryRow(t, `SELECT count(*), coalesce(max(xmin::text), '') FROM tree_state`).Scan(&n, &xmin)
		return n, xmin
	}
	if n, _ := states(); n != 0 {
		t.Fatal("a manifest's sync stored a tree")
	}

	lock := filepath.Join(dir, "package-lock.json")
	tr := lockgen.Tree(100, "http://127.0.0.1:9/")
	body, err := lockgen.PackageLock(tr, "site")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(lock, body, 0o644)
	sync := func() updatecheck.SyncReport {
		t.Helper()
		out, code := cli(t, env, "components", "sync", "--lockfile", lock, "--core", lockgen.Name(0))
		var rep updatecheck.SyncReport
		if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || rep.Tree == nil {
			t.Fatalf("lockfile sync: exit %d, %q (%v)", code, out, err)
		}
		return rep
	}
	if rep := sync(); rep.Tree.Packages != len(tr.Packages) || rep.Tree.Added != len(tr.Packages) || rep.Tree.Unchanged {
		t.Fatalf("first sync's tree = %+v; want its %d packages added", *rep.Tree, len(tr.Packages))
	}
	if rep := sync(); !rep.Tree.Unchanged || rep.Tree.Added+rep.Tree.Changed+rep.Tree.Removed != 0 {
		t.Fatalf("the same lockfile again: tree %+v, want unchanged", *rep.Tree)
	}
	_, before := states()
	os.WriteFile(lock, []byte(`{"lockfileVersion": 3, "packages": {`), 0o644)
	if _, code := cli(t, env, "components", "sync", "--lockfile", lock, "--core", lockgen.Name(0)); code != 1 {
		t.Fatalf("a broken lockfile: exit %d, want 1", code)
	}
	if n, after := states(); n != 1 || after != before {
		t.Fatalf("the tree's state after a refused lockfile: %d rows, xmin %s (was %s); want it untouched", n, after, before)
	}
	var stored int
	d.QueryRow(t, `SELECT count(*) FROM tree_packages`).Scan(&stored)
	if stored != len(tr.Packages) {
		t.Fatalf("%d packages stored after a refused lockfile, want the %d of the last good one", stored, len(tr.Packages))
	}
}

// A lockfile sync that changes the tree evaluates its findings at once:
// a package deep in the tree at a version a record the feeds already hold
// affects is a stored finding after `components sync --lockfile`, with no
// check run.
func TestLockfileSyncEvaluatesTheTree(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	dir := t.TempDir()
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_NPM_REGISTRY": "http://127.0.0.1:9/"}
	tr := lockgen.Tree(60, "http://127.0.0.1:9/")
	heads := map[string]bool{}
	for _, e := range tr.Edges {
		if e.From == tree.Root {
			heads[e.To] = true
		}
	}
	var deep tree.Package
	for _, p := range tr.Packages {
		if !heads[p.ID] && !p.Dev && strings.Count(p.ID, "node_modules/") == 1 {
			deep = p
			break
		}
	}
	if deep.ID == "" {
		t.Fatal("lockgen's tree has no transitive package")
	}
	archive := filepath.Join(dir, "all.zip")
	f, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	rec := osvgen.Record("GHSA-aaaa-bbbb-cccc", deep.Name, osvgen.KindVuln, "", "9.0.0")
	if err := osvgen.WriteArchive(f, func(yield func(string, []byte) bool) { yield("GHSA-aaaa-bbbb-cccc", rec) }); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if out, code := cli(t, env, "feed", "import", "osv", archive); code != 0 {
		t.Fatalf("feed import osv: %s (exit %d)", out, code)
	}
	lock := filepath.Join(dir, "package-lock.json")
	body, err := lockgen.PackageLock(tr, "site")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(lock, body, 0o644)
	if out, code := cli(t, env, "components", "sync", "--lockfile", lock, "--core", lockgen.Name(0)); code != 0 {
		t.Fatalf("lockfile sync: %s (exit %d)", out, code)
	}
	var findings, runs int
	d.QueryRow(t, `SELECT count(*) FROM tree_findings WHERE name = $1 AND version = $2 AND advisory_id = 'GHSA-aaaa-bbbb-cccc'`,
		deep.Name, deep.Version).Scan(&findings)
	d.QueryRow(t, `SELECT count(*) FROM check_runs`).Scan(&runs)
	if findings != 1 || runs != 0 {
		t.Fatalf("after the lockfile sync: %d findings of %s@%s, %d checks; want the finding stored, no check run",
			findings, deep.Name, deep.Version, runs)
	}
}
