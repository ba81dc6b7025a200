package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// argumentParsers are the calls that would read a value back out of text:
// a failure's arguments are stored as values (readmodel.FailureArgs), so
// whatever words them has nothing to parse.
var argumentParsers = map[string]map[string]bool{
	"fmt":     {"Sscanf": true, "Sscan": true, "Sscanln": true},
	"strconv": {"Atoi": true, "ParseInt": true, "ParseUint": true, "ParseFloat": true},
	"time":    {"Parse": true, "ParseDuration": true, "ParseInLocation": true},
	"strings": {"Cut": true, "Split": true, "SplitN": true, "Fields": true},
}

// A failure's arguments are worded from their values: a function that
// takes a readmodel.FailureArgs (ProblemSentence, FeedProblemSentence,
// views' problemText, ...) parses no text, so no formatted argument is
// written and read back anywhere.
func TestFailureArgumentsAreNotParsed(t *testing.T) {
	t.Parallel()
	wording := 0
	walkGoFiles(t, productFiles, 100, nil, func(rel, path string) {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !takesFailureArgs(fn) {
				continue
			}
			wording++
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && argumentParsers[id.Name][sel.Sel.Name] {
					t.Errorf("%s:%d %s words a failure and calls %s.%s: word the arguments' values, parse nothing",
						rel, fset.Position(sel.Pos()).Line, fn.Name.Name, id.Name, sel.Sel.Name)
				}
				return true
			})
		}
	})
	if wording < 3 {
		t.Errorf("found %d functions taking a FailureArgs, want at least ProblemSentence, FeedProblemSentence and problemText", wording)
	}
}

// takesFailureArgs: one of fn's parameters is a FailureArgs (in readmodel)
// or a readmodel.FailureArgs.
func takesFailureArgs(fn *ast.FuncDecl) bool {
	for _, p := range fn.Type.Params.List {
		switch typ := p.Type.(type) {
		case *ast.Ident:
			if typ.Name == "FailureArgs" {
				return true
			}
		case *ast.SelectorExpr:
			if id, ok := typ.X.(*ast.Ident); ok && id.Name == "readmodel" && typ.Sel.Name == "FailureArgs" {
				return true
			}
		}
	}
	return false
}
