package lockfile_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/lockfile"
	"github.com/upcheck/upcheck/internal/tree"
)

func edgeTo(tr *tree.Tree, from, name string) (tree.Edge, bool) {
	i := slices.IndexFunc(tr.Edges, func(e tree.Edge) bool { return e.From == from && e.Name == name })
	if i < 0 {
		return tree.Edge{}, false
	}
	return tr.Edges[i], true
}

// A cycle (npm's trees have them) is read, and the site's reach walks it
// once; a dependency is resolved to the nearest node_modules up the
// dependent's path; an alias is its real package.
func TestNpmTreeCycleNestingAndAlias(t *testing.T) {
	t.Parallel()
	body := `{"lockfileVersion": 3, "packages": {
  "": {"dependencies": {"a": "^1", "x": "npm:real@^2"}},
  "node_modules/a": {"version": "1.0.0", "dependencies": {"b": "^1", "c": "^2", "d": "^1"}},
  "node_modules/a/node_modules/d": {"version": "1.0.0", "dependencies": {"c": "^2"}},
  "node_modules/b": {"version": "1.0.0", "dependencies": {"a": "^1", "c": "^1"}},
  "node_modules/c": {"version": "1.0.0"},
  "node_modules/a/node_modules/c": {"version": "2.0.0"},
  "node_modules/x": {"name": "real", "version": "2.0.1", "resolved": "http://127.0.0.1:1/real/-/real-2.0.1.tgz"}
}}`
	l, err := lockfile.Parse("package-lock.json", []byte(body), lockfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, name, to string }{
		{"node_modules/a", "b", "node_modules/b"},
		{"node_modules/b", "a", "node_modules/a"},
		{"node_modules/a", "c", "node_modules/a/node_modules/c"},
		{"node_modules/b", "c", "node_modules/c"},
		{"node_modules/a/node_modules/d", "c", "node_modules/a/node_modules/c"},
		{tree.Root, "x", "node_modules/x"},
	} {
		if e, ok := edgeTo(l.Tree, c.from, c.name); !ok || e.To != c.to {
			t.Errorf("%s → %s: %+v, want to %s", c.from, c.name, e, c.to)
		}
	}
	if i := slices.IndexFunc(l.Tree.Packages, func(p tree.Package) bool { return p.ID == "node_modules/x" }); i < 0 ||
		l.Tree.Packages[i].Name != "real" || l.Tree.Packages[i].Alias != "x" || l.Tree.Packages[i].Source != tree.SourceRegistry {
		t.Errorf("the alias: %+v", l.Tree.Packages)
	}
	reach := l.Tree.Reach()
	if r := reach["node_modules/b"]; r == nil || len(r.Via) != 1 || !slices.Equal(r.Via[0].Path, []string{"a", "b"}) {
		t.Errorf("b reached %+v, want through a → b", r)
	}
	if r := reach["node_modules/a"]; r == nil || len(r.Via) != 1 || !slices.Equal(r.Via[0].Path, []string{"a"}) {
		t.Errorf("a reached %+v, want as the head a", r)
	}
	if len(reach) != 6 {
		t.Errorf("reached %d packages, want 6", len(reach))
	}
}

