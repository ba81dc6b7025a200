package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// publisherHome is the one place a test's publisher of update documents
// is built.
const publisherHome = "internal/testing/publisher"

// Tests get their publisher of update documents from
// internal/testing/publisher: a test file elsewhere that starts an
// httptest server, has an HTTP handler that writes a body, and holds an
// update document (a "format" literal, the Upcheck-Signature header, a call
// to updatedoc.Sign) is a publisher of its own, and fails this test.
// Servers that receive (webhooks, chats) or serve pages are not concerned.
func TestOnePublisher(t *testing.T) {
	walkGoFiles(t, testFiles, 50, func(rel string) bool { return rel == publisherHome }, func(rel, path string) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if why := ownPublisher(t, rel, src); why != "" {
			t.Errorf("%s is a publisher of its own (%s): use %s", rel, why, publisherHome)
		}
	})
}

// The rule catches a publisher written the way the five old copies were,
// and lets a webhook receiver and a test that uses the shared publisher be.
func TestOnePublisherRule(t *testing.T) {
	const fake = `package x
import ("net/http"; "net/http/httptest"; "testing")
func TestX(t *testing.T) {
	doc := ` + "`" + `{"format": 1, "publisher": "acme", "sequence": 1}` + "`" + `
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(doc)) }))
	defer srv.Close()
}`
	const signs = `package x
import ("io"; "net/http"; "net/http/httptest"; "github.com/upcheck/upcheck/internal/updatedoc")
type pub struct{ body []byte; key updatedoc.PrivateKey }
func (p *pub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Sig", updatedoc.Sign(p.body, p.key))
	io.WriteString(w, string(p.body))
}
var _ = httptest.NewServer(&pub{})`
	const receiver = `package x
import ("net/http"; "net/http/httptest"; "github.com/upcheck/upcheck/internal/testing/publisher")
type rcv struct{ n int }
func (r *rcv) ServeHTTP(w http.ResponseWriter, req *http.Request) { r.n++; w.WriteHeader(204) }
func site(t *testing.T) { p := publisher.New(t); p.Set("/", []byte(` + "`" + `{"format": 1}` + "`" + `)); _ = httptest.NewServer(&rcv{}) }`
	for _, tc := range []struct {
		name, src string
		caught    bool
	}{{"inline fake", fake, true}, {"signing fake", signs, true}, {"receiver beside the shared publisher", receiver, false}} {
		if got := ownPublisher(t, tc.name, []byte(tc.src)) != ""; got != tc.caught {
			t.Errorf("%s: caught %v, want %v", tc.name, got, tc.caught)
		}
	}
}

// documentText is the text of an update document in a Go string literal.
var documentText = regexp.MustCompile(`"format"\s*:\s*\d|Upcheck-Signature`)

// ownPublisher says why the test file src publishes update documents itself,
// or "" when it does not.
func ownPublisher(t *testing.T, name string, src []byte) string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{} // import path -> name in the file
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		n := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			n = imp.Name.Name
		}
		names[path] = n
	}
	httptest, hasHTTPTest := names["net/http/httptest"]
	if !hasHTTPTest {
		return ""
	}
	updatedoc := names[module+"/internal/updatedoc"]
	var starts, writes bool
	document := ""
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			for _, ctor := range []string{"NewServer", "NewUnstartedServer", "NewTLSServer"} {
				if isSel(n.Fun, httptest, ctor) {
					starts = true
				}
			}
			if updatedoc != "" && isSel(n.Fun, updatedoc, "Sign") {
				document = "signs with updatedoc.Sign"
			}
		case *ast.BasicLit:
			if text, err := strconv.Unquote(n.Value); n.Kind == token.STRING && err == nil && documentText.MatchString(text) && document == "" {
				document = "holds " + documentText.FindString(text)
			}
		case *ast.FuncLit:
			writes = writes || writesBody(n.Type, n.Body)
		case *ast.FuncDecl:
			writes = writes || writesBody(n.Type, n.Body)
		}
		return true
	})
	if starts && writes && document != "" {
		return "starts an httptest server whose handler writes a body, and " + document
	}
	return ""
}

// writesBody says whether a function with params (http.ResponseWriter,
// *http.Request) writes to its ResponseWriter: w.Write, io.WriteString(w,
// …), fmt.Fprint…(w, …).
func writesBody(ft *ast.FuncType, body *ast.BlockStmt) bool {
	if body == nil || ft.Params == nil || len(ft.Params.List) != 2 {
		return false
	}
	first := ft.Params.List[0]
	if sel, ok := first.Type.(*ast.SelectorExpr); !ok || sel.Sel.Name != "ResponseWriter" || len(first.Names) != 1 {
		return false
	}
	w := first.Names[0].Name
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if isSel(call.Fun, w, "Write") {
			found = true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && len(call.Args) > 0 &&
			(sel.Sel.Name == "WriteString" || strings.HasPrefix(sel.Sel.Name, "Fprint")) {
			if id, ok := call.Args[0].(*ast.Ident); ok && id.Name == w {
				found = true
			}
		}
		return !found
	})
	return found
}
