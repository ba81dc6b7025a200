package web_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/wait"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// catalogAPI reads one catalog API answer.
func catalogAPI(t *testing.T, c *client, query string) (int, map[string]map[string]any) {
	t.Helper()
	r := c.do("GET", "/api/admin/plugins/updates?"+query, "", "", nil)
	wantStatus(t, query, r, http.StatusOK)
	var page struct {
		Components []map[string]any `json:"components"`
		Total      int              `json:"total"`
	}
	if err := json.Unmarshal([]byte(r.body), &page); err != nil {
		t.Fatal(err)
	}
	byCode := map[string]map[string]any{}
	for _, e := range page.Components {
		byCode[e["code"].(string)] = e
	}
	return page.Total, byCode
}

// The demo's shop, installed a moment ago, whose source answers 503, was
// never read successfully: not stale in the API, the summary or the pages,
// and no page says "48 hours" of it. 48 hours after its installation (the
// database's clock, the row's timestamp moved back) it is stale everywhere.
func TestNewComponentWhoseSourceFailsIsNotStale(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	_, all := catalogAPI(t, admin, "per_page=50")
	if shop := all["shop"]; shop == nil || shop["stale"] != false || shop["last_error"] == nil {
		t.Fatalf("shop in the API: %v, want failing and not stale", shop)
	}
	if n, _ := catalogAPI(t, admin, "status=stale"); n != 0 {
		t.Errorf("the stale filter shows %d components right after the first check", n)
	}
	var sum struct{ Stale int }
	json.Unmarshal([]byte(admin.do("GET", "/api/admin/plugins/updates/summary", "", "", nil).body), &sum)
	if sum.Stale != 0 {
		t.Errorf("summary stale = %d, want 0", sum.Stale)
	}
	detail := admin.do("GET", "/admin/plugins/shop", "", "", nil).body
	if strings.Contains(detail, "48 hours") || strings.Contains(detail, `data-testid="detail-stale"`) {
		t.Error("shop's page calls a component installed a moment ago stale")
	}
	cat := admin.do("GET", "/admin/plugins", "", "", nil).body
	for _, row := range texts(t, cat, "catalog-row") {
		if strings.HasPrefix(row, "Shop") && (!strings.Contains(row, "Never read successfully") || strings.Contains(row, "Stale")) {
			t.Errorf("shop's catalog row: %q", row)
		}
	}
	if got := texts(t, admin.do("GET", "/admin", "", "", nil).body, "widget-stale"); len(got) != 1 ||
		!strings.Contains(got[0], " 0 components") {
		t.Errorf("the dashboard's stale warning (hidden at 0): %q", got)
	}

	b.db.MustExec(t, "UPDATE components SET created_at = clock_timestamp() - interval '48 hours 1 minute' WHERE code = 'shop'")
	// The server's snapshot of the read model is at most a second old
	// (docs/architecture.md): poll until it has seen the write.
	wait.True(t, "shop turns stale in the API", wait.Guard, func() bool {
		_, all = catalogAPI(t, admin, "per_page=50")
		return all["shop"]["stale"] == true
	})
	if n, stale := catalogAPI(t, admin, "status=stale"); n != 1 || stale["shop"] == nil {
		t.Errorf("the stale filter after 48 hours: %d, %v", n, stale)
	}
	if got := texts(t, admin.do("GET", "/admin/plugins?status=stale", "", "", nil).body, "catalog-row"); len(got) != 1 || !strings.HasPrefix(got[0], "Shop") {
		t.Errorf("the catalog page's stale filter: %q", got)
	}
}

// A dismissed advisory: the catalog row and the detail say so instead of a
// plain "Up to date", and the "dismissed" filter (page and API) finds it.
func TestDismissedAdvisoryFilterAndWords(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	if n, _ := catalogAPI(t, admin, "status=dismissed"); n != 0 {
		t.Fatalf("%d components with a dismissed advisory before any dismissal", n)
	}
	if _, err := b.dismissals.Dismiss(context.Background(), store.NewDismissal{Site: store.LocalSite, Code: "gallery", AdvisoryID: "ACME-2026-011", Reason: "not used"}); err != nil {
		t.Fatal(err)
	}
	n, got := catalogAPI(t, admin, "status=dismissed")
	if n != 1 || got["gallery"] == nil || got["gallery"]["dismissed_advisories"] != float64(1) || got["gallery"]["dismissed_until"] != nil {
		t.Fatalf("the dismissed filter: %d, %v", n, got)
	}
	page := admin.do("GET", "/admin/plugins?status=dismissed", "", "", nil)
	wantStatus(t, "dismissed page", page, 200)
	rows := texts(t, page.body, "catalog-status")
	if len(rows) != 1 || rows[0] != "Up to date · 1 advisory dismissed with no end" {
		t.Errorf("the catalog row of gallery: %q", rows)
	}
	if h := texts(t, admin.do("GET", "/admin/plugins/gallery", "", "", nil).body, "detail-headline"); len(h) != 1 ||
		h[0] != "Up to date · 1 advisory dismissed with no end" {
		t.Errorf("gallery's headline: %q", h)
	}
	if r := admin.do("GET", "/api/admin/plugins/updates?status=nope", "", "", nil); r.status != 400 || !strings.Contains(r.body, "dismissed") {
		t.Errorf("an unknown filter: %d %s", r.status, r.body)
	}
}

