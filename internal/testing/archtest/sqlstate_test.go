package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// SQLSTATEs are named, never typed: PostgreSQL's by pgerrcode's constants,
// upcheck's own (raised by its PL/pgSQL) by constants of internal/store, each
// defined once. A hand-typed code is a typo waiting to happen ("23505" or
// "25305"?) and tells the reader nothing.
func TestSQLStatesAreNamed(t *testing.T) {
	defined := map[string][]string{}
	fset := token.NewFileSet()
	walkGoFiles(t, allGoFiles, 50, nil, func(_, path string) {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if ast.IsGenerated(f) {
			return
		}
		for _, v := range sqlstateLiterals(fset, f) {
			t.Errorf("%s: SQLSTATE %s typed as a string: name it (pgerrcode, or internal/store's own codes)", v.pos, v.code)
		}
		for code, pos := range sqlstateConstants(fset, f) {
			defined[code] = append(defined[code], pos...)
		}
	})
	for code, at := range defined {
		if len(at) > 1 {
			t.Errorf("SQLSTATE %s is defined %d times: %s", code, len(at), strings.Join(at, ", "))
		}
	}
}

// The scan finds each form a typed SQLSTATE takes, and leaves other codes
// alone.
func TestSQLStateScan(t *testing.T) {
	const src = `package p

const own = "UL001"

func f(pgErr *pgconn.PgError, e interface{ SQLState() string }, c component, code string) {
	_ = pgErr.Code == "23505"
	_ = "55P03" != pgErr.Code
	_ = e.SQLState() == "42P04"
	_ = code == "57014"
	_ = strings.HasPrefix(pgErr.Code, "08")
	switch pgErr.Code {
	case "57P01", pgerrcode.CrashShutdown:
	}
	_ = pgErr.Code == pgerrcode.UniqueViolation || pgErr.Code == own
	_ = c.Code == "core" || rec.Code == 200 || c.Name == "12345"
	_ = strings.HasPrefix(c.Code, "p")
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range sqlstateLiterals(fset, f) {
		got = append(got, v.code)
	}
	want := []string{"23505", "55P03", "42P04", "57014", "08", "57P01"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("found %q, want %q", got, want)
	}
	if c := sqlstateConstants(fset, f); len(c["UL001"]) != 1 || len(c) != 1 {
		t.Errorf("constants found: %v, want UL001 once", c)
	}
}

// sqlstateShape is a SQLSTATE (five digits or capitals, at least one digit)
// or its two-character class.
var sqlstateShape = regexp.MustCompile(`^(?:[0-9A-Z]{2}|[0-9A-Z]{5})$`)

func looksLikeSQLState(s string) bool {
	return sqlstateShape.MatchString(s) && strings.ContainsAny(s, "0123456789")
}

type typedCode struct {
	pos  token.Position
	code string
}

// sqlstateLiterals finds string literals shaped like a SQLSTATE compared
// with (==, !=, a switch case, strings.HasPrefix) an expression that reads an
// error code: x.Code, code, x.SQLState().
func sqlstateLiterals(fset *token.FileSet, f *ast.File) []typedCode {
	var out []typedCode
	add := func(e ast.Expr) {
		if s, ok := stringLit(e); ok && looksLikeSQLState(s) {
			out = append(out, typedCode{fset.Position(e.Pos()), s})
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if n.Op == token.EQL || n.Op == token.NEQ {
				if readsCode(n.X) {
					add(n.Y)
				} else if readsCode(n.Y) {
					add(n.X)
				}
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "HasPrefix" && len(n.Args) == 2 && readsCode(n.Args[0]) {
				add(n.Args[1])
			}
		case *ast.SwitchStmt:
			if n.Tag != nil && readsCode(n.Tag) {
				for _, s := range n.Body.List {
					for _, e := range s.(*ast.CaseClause).List {
						add(e)
					}
				}
			}
		}
		return true
	})
	return out
}

// sqlstateConstants returns the SQLSTATE-shaped constants f defines.
func sqlstateConstants(fset *token.FileSet, f *ast.File) map[string][]string {
	out := map[string][]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			for _, v := range s.(*ast.ValueSpec).Values {
				if c, ok := stringLit(v); ok && len(c) == 5 && looksLikeSQLState(c) {
					out[c] = append(out[c], fset.Position(v.Pos()).String())
				}
			}
		}
	}
	return out
}

// readsCode reports whether e reads an error code: a name or field called
// code (any case), or a call of SQLState().
func readsCode(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return strings.EqualFold(e.Name, "code") || strings.Contains(strings.ToLower(e.Name), "sqlstate")
	case *ast.SelectorExpr:
		return strings.EqualFold(e.Sel.Name, "code") || strings.Contains(strings.ToLower(e.Sel.Name), "sqlstate")
	case *ast.CallExpr:
		sel, ok := e.Fun.(*ast.SelectorExpr)
		return ok && sel.Sel.Name == "SQLState"
	case *ast.ParenExpr:
		return readsCode(e.X)
	}
	return false
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}
