package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// kindTests are the names that test a source's kind (or read its address
// for it), by the package that defines them: the kind's name
// (readmodel.SourceKindOf and its values), the address prefixes, and
// npm's prefix test. A string literal equal to a prefix counts too.
var kindTests = map[string]map[string]bool{
	module + "/internal/readmodel": {"SourceKindOf": true, "SourceDocument": true, "SourceOffline": true, "SourceNpm": true,
		"NpmPrefix": true, "OfflinePrefix": true},
	module + "/internal/npm": {"IsSource": true, "SourcePrefix": true},
}

// kindPrefixes are the addresses' prefixes, as literals.
var kindPrefixes = map[string]bool{"npm:": true, "offline:": true}

// kindAdapters are where the kinds are defined and dispatched: readmodel
// names them (its definition), and updatecheck's kind files are the
// adapters, one per kind (kind.go looks a source's kind up once).
func kindAdapter(rel string) bool {
	return strings.HasPrefix(rel, "internal/readmodel/") ||
		strings.HasPrefix(rel, "internal/updatecheck/kind") && !strings.Contains(strings.TrimPrefix(rel, "internal/updatecheck/"), "/")
}

// kindTestsAllowed are the other product files that may read a source's
// kind, with how many times and why: each is a fact for wording or for a
// row (which kind a source is, said to the operator), or reads the
// address's own syntax below updatecheck, never a choice of how a source
// is read.
var kindTestsAllowed = map[string]struct {
	n   int
	why string
}{
	"internal/npm/source.go":             {1, "defines npm.SourcePrefix from readmodel.NpmPrefix"},
	"internal/manifest/manifest.go":      {5, "validates each kind's address and what it may pin (the manifest is below updatecheck and reads the address's syntax)"},
	"internal/lockfile/lockfile.go":      {1, "writes a package's source address (npm:NAME), tests nothing"},
	"internal/remedy/document.go":        {1, "reads a dependency declared as an alias (\"x\": \"npm:real@^1\"), npm's syntax of a range, not a source's kind"},
	"internal/store/catalog.go":          {1, "the catalog row's kind, a fact the pages word"},
	"internal/store/catalog_snapshot.go": {1, "the catalog snapshot row's kind, a fact the pages word"},
	"internal/web/api_rows.go":           {1, "the API row's kind, a fact of the answer"},
	"internal/web/api_detail.go":         {3, "the API detail's kind and offline facts"},
	"views/sources_npm.go":               {5, "the words for each kind, and the npm registry's row on the sources page"},
	"views/sources_templ.go":             {3, "generated from views/sources.templ: the words of each source's kind"},
	"views/detail_registry.go":           {2, "the detail page shows the registry's facts of an npm package"},
}

// A source's kind is dispatched, not branched: updatecheck looks a
// source's kind up once (kindOf) and calls its adapter (sourceKind), so
// that a new kind is one adapter and no branch elsewhere. Outside the
// adapters and readmodel, only the files above read a kind, each at most
// as many times as it says: a new kind test fails this test, and so does a
// file that reads fewer than its allowance (lower it).
func TestKindTestsStayInTheAdapters(t *testing.T) {
	t.Parallel()
	seen := map[string]int{}
	walkGoFiles(t, productFiles, 100, nil, func(rel, path string) {
		if kindAdapter(rel) {
			return
		}
		for _, at := range kindTestLines(t, path) {
			seen[rel]++
			if allowed, ok := kindTestsAllowed[rel]; !ok || seen[rel] > allowed.n {
				t.Errorf("%s:%d tests a source's kind: give the kind's adapter (internal/updatecheck/kind_*.go) a method instead", rel, at)
			}
		}
	})
	for rel, allowed := range kindTestsAllowed {
		if seen[rel] < allowed.n {
			t.Errorf("%s reads a source's kind %d times, fewer than its allowance of %d (%s): lower it", rel, seen[rel], allowed.n, allowed.why)
		}
	}
}

// kindTestLines returns the lines of file's kind tests (kindTests,
// kindPrefixes).
func kindTestLines(t *testing.T, file string) []int {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]map[string]bool{} // by the name the file imports the package as
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if sels, ok := kindTests[path]; ok {
			name := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			names[name] = sels
		}
	}
	var lines []int
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && names[id.Name][n.Sel.Name] {
				lines = append(lines, fset.Position(n.Pos()).Line)
			}
		case *ast.BasicLit:
			if s, err := strconv.Unquote(n.Value); n.Kind == token.STRING && err == nil && kindPrefixes[s] {
				lines = append(lines, fset.Position(n.Pos()).Line)
			}
		}
		return true
	})
	return lines
}
