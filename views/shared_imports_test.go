package views

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/upcheck/upcheck/"

// TestImports keeps the pages a function of plain values: views imports
// of the application only the plain types of internal/readmodel, the
// range syntax of internal/versionrange (to word ranges as release reads
// them) and the static assets; readmodel imports only internal/npmver
// (the one reading of a version), which imports nothing of it;
// versionrange imports nothing of it either; the domain, internal/release,
// imports neither readmodel nor views (it decides why a release is not
// offered, readmodel words it: OfferReasonText); and nothing but
// internal/web imports views.
func TestImports(t *testing.T) {
	t.Parallel()
	for dir, allowed := range map[string][]string{
		".":                        {module + "internal/readmodel", module + "internal/versionrange", module + "static"},
		"../internal/readmodel":    {module + "internal/npmver"},
		"../internal/npmver":       nil,
		"../internal/versionrange": {module + "internal/npmver"},
		"../internal/release":      {module + "internal/npmver", module + "internal/versionrange"},
	} {
		for _, imp := range imports(t, dir) {
			if strings.HasPrefix(imp, module) && !slices.Contains(allowed, imp) {
				t.Errorf("%s imports %s", dir, imp)
			}
		}
	}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != ".." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		if path == filepath.Join("..", "internal", "web") {
			return nil
		}
		for _, imp := range imports(t, path) {
			if imp == module+"views" {
				t.Errorf("%s imports views; only internal/web may", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// imports lists what the non-test Go files of dir import.
func imports(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range parsed.Imports {
			p, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
	}
	return out
}