// A required dependency installed nowhere is kept as an edge to nothing
// and said with its line and field; an optional or a peer one left out is
// no fault; an entry without a version refuses the lockfile, naming its
// line and field, nested or not.
func TestDanglingEdgesAndEntriesWithoutVersion(t *testing.T) {
	t.Parallel()
	npm := `{"lockfileVersion": 3, "packages": {
  "": {"dependencies": {"a": "^1"}, "optionalDependencies": {"o": "^1"}},
  "node_modules/a": {"version": "1.0.0", "dependencies": {"gone": "^3"}, "peerDependencies": {"p": "^1"}}
}}`
	pnpm := `lockfileVersion: '9.0'
importers:
  .:
    dependencies:
      a:
        specifier: ^1
        version: 1.0.0
packages:
  a@1.0.0:
    resolution: {integrity: sha512-x}
    peerDependencies:
      p: ^1
snapshots:
  a@1.0.0:
    dependencies:
      gone: 3.0.0
`
	for file, c := range map[string]struct {
		body, from, want string
	}{
		"package-lock.json": {npm, "node_modules/a", `line 3: packages["node_modules/a"].dependencies["gone"] (^3) is installed nowhere`},
		"pnpm-lock.yaml":    {pnpm, "a@1.0.0", `line 16: snapshots["a@1.0.0"].dependencies["gone"] (3.0.0) is installed nowhere`},
	} {
		l, err := lockfile.Parse(file, []byte(c.body), lockfile.Options{})
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if l.DanglingCount != 1 || len(l.Dangling) != 1 || l.Dangling[0].String() != c.want {
			t.Errorf("%s: dangling %d %v, want %q", file, l.DanglingCount, l.Dangling, c.want)
		}
		if e, ok := edgeTo(l.Tree, c.from, "gone"); !ok || e.To != "" || e.Kind != tree.KindProd {
			t.Errorf("%s: the dangling edge %+v", file, e)
		}
		if e, ok := edgeTo(l.Tree, c.from, "p"); !ok || e.To != "" || e.Kind != tree.KindPeer {
			t.Errorf("%s: the peer left out %+v", file, e)
		}
	}
	for file, c := range map[string]struct{ body, want string }{
		"package-lock.json": {`{"lockfileVersion": 3, "packages": {
  "node_modules/a": {"version": "1.0.0"},
  "node_modules/a/node_modules/b": {"resolved": "http://127.0.0.1:1/b/-/b-1.0.0.tgz"}
}}`, `package-lock.json line 3: packages["node_modules/a/node_modules/b"] has no version`},
		"pnpm-lock.yaml": {"lockfileVersion: '9.0'\nimporters:\n  .: {}\nsnapshots:\n  a:\n    dependencies:\n      b: 1.0.0\n",
			`pnpm-lock.yaml line 5: snapshots["a"]: the key names no version`},
	} {
		_, err := lockfile.Parse(file, []byte(c.body), lockfile.Options{})
		if !errors.Is(err, lockfile.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want ErrInvalid with %q", file, err, c.want)
		}
	}
}

// A YAML alias bomb (each anchor a list of nine aliases of the one before:
// 9^9 strings expanded) is refused before anything expands it where
// pnpm-lock.yaml is read, naming the line; where it is not read (settings),
// it is passed over unexpanded. Either way the bytes allocated stay small.
// Not parallel: it measures the bytes allocated.
func TestAPnpmAliasBombIsRefusedUnexpanded(t *testing.T) {
	bomb := func(indent string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "%sl0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n", indent)
		for i := 1; i < 10; i++ {
			a := fmt.Sprintf("*a%d", i-1)
			fmt.Fprintf(&b, "%sl%d: &a%d [%s]\n", indent, i, i, strings.Repeat(a+", ", 8)+a)
		}
		return b.String()
	}
	const head = "lockfileVersion: '9.0'\n"
	const importers = "importers:\n  .:\n    dependencies:\n      a:\n        specifier: ^1\n        version: 1.0.0\n"
	const pkgs = "packages:\n  a@1.0.0:\n    resolution: {integrity: sha512-x}\n"
	for name, c := range map[string]struct{ body, want string }{
		"importers":  {head + importers + "    devDependencies:\n" + bomb("      "), "pnpm-lock.yaml line 9: a YAML anchor, alias or tag (&a0)"},
		"snapshots":  {head + importers + pkgs + "snapshots:\n  a@1.0.0:\n    dependencies:\n      b: *a9\n", "pnpm-lock.yaml line 14: snapshots: a YAML anchor, alias or tag (*a9)"},
		"resolution": {head + importers + "packages:\n  a@1.0.0:\n    resolution: {integrity: *a9}\n", "pnpm-lock.yaml line 10: packages: resolution: a YAML anchor, alias or tag (*a9)"},
		"settings":   {head + "settings:\n" + bomb("  ") + importers + pkgs + "snapshots:\n  a@1.0.0: {}\n", ""},
	} {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		l, err := lockfile.Parse("pnpm-lock.yaml", []byte(c.body), lockfile.Options{})
		runtime.ReadMemStats(&after)
		switch {
		case c.want == "" && (err != nil || len(l.Tree.Packages) != 1):
			t.Errorf("%s: %v", name, err)
		case c.want != "" && (!errors.Is(err, lockfile.ErrInvalid) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v; want ErrInvalid with %q", name, err, c.want)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
			t.Errorf("%s: %d KiB allocated", name, alloc>>10)
		}
	}
}

