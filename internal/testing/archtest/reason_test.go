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
	"time"

	readside "github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
)

// Every reason release.Offer gives for not offering a release has words:
// each constant of type release.ReasonKind is listed by
// release.ReasonKinds, and readmodel.OfferReasonText words each, the same
// whether the reason is read from its stored JSON (readmodel.OfferReason,
// as the catalog reads component_results) or converted in memory
// (catalog.OfferReason, as the detail page and the API read the
// evaluation), and no two kinds alike; and openapi.json's ReasonKind
// lists the same kinds. A kind added to release without
// words in readmodel fails here, not on a page that says nothing.
func TestEveryReasonKindHasWords(t *testing.T) {
	declared := reasonKindConstants(t)
	listed := release.ReasonKinds()
	for _, k := range declared {
		if !slices.Contains(listed, k) {
			t.Errorf("release.ReasonKinds does not list %q", k)
		}
	}
	if len(listed) != len(declared) {
		t.Errorf("release.ReasonKinds lists %v; internal/release declares %v", listed, declared)
	}
	until := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	seen := map[string]release.ReasonKind{}
	for _, k := range listed {
		r := release.Reason{Kind: k, Hold: "<3.0.0", Tier: release.OfferSecurity, Soak: 72 * time.Hour, Until: &until,
			RequiresCore: "workspace:*"}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var stored readmodel.OfferReason
		if err := json.Unmarshal(b, &stored); err != nil {
			t.Fatal(err)
		}
		words := readmodel.OfferReasonText(stored)
		if words == "" {
			t.Errorf("reason kind %q has no words in readmodel.OfferReasonText", k)
			continue
		}
		if inMemory := readside.OfferReasonText(&r); inMemory != words {
			t.Errorf("reason %q: %q read from its JSON, %q converted by catalog.OfferReason", k, words, inMemory)
		}
		if other, ok := seen[words]; ok {
			t.Errorf("reason kinds %q and %q are both worded %q", other, k, words)
		}
		seen[words] = k
	}
	// The API documents the same kinds (reason_kind).
	var doc struct {
		Components struct {
			Schemas struct {
				ReasonKind struct {
					Enum []release.ReasonKind `json:"enum"`
				}
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(root, "internal", "web", "openapi.json"))), &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Components.Schemas.ReasonKind.Enum; !slices.Equal(got, listed) {
		t.Errorf("openapi.json's ReasonKind is %v, want release.ReasonKinds %v", got, listed)
	}
}

// reasonKindConstants are the values of the constants of type
// release.ReasonKind that internal/release declares.
func reasonKindConstants(t *testing.T) []release.ReasonKind {
	t.Helper()
	var kinds []release.ReasonKind
	walkGoFiles(t, productFiles, 1, func(rel string) bool { return rel != "." && rel != "internal" && rel != "internal/release" },
		func(rel, path string) {
			if filepath.Dir(rel) != "internal/release" {
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
					if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "ReasonKind" {
						continue
					}
					for _, val := range v.Values {
						if lit, ok := val.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							s, err := strconv.Unquote(lit.Value)
							if err != nil {
								t.Fatal(err)
							}
							kinds = append(kinds, release.ReasonKind(s))
						}
					}
				}
			}
		})
	if len(kinds) == 0 {
		t.Fatal("internal/release declares no ReasonKind constant")
	}
	return kinds
}
