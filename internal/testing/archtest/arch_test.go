// Package archtest holds the architecture test: the import rules of
// docs/architecture.md, checked on what `go list` says the packages import,
// so that a rule broken by a new import fails `go test ./...` at once.
package archtest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/upcheck/upcheck"

// The packages the rules name.
const (
	app         = module + "/internal/app"
	auth        = module + "/internal/auth"
	catalog     = module + "/internal/catalog"
	config      = module + "/internal/config"
	db          = module + "/internal/db"
	fetch       = module + "/internal/fetch"
	lease       = module + "/internal/lease"
	store       = module + "/internal/store"
	updatecheck = module + "/internal/updatecheck"
	updatedoc   = module + "/internal/updatedoc"
	feedsync    = module + "/internal/feedsync"
	views       = module + "/views"
	web         = module + "/internal/web"
)

// domain are the packages below the web layer: they know nothing of HTTP
// routing or of pages.
var domain = []string{lease, store, auth, catalog, updatecheck, updatedoc, fetch, module + "/internal/npm", module + "/internal/lockfile"}

// rule forbids some imports to some packages.
type rule struct {
	name string
	// from says which packages the rule binds.
	from func(pkg string) bool
	// forbid says which imports it forbids.
	forbid func(imp string) bool
	// direct judges the package's own imports, its tests' included (a
	// package's external test importing the package itself is fine);
	// without it every package its non-test code depends on, however
	// indirectly, is judged.
	direct bool
	// ownCode judges the package's own imports without its tests' (a
	// test may name a type it reaches through another package).
	ownCode bool
	// except lists packages the rule does not bind yet, each with the
	// reason. An exception that is no longer needed fails the test, so it
	// cannot outlive its reason.
	except map[string]string
}

var rules = []rule{
	{
		name:   "only internal/store imports internal/db: sqlc's types stop at the store",
		from:   func(p string) bool { return p != store && p != db },
		forbid: is(db),
		direct: true,
	},
	{
		name:   "the domain packages do not depend on echo",
		from:   oneOf(domain...),
		forbid: within("github.com/labstack"),
	},
	{
		name:   "the domain packages do not depend on templ or on views",
		from:   oneOf(domain...),
		forbid: func(p string) bool { return within("github.com/a-h/templ")(p) || within(views)(p) },
	},
	{
		name:   "nothing imports internal/web or internal/app but internal/app and cmd/...",
		from:   func(p string) bool { return p != app && !within(module+"/cmd")(p) },
		forbid: func(p string) bool { return p == web || p == app },
		direct: true,
	},
	{
		name: "no product package depends on a test harness: internal/testing is for tests and cmd/upcheck-cluster",
		from: func(p string) bool {
			return !within(module+"/internal/testing")(p) && p != module+"/cmd/upcheck-cluster"
		},
		forbid: within(module + "/internal/testing"),
	},
	{
		name: "only internal/updatecheck, internal/app and cmd/... import internal/feedsync: the check runs the feed sync",
		from: func(p string) bool {
			return p != updatecheck && p != app && p != feedsync && !within(module+"/cmd")(p)
		},
		forbid:  is(feedsync),
		ownCode: true,
	},
	{
		name:   "internal/feedsync depends on no internal/updatecheck: what it needs of the check is its Host",
		from:   is(feedsync),
		forbid: is(updatecheck),
	},
	{
		name:   "internal/config imports no package of the module: it holds plain settings, and internal/app builds their domain values",
		from:   is(config),
		forbid: within(module),
		direct: true,
	},
	{
		name:   "internal/updatedoc depends on no database package",
		from:   is(updatedoc),
		forbid: func(p string) bool { return within("github.com/jackc")(p) || p == store || p == db },
	},
}

// is matches one import path.
func is(path string) func(string) bool { return func(p string) bool { return p == path } }

// oneOf matches any of paths.
func oneOf(paths ...string) func(string) bool {
	return func(p string) bool { return slices.Contains(paths, p) }
}

// within matches path and every package below it.
func within(path string) func(string) bool {
	return func(p string) bool { return p == path || strings.HasPrefix(p, path+"/") }
}

// pkg is what the rules read of `go list -json`.
type pkg struct {
	ImportPath   string
	Imports      []string
	Deps         []string
	TestImports  []string
	XTestImports []string
}

// imports is what rule r judges of p.
func (r rule) imports(p pkg) []string {
	if r.ownCode {
		return p.Imports
	}
	if r.direct {
		return slices.Concat(p.Imports, p.TestImports, p.XTestImports)
	}
	return p.Deps
}

// listPackages runs `go list` over the module, with the build tags the
// tests use, so test-only packages are judged too.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-tags", "crash",
		"-json=ImportPath,Imports,Deps,TestImports,XTestImports,Error", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []pkg
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p struct {
			pkg
			Error *struct{ Err string }
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		if p.Error != nil {
			t.Fatalf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p.pkg)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	return pkgs
}

// The import rules of docs/architecture.md hold for every package.
func TestImportRules(t *testing.T) {
	t.Parallel()
	pkgs := listPackages(t)
	// A rule about a package that has moved would hold without checking
	// anything.
	for _, name := range []string{app, auth, catalog, config, db, feedsync, fetch, lease, store, updatecheck, updatedoc, views, web} {
		if !slices.ContainsFunc(pkgs, func(p pkg) bool { return p.ImportPath == name }) {
			t.Errorf("the rules name %s, which go list does not find", name)
		}
	}
	for _, r := range rules {
		excepted := map[string]bool{}
		for _, p := range pkgs {
			if !r.from(p.ImportPath) {
				continue
			}
			var bad []string
			for _, imp := range r.imports(p) {
				if r.forbid(imp) && imp != p.ImportPath && !slices.Contains(bad, imp) {
					bad = append(bad, imp)
				}
			}
			if why, ok := r.except[p.ImportPath]; ok {
				excepted[p.ImportPath] = true
				if len(bad) == 0 {
					t.Errorf("rule %q: %s no longer breaks it; remove its exception (%s)", r.name, p.ImportPath, why)
				}
				continue
			}
			if len(bad) > 0 {
				t.Errorf("rule %q: %s %s", r.name, p.ImportPath, describe(r.direct, bad))
			}
		}
		for p := range r.except {
			if !excepted[p] {
				t.Errorf("rule %q: the exception for %s names no package it binds", r.name, p)
			}
		}
	}
}

// describe names the forbidden imports, the shortest paths first (pgx
// before its internal packages) and at most three of them.
func describe(direct bool, bad []string) string {
	slices.SortFunc(bad, func(a, b string) int { return cmp.Or(len(a)-len(b), strings.Compare(a, b)) })
	verb := "depends on "
	if direct {
		verb = "imports "
	}
	if len(bad) > 3 {
		return verb + strings.Join(bad[:3], ", ") + fmt.Sprintf(" and %d more", len(bad)-3)
	}
	return verb + strings.Join(bad, ", ")
}