// A 5 MB package-lock.json (27,000 entries, half of them nested, each
// top-level one with two dependencies resolved up the path) is read within
// the caps, allocating within twelve times the file's size (a 10 MB one:
// 90 MiB measured, 109 MiB under -race; a 20 MB one: 146 MiB and a second
// of CPU, `go test -c`, then `time lockfile.test -test.run TestALargeNpm`).
// Not parallel: it measures the bytes allocated.
func TestALargeNpmLockIsReadWithinTheCaps(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"name": "site", "lockfileVersion": 3, "requires": true, "packages": {` + "\n" + `  "": {"dependencies": {"pkg0": "^1.0.0"}}`)
	n := 0
	for ; b.Len() < 5<<20; n++ {
		fmt.Fprintf(&b, `,
    "node_modules/pkg%d": {
      "version": "1.0.%d",
      "resolved": "http://127.0.0.1:1/pkg%d/-/pkg%d-1.0.%d.tgz",
      "integrity": "sha512-6/mh1E2u2YgEsCHdY0Yx5oW+61gZU+1vXaoiHHrpKeuRNNgFvS+/jrwHiQhB5apAf5oB7UB7E19ol2R2LKH8hQ==",
      "dependencies": {"pkg%d": "^1.0.0", "shared": "^1.0.0"}
    },
    "node_modules/pkg%d/node_modules/shared": {"version": "1.0.0"}`, n, n%7, n, n, n%7, n+1, n)
	}
	b.WriteString("\n}}\n")
	path := filepath.Join(t.TempDir(), "package-lock.json")
	write(t, path, b.String())
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	l, err := lockfile.Read(path, lockfile.Options{})
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("read a %d MiB package-lock.json: %d packages, %d edges in %v, %d MiB allocated", b.Len()>>20, len(l.Tree.Packages), len(l.Tree.Edges), took.Round(time.Millisecond), alloc>>20)
	if len(l.Tree.Packages) != 2*n || l.DanglingCount != 1 { // the last pkgN+1 is installed nowhere
		t.Errorf("%d packages (want %d), %d dangling", len(l.Tree.Packages), 2*n, l.DanglingCount)
	}
	if e, ok := edgeTo(l.Tree, "node_modules/pkg5", "shared"); !ok || e.To != "node_modules/pkg5/node_modules/shared" {
		t.Errorf("pkg5's shared: %+v", e)
	}
	if alloc > 12*uint64(b.Len()) {
		t.Errorf("reading a %d MiB lockfile allocated %d MiB", b.Len()>>20, alloc>>20)
	}
}

// One more entry than MaxTreePackages refuses the file, naming the line
// where it goes past.
func TestALockfilePastMaxTreePackagesIsRefused(t *testing.T) {
	t.Parallel()
	var npm, pnpm strings.Builder
	npm.WriteString(`{"lockfileVersion": 3, "packages": {` + "\n" + `"": {}`)
	pnpm.WriteString("lockfileVersion: '9.0'\nimporters:\n  .: {}\nsnapshots:\n")
	for i := range lockfile.MaxTreePackages + 1 {
		fmt.Fprintf(&npm, ",\n\"node_modules/p%d\": {\"version\": \"1.0.0\"}", i)
		fmt.Fprintf(&pnpm, "  p%d@1.0.0: {}\n", i)
	}
	npm.WriteString("}}\n")
	for file, c := range map[string]struct {
		body string
		line int
	}{
		"package-lock.json": {npm.String(), lockfile.MaxTreePackages + 3},
		"pnpm-lock.yaml":    {pnpm.String(), lockfile.MaxTreePackages + 5},
	} {
		_, err := lockfile.Parse(file, []byte(c.body), lockfile.Options{})
		if want := fmt.Sprintf("%s line %d: more than %d packages", file, c.line, lockfile.MaxTreePackages); !errors.Is(err, lockfile.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("past the cap: %v; want ErrInvalid with %q", err, want)
		}
	}
}

// An entry listed twice (JSON and YAML forbid nothing of the kind to a
// reader, but an ID is the tree's key) refuses the lockfile, naming both
// lines; an edge is one for each dependent, name and kind, even where the
// site declares a dependency on its own workspace, which npm's tree also
// links.
func TestEntriesTwiceAndEdgesOnce(t *testing.T) {
	t.Parallel()
	for file, c := range map[string]struct{ body, want string }{
		"package-lock.json": {`{"lockfileVersion": 3, "packages": {
  "node_modules/a": {"version": "1.0.0"},
  "node_modules/a": {"version": "2.0.0"}
}}`, `package-lock.json line 3: packages["node_modules/a"] twice (and line 2)`},
		"pnpm-lock.yaml": {"lockfileVersion: '9.0'\nimporters:\n  .: {}\nsnapshots:\n  a@1.0.0: {}\n  a@1.0.0: {}\n",
			`pnpm-lock.yaml line 6: snapshots["a@1.0.0"] twice (and line 5)`},
	} {
		_, err := lockfile.Parse(file, []byte(c.body), lockfile.Options{})
		if !errors.Is(err, lockfile.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want ErrInvalid with %q", file, err, c.want)
		}
	}
	body := `{"lockfileVersion": 3, "packages": {
  "": {"workspaces": ["packages/*"], "dependencies": {"ws": "*"}},
  "node_modules/ws": {"resolved": "packages/ws", "link": true},
  "packages/ws": {"name": "ws", "version": "0.1.0"}
}}`
	l, err := lockfile.Parse("package-lock.json", []byte(body), lockfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Tree.Edges) != 1 || l.Tree.Edges[0] != (tree.Edge{From: tree.Root, Name: "ws", Range: "*", Kind: tree.KindProd, To: "packages/ws"}) {
		t.Errorf("edges %+v, want the site's one dependency on its workspace", l.Tree.Edges)
	}
	if len(l.Tree.Packages) != 1 || l.Tree.Packages[0].Source != tree.SourceLink || l.Tree.Packages[0].Name != "ws" {
		t.Errorf("packages %+v, want the workspace, a link", l.Tree.Packages)
	}
}

// A pnpm workspace takes the name another importer links it under; the
// site depends on it.
func TestAPnpmWorkspaceTakesItsLinkedName(t *testing.T) {
	t.Parallel()
	body := "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n      '@site/ws':\n        specifier: workspace:*\n        version: link:packages/ws\n  packages/ws: {}\n"
	l, err := lockfile.Parse("pnpm-lock.yaml", []byte(body), lockfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Tree.Packages) != 1 || l.Tree.Packages[0] != (tree.Package{ID: "packages/ws", Name: "@site/ws", Source: tree.SourceLink, Line: 8}) {
		t.Errorf("packages %+v", l.Tree.Packages)
	}
	if e, ok := edgeTo(l.Tree, tree.Root, "@site/ws"); !ok || e.To != "packages/ws" || e.Range != "workspace:*" || len(l.Tree.Edges) != 1 {
		t.Errorf("edges %+v", l.Tree.Edges)
	}
}

// What pnpm never writes, where packages and snapshots are read, refuses
// the file naming the line, rather than being read otherwise than the
// YAML says.
func TestPnpmLinesPnpmNeverWritesAreRefused(t *testing.T) {
	t.Parallel()
	const head = "lockfileVersion: '9.0'\nimporters:\n  .: {}\nsnapshots:\n"
	for name, c := range map[string]struct{ body, want string }{
		"tab":        {head + "  a@1.0.0:\n\tdependencies:\n", "line 6: a tab in the indentation"},
		"margin":     {head + "  a@1.0.0:\n    dependencies:\n- b\n", "line 7: a line at the left margin that is no key"},
		"flow entry": {head + "  a@1.0.0: {dependencies: {b: 1.0.0}}\n", `line 5: snapshots["a@1.0.0"] is not the block mapping pnpm writes`},
		"flow field": {head + "  a@1.0.0:\n    dependencies: {b: 1.0.0}\n", "line 6: snapshots: dependencies is not the block mapping pnpm writes"},
		"block":      {head + "  a@1.0.0:\n    dependencies:\n      b: |\n        1.0.0\n", "line 7: snapshots: a block scalar"},
		"quoted":     {head + "  a@1.0.0:\n    dependencies:\n      b: '1.0.0\n        '\n", "line 7: snapshots: a quoted scalar that goes on past its line"},
		"nested":     {head + "  a@1.0.0:\n    dependencies:\n      b:\n        c: 1\n", "line 8: snapshots: an indentation pnpm does not write"},
		"section":    {head + "  a@1.0.0: {}\npackages: {a@1.0.0: {}}\n", "line 6: packages is not the block mapping pnpm writes"},
	} {
		_, err := lockfile.Parse("pnpm-lock.yaml", []byte(c.body), lockfile.Options{})
		if !errors.Is(err, lockfile.ErrInvalid) || !strings.Contains(err.Error(), "pnpm-lock.yaml "+c.want) {
			t.Errorf("%s: %v; want ErrInvalid with %q", name, err, c.want)
		}
	}
}
