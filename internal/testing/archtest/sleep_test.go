package archtest

import (
	"cmp"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
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
// time.Sleep, or pauses on time.After (a statement `<-time.After(d)`, a
// select whose only case it is, or a time.After case with an empty body),
// fails this test. time.After as the deadline case of a select, one that
// fails the test or returns, is fine. A pause inside a synctest bubble
// (synctest.Test's function) moves the bubble's fake clock and waits for
// nothing: it is allowed.
func TestOrdinaryTestsDoNotSleep(t *testing.T) {
	allowed := func(rel string) bool { _, ok := sleepAllowed[rel]; return ok }
	walkGoFiles(t, testFiles, 50, allowed, func(rel, path string) {
		for _, at := range sleeps(t, path) {
			t.Errorf("%s:%d pauses for a fixed time (time.Sleep, or an empty wait on time.After): wait on a signal, or poll with internal/testing/wait", rel, at)
		}
	})
}

// sleeps returns the lines of file's fixed pauses (time.Sleep, an empty
// wait on time.After) outside a synctest bubble.
func sleeps(t *testing.T, file string) []int {
	t.Helper()
	return sleepsIn(t, file, nil)
}

// sleepsIn is sleeps on src when it is not nil.
func sleepsIn(t *testing.T, file string, src any) []int {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
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
			if at := emptyAfter(n, timeName); at.IsValid() && !bubble {
				lines = append(lines, fset.Position(at).Line)
			}
			if cc, ok := n.(*ast.CommClause); ok { // a case's receive is its select's
				for _, st := range cc.Body {
					walk(st, bubble)
				}
				return false
			}
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

// emptyAfter returns where n waits on time.After as a pause: the statement
// `<-time.After(d)` (or `_ = <-time.After(d)`), a select whose one
// communication case receives from time.After, or a time.After case with
// an empty body (the select goes on as if what it waited for had come). A
// deadline case does something (fails the test, returns). It returns
// token.NoPos for anything else.
func emptyAfter(n ast.Node, timeName string) token.Pos {
	switch n := n.(type) {
	case *ast.ExprStmt:
		if isAfterRecv(n.X, timeName) {
			return n.Pos()
		}
	case *ast.AssignStmt:
		if len(n.Rhs) == 1 && isAfterRecv(n.Rhs[0], timeName) {
			return n.Pos()
		}
	case *ast.SelectStmt:
		comms := 0
		var after *ast.CommClause
		for _, c := range n.Body.List {
			cc := c.(*ast.CommClause)
			if cc.Comm == nil {
				continue
			}
			comms++
			var recv ast.Expr
			switch c := cc.Comm.(type) {
			case *ast.ExprStmt:
				recv = c.X
			case *ast.AssignStmt:
				recv = c.Rhs[0]
			}
			if recv != nil && isAfterRecv(recv, timeName) {
				after = cc
			}
		}
		if after != nil && (comms == 1 || len(after.Body) == 0) {
			return after.Pos()
		}
	}
	return token.NoPos
}

// isAfterRecv says whether e is `<-time.After(d)`.
func isAfterRecv(e ast.Expr, timeName string) bool {
	u, ok := ast.Unparen(e).(*ast.UnaryExpr)
	if !ok || u.Op != token.ARROW {
		return false
	}
	call, ok := ast.Unparen(u.X).(*ast.CallExpr)
	return ok && isSel(call.Fun, timeName, "After")
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

// The rule catches an empty wait on time.After as it catches time.Sleep,
// and lets time.After be a select's deadline.
func TestSleepsFindsEmptyAfterWaits(t *testing.T) {
	t.Parallel()
	src := `package p

import (
	"testing/synctest"
	"time"
)

func f(done chan struct{}) {
	time.Sleep(time.Second)
	<-time.After(time.Second)
	_ = <-time.After(time.Second)
	select {
	case <-time.After(time.Second):
	}
	select {
	case <-done:
	case <-time.After(time.Second):
	}
	select {
	case <-done:
	case <-time.After(time.Second):
		panic("deadline")
	}
	synctest.Test(nil, func(*testing.T) { <-time.After(time.Second) })
}
`
	if got, want := sleepsIn(t, "p.go", src), []int{9, 10, 11, 13, 17}; !slices.Equal(got, want) {
		t.Fatalf("pauses at lines %v, want %v", got, want)
	}
}
