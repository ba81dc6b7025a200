package archtest

import (
	"cmp"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// sleepAllowed are the folders whose tests may pause for a fixed time,
// each with the reason: there a pause is the point, or it is the one place
// that waits for the others.
var sleepAllowed = map[string]string{
	"internal/testing/crashtest": "real-binary crash tests: a process is killed at a moment",
	"internal/testing/faulttest": "fault injection: a fault lasts a while",
	"internal/testing/cluster":   "several instances: an instance is frozen for a while",
	"internal/testing/wait":      "the polling helper itself: its pause between questions",
}

// An ordinary test waits on a signal or polls with internal/testing/wait,
// never for a fixed time: a test file outside the folders above that calls
// time.Sleep fails this test. A call inside a synctest bubble
// (synctest.Test's function) moves the bubble's fake clock and waits for
// nothing: it is allowed.
func TestOrdinaryTestsDoNotSleep(t *testing.T) {
	allowed := func(rel string) bool { _, ok := sleepAllowed[rel]; return ok }
	walkGoFiles(t, testFiles, 50, allowed, func(rel, path string) {
		for _, at := range sleeps(t, path) {
			t.Errorf("%s:%d calls time.Sleep: wait on a signal, or poll with internal/testing/wait", rel, at)
		}
	})
}

// sleeps returns the lines of file's calls to time.Sleep outside a
// synctest bubble.
func sleeps(t *testing.T, file string) []int {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	timeName, synctestName := "", ""
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := ""
		if imp.Name != nil {
			name = imp.Name.Name
		}
		switch path {
		case "time":
			timeName = cmp.Or(name, "time")
		case "testing/synctest":
			synctestName = cmp.Or(name, "synctest")
		}
	}
	if timeName == "" {
		return nil
	}
	var lines []int
	var walk func(n ast.Node, bubble bool)
	walk = func(n ast.Node, bubble bool) {
		ast.Inspect(n, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch {
			case isSel(call.Fun, timeName, "Sleep") && !bubble:
				lines = append(lines, fset.Position(call.Pos()).Line)
			case synctestName != "" && isSel(call.Fun, synctestName, "Test"):
				for _, arg := range call.Args {
					walk(arg, true)
				}
				return false
			}
			return true
		})
	}
	walk(f, false)
	return lines
}

// isSel says whether e is pkg.name.
func isSel(e ast.Expr, pkg, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg
}
