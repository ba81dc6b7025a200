package web_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
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

// rankedComponent is a component of the keyset test, with the result (or
// none) that puts it in its rank.
type rankedComponent struct {
	code, name string
	source     string // "" none, "up" a source read successfully, "down" one failing
	result     string // "" none; else the component_results columns set, as SQL
}

// insertRanked stores the components with their sources and results, as a
// check would have left them.
func insertRanked(t *testing.T, b *bundle, cs ...rankedComponent) {
	t.Helper()
	b.db.MustExec(t, `INSERT INTO sources (url, epoch, document, document_hash, last_success_at, last_attempt_at)
		VALUES ('https://example.test/zz.json', 1, 'doc', sha256('doc'), clock_timestamp(), clock_timestamp()) ON CONFLICT (url) DO NOTHING`)
	b.db.MustExec(t, `INSERT INTO sources (url, epoch, last_attempt_at, last_error, last_error_at, consecutive_failures, failing_since)
		VALUES ('https://example.test/zz-down.json', 1, clock_timestamp(), 'HTTP 503', clock_timestamp(), 1, clock_timestamp()) ON CONFLICT (url) DO NOTHING`)
	for _, c := range cs {
		src := map[string]string{"": "", "up": "https://example.test/zz.json", "down": "https://example.test/zz-down.json"}[c.source]
		b.db.MustExec(t, "INSERT INTO components (code, name, installed_version, source_url) VALUES ($1, $2, '1.0.0', nullif($3, ''))",
			c.code, c.name, src)
		if c.result == "" {
			continue
		}
		b.db.MustExec(t, `INSERT INTO component_results (code, source_url, installed_version, core_version, document_hash, epoch)
			VALUES ($1, $2, '1.0.0', (SELECT installed_version FROM components WHERE code = 'core'), sha256('doc'), 1)`, c.code, src)
		if c.result != "-" {
			b.db.MustExec(t, "UPDATE component_results SET "+c.result+" WHERE code = $1", c.code)
		}
	}
}

