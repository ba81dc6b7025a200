package web_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestRowsPassThrough keeps web a pipe for the read model's rows: store
// fills each readmodel row, web hands it on as it is. No handler builds a
// readmodel row, nor a views value named like one (a copy of it field by
// field); the API's JSON types are built from the row in api_rows.go.
func TestRowsPassThrough(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	rowsFile, err := parser.ParseFile(fset, "../readmodel/rows.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, d := range rowsFile.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
			for _, s := range g.Specs {
				rows[s.(*ast.TypeSpec).Name.Name] = true
			}
		}
	}
	if len(rows) < 5 {
		t.Fatalf("readmodel/rows.go declares %d row types; want at least 5", len(rows))
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok || len(lit.Elts) == 0 { // a zero value copies nothing
				return true
			}
			sel, ok := lit.Type.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && (pkg.Name == "readmodel" || pkg.Name == "views") && rows[sel.Sel.Name] {
				t.Errorf("%s: %s.%s{…} builds a row in web; store fills it, web passes it on",
					fset.Position(lit.Pos()), pkg.Name, sel.Sel.Name)
			}
			return true
		})
	}
}
