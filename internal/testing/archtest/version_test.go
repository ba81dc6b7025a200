package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// versionParsers are the parsers of github.com/Masterminds/semver that read
// a version.
var versionParsers = map[string]bool{"StrictNewVersion": true, "NewVersion": true, "MustParse": true}

// versionParseAllowed are the files that may call them, each with the
// reason.
var versionParseAllowed = map[string]string{
	"internal/npmver/version.go":     "npmver.Parse, the product's one reading of a version",
	"internal/dev/feedserver/api.go": "the fake OSV API reads versions as the real one does (loosely: \"0\", \"1.2\"), not by the product's rule",
}

// A version is read one way everywhere: by npmver.Parse (npm's
// strict SemVer). A file other than those above that calls one of semver's
// parsers fails this test, and so does an allowed file that no longer
// calls one (its permission would outlive its reason).
func TestOneParseVersion(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	walkGoFiles(t, allGoFiles, 100, nil, func(rel, path string) {
		for _, at := range versionParseCalls(t, path) {
			if _, ok := versionParseAllowed[rel]; ok {
				seen[rel] = true
				continue
			}
			t.Errorf("%s:%d reads a version with semver's own parser: call npmver.Parse", rel, at)
		}
	})
	for rel, why := range versionParseAllowed {
		if !seen[rel] {
			t.Errorf("%s no longer calls semver's parsers; remove its permission (%s)", rel, why)
		}
	}
}

// A function that reads a version by its name (ParseVersion, parseVersion,
// readVersion, ...) outside npmver hands the version to npmver.Parse: it
// may read a range's syntax around a version (versionrange's partial
// versions), never a version's own rules a second time.
func TestVersionReadersCallNpmver(t *testing.T) {
	t.Parallel()
	readers := 0
	walkGoFiles(t, productFiles, 100, func(rel string) bool { return strings.HasPrefix(rel, "internal/npmver/") }, func(rel, path string) {
		for _, fn := range versionReaders(t, path) {
			readers++
			if !fn.callsNpmver {
				t.Errorf("%s:%d %s reads a version without npmver.Parse: hand it the version", rel, fn.line, fn.name)
			}
		}
	})
	if readers == 0 {
		t.Error("found no function reading a version outside npmver; is the rule still needed?")
	}
}

// versionReader is a function whose name says it reads a version.
type versionReader struct {
	name        string
	line        int
	callsNpmver bool
}

// versionReaders returns file's functions named Parse...Version or
// Read...Version (any case; not a getter such as ParsedVersion), and
// whether each calls npmver.Parse.
func versionReaders(t *testing.T, file string) []versionReader {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []versionReader
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		name := strings.ToLower(fn.Name.Name)
		reads := (strings.HasPrefix(name, "parse") && !strings.HasPrefix(name, "parsed")) || strings.HasPrefix(name, "read")
		if !reads || !strings.HasSuffix(name, "version") {
			continue
		}
		r := versionReader{name: fn.Name.Name, line: fset.Position(fn.Pos()).Line}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "npmver" && sel.Sel.Name == "Parse" {
					r.callsNpmver = true
				}
			}
			return true
		})
		out = append(out, r)
	}
	return out
}

// versionParseCalls returns the lines of file's references to semver's
// version parsers.
func versionParseCalls(t *testing.T, file string) []int {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	name := ""
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path == "github.com/Masterminds/semver/v3" {
			name = "semver"
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	if name == "" {
		return nil
	}
	var lines []int
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == name && versionParsers[sel.Sel.Name] {
				lines = append(lines, fset.Position(sel.Pos()).Line)
			}
		}
		return true
	})
	return lines
}