// The API's after cursor walks the whole catalog in its order, across
// every rank upcheck_catalog_rank gives (readmodel.CatalogRankMin to
// CatalogRankMax), each component exactly once, ties by code, at any page
// size; and a row added or removed before the cursor moves no row across
// it.
func TestCatalogKeyset(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	// Components only this test's search (q=zz) finds, one rank after
	// another, named against their rank's order; "-" is a result with no
	// finding.
	insertRanked(t, b,
		rankedComponent{"zz-m", "Yak", "up", `advisories = '[{"id": "MAL-1", "malicious": true, "no_fix": true}]', advisory_ids = '{MAL-1}', no_fix_ids = '{MAL-1}', malicious_ids = '{MAL-1}'`},
		rankedComponent{"zz-k", "Xylo", "up", `advisories = '[{"id": "K-1", "fixed_in": "1.1.0"}]', advisory_ids = '{K-1}', exploited_ids = '{K-1}'`},
		rankedComponent{"zz-s", "Wolf", "up", `security = true, update_available = true, update_version = '1.1.0'`},
		rankedComponent{"zz-v", "Vole", "up", `advisories = '[{"id": "V-1", "fixed_in": "1.1.0"}]', advisory_ids = '{V-1}'`},
		rankedComponent{"zz-u", "Urchin", "up", `update_available = true, update_version = '1.1.0'`},
		rankedComponent{"zz-u2", "alpha", "up", `update_available = true, update_version = '1.1.0'`},
		rankedComponent{"zz-f", "Tern", "down", ""},
		rankedComponent{"zz-n", "Swan", "up", ""},
		rankedComponent{"zz-o", "Robin", "up", "-"},
		rankedComponent{"zz-c", "Tie", "up", "-"},
		rankedComponent{"zz-a", "tie", "up", "-"},
		rankedComponent{"zz-b", "TIE", "up", "-"},
		rankedComponent{"zz-q", "Quail", "", ""},
		rankedComponent{"zz-p", "Penguin", "", ""},
	)
	// Every rank is there, as the database ranks the rows.
	var ranks []int32
	b.db.QueryRow(t, `SELECT array_agg(DISTINCT upcheck_catalog_rank(malicious, known_exploited, security, vulnerable, update_available,
		source_url, failing, stale, evaluated)) FROM component_state WHERE code LIKE 'zz-%'`).Scan(&ranks)
	slices.Sort(ranks)
	var every []int32
	for r := readmodel.CatalogRankMin; r <= readmodel.CatalogRankMax; r++ {
		every = append(every, int32(r))
	}
	if !slices.Equal(ranks, every) {
		t.Fatalf("the test's components rank %v; want every rank %v", ranks, every)
	}
	want := []string{
		"zz-m",         // malicious
		"zz-k",         // known exploited
		"zz-v", "zz-s", // vulnerable, security update
		"zz-u2", "zz-u", // updates
		"zz-n", "zz-f", // not evaluated, failing
		"zz-o", "zz-a", "zz-b", "zz-c", // up to date
		"zz-p", "zz-q", // no source
	}
	if got := admin.catalogPage(t, "q=zz&per_page=500").codes(); !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}

	for _, size := range []int{1, 2, 3, 5} {
		var walked []string
		query := fmt.Sprintf("q=zz&per_page=%d", size)
		for range len(want) + 1 {
			p := admin.catalogPage(t, query)
			walked = append(walked, p.codes()...)
			if p.Next == nil {
				break
			}
			query = fmt.Sprintf("q=zz&per_page=%d&after=%s", size, url.QueryEscape(*p.Next))
		}
		if !slices.Equal(walked, want) {
			t.Errorf("walked with after, %d a page: %v, want %v", size, walked, want)
		}
	}

	// Page 1 ends at zz-v. Before reading page 2, one row before the
	// cursor goes and two come; page 2 still starts at zz-s.
	first := admin.catalogPage(t, "q=zz&per_page=3")
	if !slices.Equal(first.codes(), want[:3]) || first.Next == nil || first.Page == nil || *first.Page != 1 {
		t.Fatalf("page 1: %v, next %v, page %v", first.codes(), first.Next, first.Page)
	}
	b.db.MustExec(t, "DELETE FROM components WHERE code = 'zz-k'")
	insertRanked(t, b,
		rankedComponent{"zz-h", "Aardvark", "up", `security = true, update_available = true, update_version = '1.1.0'`},
		rankedComponent{"zz-0", "Ant", "up", `advisories = '[{"id": "K-2", "fixed_in": "1.1.0"}]', advisory_ids = '{K-2}', exploited_ids = '{K-2}'`})
	// Writes made behind the server's back (another instance's) show
	// within a second (the catalog's cache, design.md section 4).
	wait.True(t, "the catalog shows the added and removed rows within 2 s", 2*time.Second, func() bool {
		return admin.catalogPage(t, "q=zz&per_page=1").Total == len(want)+1
	})
	second := admin.catalogPage(t, "q=zz&per_page=3&after="+url.QueryEscape(*first.Next))
	if got := second.codes(); !slices.Equal(got, []string{"zz-s", "zz-u2", "zz-u"}) {
		t.Fatalf("page 2 after rows changed before the cursor: %v, want zz-s zz-u2 zz-u", got)
	}
	if second.Page != nil {
		t.Errorf("a page read with after has page %d; want none", *second.Page)
	}
	for _, q := range []string{"after=bm90IGEgY3Vyc29y", "after=%25%25", "page=2&after=" + url.QueryEscape(*first.Next),
		"after=" + cursor(readmodel.CatalogRankMin-1, "x", "zz-x"), "after=" + cursor(readmodel.CatalogRankMax+1, "x", "zz-x")} {
		if resp := admin.do("GET", "/api/admin/plugins/updates?"+q, "", "", nil); resp.status != 400 {
			t.Errorf("GET ?%s: %d, want 400", q, resp.status)
		}
	}
}

// cursor is a cursor as the API writes it, with any rank.
func cursor(rank int, name, code string) string {
	b, _ := json.Marshal([]any{rank, name, code})
	return base64.RawURLEncoding.EncodeToString(b)
}
