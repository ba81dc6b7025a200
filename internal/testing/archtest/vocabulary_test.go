package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
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
	for _, v := range readmodel.AttentionKinds {
		add(string(v))
	}
	add(readmodel.OfflinePrefix)
	return words
}

// A vocabulary's value is spelled once, in internal/readmodel: a string
// literal equal to one of spelledWords in the product's Go code (tests,
// sqlc's output, the harnesses and readmodel aside; a struct tag is a
// whole tag, never equal to a word) fails this test. SQL spells them in SQL, where
// readmodel's TestVocabulariesMatchSQL holds them.
func TestVocabularyIsSpelledOnce(t *testing.T) {
	words := spelledWords()
	if len(words) < 20 {
		t.Fatalf("only %d words to look for: %v", len(words), words)
	}
	skip := func(rel string) bool {
		return rel == "internal/readmodel" || rel == "internal/db" || rel == "internal/testing" || rel == "tools"
	}
	walkGoFiles(t, productFiles, 50, skip, func(rel, path string) {
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
	})
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
