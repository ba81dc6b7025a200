package archtest

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The imports list of docs/architecture.md (between its "imports" markers)
// says, for every product package, which of the module's packages it
// imports, as `go list` sees its non-test code: a new import, or one that
// went, fails this test until the list says it.
func TestArchitectureSaysWhatEachPackageImports(t *testing.T) {
	t.Parallel()
	doc := readFile(t, filepath.Join(root, "docs", "architecture.md"))
	begin, end := strings.Index(doc, "<!-- imports -->"), strings.Index(doc, "<!-- /imports -->")
	if begin < 0 || end < begin {
		t.Fatal("docs/architecture.md has no <!-- imports --> … <!-- /imports --> list")
	}
	line := regexp.MustCompile("^- `([^`]+)` imports (.*)$")
	said := map[string][]string{}
	for _, l := range strings.Split(doc[begin:end], "\n") {
		m := line.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		var imps []string
		if m[2] != "none of the module." {
			for _, imp := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(m[2], -1) {
				imps = append(imps, imp[1])
			}
		}
		said[m[1]] = imps
	}
	short := func(p string) string {
		p = strings.TrimPrefix(p, module+"/")
		return strings.TrimPrefix(p, "internal/")
	}
	for _, p := range listPackages(t) {
		name := short(p.ImportPath)
		if strings.HasPrefix(name, "testing/") || name == "db" || p.ImportPath == module {
			continue // test harnesses, and generated code
		}
		var real []string
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module+"/") || imp == module {
				real = append(real, short(imp))
			}
		}
		slices.Sort(real)
		docd, ok := said[name]
		if !ok {
			t.Errorf("docs/architecture.md does not say what %s imports: %s", name, list(real))
			continue
		}
		delete(said, name)
		slices.Sort(docd)
		if !slices.Equal(docd, real) {
			t.Errorf("docs/architecture.md says %s imports %s; it imports %s", name, list(docd), list(real))
		}
	}
	for name := range said {
		t.Errorf("docs/architecture.md lists %s, which go list does not find", name)
	}
}

func list(imps []string) string {
	if len(imps) == 0 {
		return "none of the module."
	}
	return "`" + strings.Join(imps, "`, `") + "`"
}
