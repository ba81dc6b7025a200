package lockfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/lockfile"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/testing/verdaccio"
)

// The lockfiles the real npm and pnpm clients write for one site give the
// same components: the site's own dependencies by default, the packages the
// globs name with --include, the core as "core".
func TestLockfilesOfTheRealClients(t *testing.T) {
	t.Parallel()
	reg := verdaccio.Start(t)
	token := reg.AddUser(t, "publisher")
	for _, p := range []verdaccio.Package{
		{Name: "@vitnode/core", Version: "2.0.0"},
		{Name: "@vitnode/core", Version: "2.1.0"},
		{Name: "@vitnode/blog", Version: "1.4.0", PeerDependencies: map[string]string{"@vitnode/core": "^2.0.0"}},
		{Name: "tiny-helper", Version: "3.0.0"},
		{Name: "@other/lint", Version: "0.1.0"},
	} {
		reg.Publish(t, token, p)
	}
	site := verdaccio.Site{
		"dependencies":    {"@vitnode/core": "2.0.0", "@vitnode/blog": "^1.0.0", "tiny-helper": "^3.0.0"},
		"devDependencies": {"@other/lint": "*"},
	}
	want := func(codes ...string) []string { return codes }
	for _, client := range []string{"npm", "pnpm"} {
		lock := reg.Lock(t, client, site)
		for _, c := range []struct {
			opt  lockfile.Options
			want []string
		}{
			{lockfile.Options{}, want("tiny-helper@3.0.0", "vitnode--blog@1.4.0", "vitnode--core@2.0.0")},
			{lockfile.Options{Core: "@vitnode/core", Include: []string{"@vitnode/*"}}, want("core@2.0.0", "vitnode--blog@1.4.0")},
			{lockfile.Options{Include: []string{"@other/*", "tiny-*"}}, want("other--lint@0.1.0", "tiny-helper@3.0.0")},
		} {
			l, err := lockfile.Read(lock, c.opt)
			if err != nil {
				t.Fatalf("%s: %v", client, err)
			}
			m := l.Manifest
			if got := summary(m); !slices.Equal(got, c.want) {
				t.Errorf("%s with %+v: %v, want %v", client, c.opt, got, c.want)
			}
			for _, comp := range m.Components {
				if comp.Source != "npm:"+comp.Name {
					t.Errorf("%s: %s has source %q", client, comp.Name, comp.Source)
				}
			}
		}
	}
}

func summary(m *manifest.Manifest) []string {
	var out []string
	for _, c := range m.Components {
		out = append(out, c.Code+"@"+c.Version)
	}
	return out
}

func TestCodesAreStableAndUnique(t *testing.T) {
	t.Parallel()
	// The codes are stored: a change to the rule would orphan every stored
	// component of such a name, so the expected codes are pinned in full.
	for name, want := range map[npm.Name]string{
		"left-pad":      "left-pad",
		"@vitnode/blog": "vitnode--blog",
		"@vitnode/core": "vitnode--core",
		"vitnode--blog": "vitnode-blog---06ea2f9f0b9f",
		"vitnode.blog":  "vitnode.blog",
		"JSONStream":    "jsonstream---e8984fe3553d",
		"@a/-x":         "a-x---17f6eaf10991",
		"crazy!":        "crazy---0fe947f0fdb8",
	} {
		got := lockfile.Code(name)
		if got != want {
			t.Errorf("Code(%q) = %q, want %q", name, got, want)
		}
		if _, err := manifest.ParseJSON([]byte(`{"components": [{"code": "core", "name": "core", "version": "1.0.0"}, {"code": "` + got + `", "name": "x", "version": "1.0.0"}]}`)); err != nil {
			t.Errorf("Code(%q) = %q is not a component code: %v", name, got, err)
		}
	}
	// Names that differ only where the plain forms would blur them.
	seen := map[string]npm.Name{}
	for _, n := range []npm.Name{"@a/b", "a--b", "a-b", "@a-/b", "@a/-b", "A-b", "a_b", "@a/b.", "a.b", "@a.b/c", "a.b--c", "@a/b--c", "@a--b/c"} {
		c := lockfile.Code(n)
		if other, ok := seen[c]; ok {
			t.Errorf("%q and %q both give %q", n, other, c)
		}
		seen[c] = n
	}
}

func TestLockfileErrorsNameFileLineAndField(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, c := range map[string]struct{ text, want string }{
		"package-lock.json": {`{"lockfileVersion": 3, "packages": {
  "": {"dependencies": {"x": "1"}},
  "node_modules/x": {"resolved": "x"}
}}`, `package-lock.json line 3: packages["node_modules/x"] has no version`},
		"v1/package-lock.json": {`{"name": "site",
 "lockfileVersion": 1, "dependencies": {}}`, "line 2: lockfileVersion 1 is not read"},
		"bad/package-lock.json":  {`{"lockfileVersion": 3, "packages": {"node_modules/Bad Name": {"version": "1.0.0"}}}`, `line 1: packages["node_modules/Bad Name"]: not a valid npm package name`},
		"json/package-lock.json": {`{"lockfileVersion": 3,, }`, "malformed JSON at line 1"},
		"pnpm-lock.yaml":         {"lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n      x:\n        specifier: ^1\n", `pnpm-lock.yaml line 5: importers["."].dependencies["x"].version is missing`},
		"v6/pnpm-lock.yaml":      {"lockfileVersion: '6.0'\n", "line 1: lockfileVersion 6.0 is not read"},
	} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := lockfile.Read(path, lockfile.Options{Include: []string{"*"}})
		if !errors.Is(err, lockfile.ErrInvalid) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v; want ErrInvalid naming %s and saying %q", name, err, path, c.want)
		}
	}
	if _, err := lockfile.Read(filepath.Join(dir, "none.json"), lockfile.Options{}); err == nil {
		t.Error("a missing file is no error")
	}
	if _, err := lockfile.Read(filepath.Join(dir, "none.json"), lockfile.Options{Include: []string{"[x"}}); !errors.Is(err, lockfile.ErrInvalid) {
		t.Errorf("a bad glob: %v", err)
	}
}
