package archtest

import (
	"slices"
	"strings"
	"testing"
)

// documentReaders are the packages that may import internal/updatedoc,
// the publisher's document format, although updatecheck depends on them,
// each with the reason. An exception no longer needed fails the test.
var documentReaders = map[string]string{}

// updatedoc is an adapter at the edge: it turns the publisher's document
// into the domain's types (internal/release). Below updatecheck (every
// package of the module updatecheck depends on) only updatedoc reads it,
// and npm, manifest, lockfile and config never do, directly or in their
// tests, so that a second kind of source never speaks the first one's
// format.
func TestOnlyTheAdapterImportsTheDocument(t *testing.T) {
	t.Parallel()
	pkgs := listPackages(t)
	byPath := map[string]pkg{}
	for _, p := range pkgs {
		byPath[p.ImportPath] = p
	}
	uc, ok := byPath[updatecheck]
	if !ok {
		t.Fatalf("go list does not find %s", updatecheck)
	}
	bound := []string{module + "/internal/npm", module + "/internal/manifest", module + "/internal/lockfile", module + "/internal/config"}
	for _, d := range uc.Deps {
		if strings.HasPrefix(d, module+"/") && d != updatedoc && !slices.Contains(bound, d) {
			bound = append(bound, d)
		}
	}
	if len(bound) < 8 {
		t.Fatalf("updatecheck depends on %d packages of the module: the walk is wrong", len(bound))
	}
	excepted := map[string]bool{}
	for _, path := range bound {
		p, ok := byPath[path]
		if !ok {
			t.Errorf("go list does not find %s", path)
			continue
		}
		imports := slices.Concat(p.Imports, p.TestImports, p.XTestImports)
		if why, ok := documentReaders[path]; ok {
			excepted[path] = true
			if !slices.Contains(imports, updatedoc) {
				t.Errorf("%s no longer imports updatedoc; remove its exception (%s)", path, why)
			}
			continue
		}
		if slices.Contains(imports, updatedoc) {
			t.Errorf("%s imports %s: only the document adapter reads the document; use internal/release's types", path, updatedoc)
		}
	}
	for path := range documentReaders {
		if !excepted[path] {
			t.Errorf("the exception for %s names no package the rule binds", path)
		}
	}
}
