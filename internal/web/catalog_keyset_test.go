package web_test

import (
	"encoding/json"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/testing/wait"
)

// keysetPage is one answer of the catalog API.
type keysetPage struct {
	Components []struct {
		Code string `json:"code"`
	} `json:"components"`
	Total int     `json:"total"`
	Page  *int    `json:"page"`
	Next  *string `json:"next"`
}

func (c *client) catalogPage(t *testing.T, query string) keysetPage {
	t.Helper()
	resp := c.do("GET", "/api/admin/plugins/updates?"+query, "", "", nil)
	if resp.status != 200 {
		t.Fatalf("GET %s: %d %s", query, resp.status, resp.body)
	}
	var p keysetPage
	if err := json.Unmarshal([]byte(resp.body), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p keysetPage) codes() []string {
	var out []string
	for _, c := range p.Components {
		out = append(out, c.Code)
	}
	return out
}

// The API's after cursor walks the catalog in its order, ties by code,
// and a row added or removed before the cursor moves no row across it.
func TestCatalogKeyset(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	// Components only this test's search (q=zz) finds, none evaluated: the
	// ones with a source rank "check not done" (stale), the one without
	// last; by name, then code, so the three "tie"s go by code.
	for _, c := range []struct{ code, name, source string }{
		{"zz-c", "Tie", "https://example.test/zz.json"},
		{"zz-a", "tie", "https://example.test/zz.json"},
		{"zz-b", "TIE", "https://example.test/zz.json"},
		{"zz-d", "Beta", "https://example.test/zz.json"},
		{"zz-e", "Gamma", "https://example.test/zz.json"},
		{"zz-f", "Alpha", ""},
		{"zz-g", "Delta", "https://example.test/zz.json"},
	} {
		b.db.MustExec(t, "INSERT INTO components (code, name, installed_version, source_url) VALUES ($1, $2, '1.0.0', nullif($3, ''))",
			c.code, c.name, c.source)
	}
	want := []string{"zz-d", "zz-g", "zz-e", "zz-a", "zz-b", "zz-c", "zz-f"}
	if got := admin.catalogPage(t, "q=zz&per_page=500").codes(); !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}

	var walked []string
	query := "q=zz&per_page=2"
	for range 10 {
		p := admin.catalogPage(t, query)
		walked = append(walked, p.codes()...)
		if p.Next == nil {
			break
		}
		query = "q=zz&per_page=2&after=" + url.QueryEscape(*p.Next)
	}
	if !slices.Equal(walked, want) {
		t.Fatalf("walked with after: %v, want %v", walked, want)
	}

	// Page 1 ends at zz-e. Before reading page 2, one row before the
	// cursor goes and two come; page 2 still starts at zz-a.
	first := admin.catalogPage(t, "q=zz&per_page=3")
	if !slices.Equal(first.codes(), want[:3]) || first.Next == nil || first.Page == nil || *first.Page != 1 {
		t.Fatalf("page 1: %v, next %v, page %v", first.codes(), first.Next, first.Page)
	}
	b.db.MustExec(t, "DELETE FROM components WHERE code = 'zz-d'")
	b.db.MustExec(t, "INSERT INTO components (code, name, installed_version, source_url) VALUES ('zz-h', 'Aardvark', '1.0.0', 'https://example.test/zz.json'), ('zz-0', 'Gamma', '1.0.0', 'https://example.test/zz.json')")
	// Writes made behind the server's back (another instance's) show
	// within a second (the catalog's cache, design.md section 4).
	wait.True(t, "the catalog shows the added and removed rows within 2 s", 2*time.Second, func() bool {
		return admin.catalogPage(t, "q=zz&per_page=1").Total == len(want)+1
	})
	second := admin.catalogPage(t, "q=zz&per_page=3&after="+url.QueryEscape(*first.Next))
	if got := second.codes(); !slices.Equal(got, []string{"zz-a", "zz-b", "zz-c"}) {
		t.Fatalf("page 2 after rows changed before the cursor: %v, want zz-a zz-b zz-c", got)
	}
	if second.Page != nil {
		t.Errorf("a page read with after has page %d; want none", *second.Page)
	}
	for _, q := range []string{"after=bm90IGEgY3Vyc29y", "after=%25%25", "page=2&after=" + url.QueryEscape(*first.Next)} {
		if resp := admin.do("GET", "/api/admin/plugins/updates?"+q, "", "", nil); resp.status != 400 {
			t.Errorf("GET ?%s: %d, want 400", q, resp.status)
		}
	}
}
