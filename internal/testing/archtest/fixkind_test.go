package archtest

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/remedy"
)

// Every fix remedy decides for a tree finding has words: each constant
// of type remedy.Kind is listed by remedy.Kinds, and
// readmodel.TreeFixText words each as read from its stored JSON
// (readmodel.TreeFix), no two kinds alike; readmodel calls fixable the
// kinds remedy does, and no other. A kind added to remedy without words
// fails here, not on a page that says nothing.
func TestEveryFixKindHasWords(t *testing.T) {
	t.Parallel()
	declared := fixKindConstants(t)
	listed := remedy.Kinds()
	slices.Sort(declared)
	sorted := slices.Clone(listed)
	slices.Sort(sorted)
	if !slices.Equal(declared, sorted) {
		t.Errorf("remedy.Kinds lists %v; internal/remedy declares %v", listed, declared)
	}
	seen := map[string]remedy.Kind{}
	for _, k := range listed {
		f := remedy.Fix{Kind: k, Manager: remedy.ManagerNPM, Package: "ws", Component: "sock", PinnedBy: "engine",
			PinnedByVersion: "6.0.2", Range: "~8.11.0"}
		if k == remedy.KindComponent {
			f.Updates = []remedy.Update{{Component: "express", From: "4.17.1", To: "4.21.2"}}
		}
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		var stored readmodel.TreeFix
		if err := json.Unmarshal(b, &stored); err != nil {
			t.Fatal(err)
		}
		words := readmodel.TreeFixText(stored)
		if words == "" {
			t.Errorf("fix kind %q has no words in readmodel.TreeFixText", k)
			continue
		}
		if other, ok := seen[words]; ok {
			t.Errorf("fix kinds %q and %q are both worded %q", other, k, words)
		}
		seen[words] = k
		if stored.Fixable() != k.Fixable() {
			t.Errorf("fix kind %q: fixable %v in remedy, %v in readmodel", k, k.Fixable(), stored.Fixable())
		}
		if (readmodel.TreeActionText(stored, 1, 0) != "") != k.Fixable() {
			t.Errorf("fix kind %q: action words %q, fixable %v", k, readmodel.TreeActionText(stored, 1, 0), k.Fixable())
		}
	}
}

// fixKindConstants are the values of the constants of type remedy.Kind
// that internal/remedy declares.
func fixKindConstants(t *testing.T) []remedy.Kind {
	t.Helper()
	var kinds []remedy.Kind
	walkGoFiles(t, productFiles, 1, func(rel string) bool { return rel != "." && rel != "internal" && rel != "internal/remedy" },
		func(rel, path string) {
			if filepath.Dir(rel) != "internal/remedy" {
				return
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					continue
				}
				for _, s := range g.Specs {
					v := s.(*ast.ValueSpec)
					if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Kind" {
						continue
					}
					for _, val := range v.Values {
						if lit, ok := val.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							s, err := strconv.Unquote(lit.Value)
							if err != nil {
								t.Fatal(err)
							}
							kinds = append(kinds, remedy.Kind(s))
						}
					}
				}
			}
		})
	if len(kinds) == 0 {
		t.Fatal("internal/remedy declares no Kind constant")
	}
	return kinds
}
