package web

import (
	"encoding/json"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// The API's encodings of rows a test builds by hand, for web_test's
// contract tests of values a check against a test's registry does not
// produce on demand (a changed registry key, a refused version).

// CatalogJSON is GET /api/admin/plugins/updates's answer for rows.
func CatalogJSON(rows ...readmodel.CatalogRow) ([]byte, error) {
	entries := make([]store.CatalogEntry, len(rows))
	for i, r := range rows {
		entries[i] = store.CatalogEntry{CatalogRow: r}
	}
	return catalogJSON(entries, len(rows), len(rows), 1)
}

// SourcesJSON is GET /api/admin/sources's answer for rows.
func SourcesJSON(rows ...readmodel.SourceRow) ([]byte, error) {
	out := make([]sourceJSON, len(rows))
	for i, r := range rows {
		out[i] = sourceBody(r)
	}
	return json.Marshal(map[string]any{"sources": out})
}

// DetailJSON is GET /api/admin/plugins/{code}'s answer for d.
func DetailJSON(d catalog.Detail) ([]byte, error) { return json.Marshal(detailBody(d)) }
