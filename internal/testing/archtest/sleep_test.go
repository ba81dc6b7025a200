package archtest

import (
	"cmp"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	root, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "go.mod")); err != nil || !strings.Contains(string(b), "module "+module+"\n") {
		t.Fatalf("%s is not the module's root: %v", root, err)
	}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if _, ok := sleepAllowed[rel]; ok {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		for _, at := range sleeps(t, path) {
			t.Errorf("%s:%d calls time.Sleep: wait on a signal, or poll with internal/testing/wait", rel, at)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("read %d test files under %s; the walk is wrong", files, root)
	}
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
