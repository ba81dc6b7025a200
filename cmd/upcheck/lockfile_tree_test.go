package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/upcheck/upcheck/internal/dev/lockgen"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
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
