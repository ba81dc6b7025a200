package web_test

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/views"
)

// The document's enums are the vocabularies the code defines once: the
// catalog's filters (readmodel.CatalogFilters) and the audit log's kinds
// (views.AuditKind*). A filter added in Go and not in the document, or the
// other way round, fails here.
func TestOpenAPIEnumsAreTheVocabularies(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]struct {
			Get struct {
				Parameters []struct {
					Name   string `json:"name"`
					Schema struct {
						Enum []string `json:"enum"`
					} `json:"schema"`
				} `json:"parameters"`
			} `json:"get"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	enum := func(path, param string) []string {
		for _, p := range doc.Paths[path].Get.Parameters {
			if p.Name == param {
				return p.Schema.Enum
			}
		}
		t.Fatalf("GET %s has no parameter %q", path, param)
		return nil
	}
	var filters []string
	for _, f := range readmodel.CatalogFilters {
		if f != readmodel.FilterAll {
			filters = append(filters, f)
		}
	}
	if got := enum("/api/admin/plugins/updates", "status"); !slices.Equal(got, filters) {
		t.Errorf("the catalog's status enum is %v, the catalog's filters are %v", got, filters)
	}
	kinds := []string{views.AuditKindDismissal, views.AuditKindCheck, views.AuditKindAccount, views.AuditKindTrust}
	if got := enum("/api/admin/audit", "kind"); !slices.Equal(got, kinds) {
		t.Errorf("the audit log's kind enum is %v, the audit kinds are %v", got, kinds)
	}
}