// The summary counts the sources with no key pinned; the dashboard and
// Source health say it beside the untrusted count.
func TestUnsignedSourcesInSummaryAndPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	var want int
	b.db.QueryRow(t, `SELECT count(DISTINCT source_url) FROM components c WHERE source_url IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM components k WHERE k.source_url = c.source_url AND k.pinned_key IS NOT NULL)`).Scan(&want)
	var sum map[string]any
	json.Unmarshal([]byte(admin.do("GET", "/api/admin/plugins/updates/summary", "", "", nil).body), &sum)
	if sum["unsigned_sources"] != float64(want) || want == 0 {
		t.Fatalf("summary unsigned_sources = %v, want %d", sum["unsigned_sources"], want)
	}
	words := "unsigned sources (no key pinned)"
	if want == 1 {
		words = "unsigned source (no key pinned)"
	}
	if got := texts(t, admin.do("GET", "/admin/sources", "", "", nil).body, "sources-trust-summary"); len(got) != 1 || !strings.HasSuffix(got[0], words) ||
		!strings.Contains(got[0], "untrusted") {
		t.Errorf("source health trust line %q", got)
	}
	if dash := admin.do("GET", "/admin", "", "", nil).body; !strings.Contains(dash, `data-testid="widget-unsigned">`) || !strings.Contains(dash, words) {
		t.Error("the dashboard does not count the unsigned sources")
	}
}

// The command line is "command line" in the history, the audit page and
// its CSV; an echo 404 says its title once.
func TestCommandLineWordsAndErrorTitle(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	if _, err := b.checker.RunLockedUpdateCheck(context.Background(), "operator", "cli"); err != nil {
		t.Fatal(err)
	}
	hist := admin.do("GET", "/admin/history", "", "", nil).body
	if strings.Contains(hist, "upcheck check") || !strings.Contains(hist, "command line") {
		t.Error("the history words the command line otherwise")
	}
	audit := admin.do("GET", "/admin/audit?kind=check", "", "", nil).body
	if strings.Contains(audit, ">cli<") || !strings.Contains(audit, "command line") {
		t.Error("the audit page words the command line otherwise")
	}
	r := admin.do("GET", "/admin/audit.csv?kind=check", "", "", nil)
	records, err := csv.NewReader(strings.NewReader(r.body)).ReadAll()
	if err != nil || len(records) < 2 {
		t.Fatalf("audit CSV: %v %q", err, r.body)
	}
	if actor := records[1][3]; actor != "command line" {
		t.Errorf("the CSV's actor of a command-line check: %q", actor)
	}
	nf := admin.do("GET", "/admin/no-such-page", "", "", nil)
	if got := texts(t, nf.body, "error-page"); nf.status != 404 || len(got) != 1 || strings.Count(strings.ToLower(got[0]), "not found") != 1 {
		t.Errorf("404 page: %d %q", nf.status, got)
	}
}

// A refused import reads "Refused" in the history and the audit log, not
// "Completed with failures".
func TestRefusedImportReadsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	var url string
	b.db.QueryRow(t, "SELECT source_url FROM components WHERE source_url IS NOT NULL ORDER BY code LIMIT 1").Scan(&url)
	res, err := updatecheck.NewImporter(b.checker).Import(context.Background(), url, []byte(`{"format": 1,`), "", "cli")
	if err != nil || res.Status != "refused" {
		t.Fatalf("import = %+v, %v; want refused", res, err)
	}
	hist := admin.do("GET", "/admin/history", "", "", nil).body
	if !strings.Contains(hist, `data-status="refused"`) || !strings.Contains(hist, ">Refused<") || strings.Contains(hist, "Completed with failures") {
		t.Errorf("the history of a refused import:\n%s", hist)
	}
	if rows := texts(t, admin.do("GET", "/admin/audit?kind=check", "", "", nil).body, "audit-row"); len(rows) != 1 ||
		!strings.Contains(rows[0], "Refused (Document import)") || !strings.Contains(rows[0], "command line") {
		t.Errorf("the audit log of a refused import: %q", rows)
	}
	// The API says what the page says.
	r := admin.do("GET", "/api/admin/history", "", "", nil)
	wantStatus(t, "the history API", r, 200)
	var api struct {
		Runs []struct {
			Trigger, Status string
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(r.body), &api); err != nil {
		t.Fatal(err)
	}
	if len(api.Runs) == 0 || api.Runs[0].Trigger != "import" || api.Runs[0].Status != "refused" {
		t.Errorf("the history API of a refused import: %+v", api.Runs)
	}
}
