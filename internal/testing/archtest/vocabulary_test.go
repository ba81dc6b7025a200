package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// spelledWords are the values of readmodel's vocabularies that product
// code must name by their constant, never spell: those with a '.', a '_'
// or a ':' in them, which mean nothing else (a plain word such as "failed"
// or "check" is also a delivery's state or a command's name).
func spelledWords() map[string]bool {
	words := map[string]bool{}
	add := func(values ...string) {
		for _, v := range values {
			if strings.ContainsAny(v, "._:") {
				words[v] = true
			}
		}
	}
	for _, v := range readmodel.ShownRunStatuses() {
		add(string(v))
	}
	for _, v := range readmodel.AllEventTypes() {
		add(string(v))
	}
	for _, v := range readmodel.AllAuditActions() {
		add(string(v))
	}
	for _, v := range readmodel.AllErrorKinds() {
		add(string(v))
	}
	add(readmodel.AttentionKinds...)
	add(readmodel.OfflinePrefix)
	return words
}

// A vocabulary's value is spelled once, in internal/readmodel: a string
// literal equal to one of spelledWords in the product's Go code (tests,
// sqlc's output, the harnesses and readmodel aside; a struct tag is a
// whole tag, never equal to a word) fails this test. SQL spells them in SQL, where
// readmodel's TestVocabulariesMatchSQL holds them.
func TestVocabularyIsSpelledOnce(t *testing.T) {
	root, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	words := spelledWords()
	if len(words) < 20 {
		t.Fatalf("only %d words to look for: %v", len(words), words)
	}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata" ||
				rel == "internal/readmodel" || rel == "internal/db" || rel == "internal/testing" || rel == "tools") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ImportSpec:
				return false
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					return true
				}
				if v, err := strconv.Unquote(n.Value); err == nil && words[v] {
					t.Errorf("%s:%d spells %q: name it by its readmodel constant", rel, fset.Position(n.Pos()).Line, v)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("read %d files under %s; the walk is wrong", files, root)
	}
}

// The page's script words no check status of its own: the server words
// every answer (the check API's message) and the tones come from the page
// (data-tones), so a status named in static/js/app.js is a second spelling
// that can drift from readmodel's.
func TestScriptSpellsNoCheckStatus(t *testing.T) {
	t.Parallel()
	script := readFile(t, filepath.Join(root, "static", "js", "app.js"))
	for _, s := range readmodel.ShownRunStatuses() {
		for _, quoted := range []string{`"` + string(s) + `"`, `'` + string(s) + `'`} {
			if strings.Contains(script, quoted) {
				t.Errorf("static/js/app.js spells the check status %s: read the answer's message or the page's data attributes", quoted)
			}
		}
	}
}
