package views

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestRowsAreReadmodels keeps each row of the read model defined once, in
// internal/readmodel: the pages take the row as store filled it, and what
// they say of it is computed here, not copied into a twin. No views type
// has a row's name, and none holds three quarters or more of a row's
// fields (a copy of the row under another name).
func TestRowsAreReadmodels(t *testing.T) {
	t.Parallel()
	rows := structFields(t, "../internal/readmodel/rows.go")
	if len(rows) < 5 {
		t.Fatalf("readmodel/rows.go declares %d row types; want the catalog, run, source, channel and delivery rows", len(rows))
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || strings.HasSuffix(f, "_templ.go") {
			continue
		}
		for name, fields := range structFields(t, f) {
			for row, rowFields := range rows {
				if name == row {
					t.Errorf("%s declares %s, a twin of readmodel.%s: use the readmodel row", f, name, row)
					continue
				}
				shared := 0
				for field := range rowFields {
					if fields[field] {
						shared++
					}
				}
				if 4*shared >= 3*len(rowFields) {
					t.Errorf("%s: %s holds %d of readmodel.%s's %d fields: take the row instead of a copy of it",
						f, name, shared, row, len(rowFields))
				}
			}
		}
	}
}

// structFields is the struct types a Go file declares, each with the
// names of its fields (embedded ones by their type's name).
func structFields(t *testing.T, path string) map[string]map[string]bool {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		spec, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		st, ok := spec.Type.(*ast.StructType)
		if !ok {
			return false
		}
		fields := map[string]bool{}
		for _, f := range st.Fields.List {
			for _, n := range f.Names {
				fields[n.Name] = true
			}
			if len(f.Names) == 0 {
				fields[embeddedName(f.Type)] = true
			}
		}
		out[spec.Name.Name] = fields
		return false
	})
	return out
}

// embeddedName is the name of an embedded field's type.
func embeddedName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return embeddedName(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.Ident:
		return e.Name
	}
	return ""
}
