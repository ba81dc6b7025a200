package web_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/upcheck/upcheck/internal/metrics"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// texts is the text of every element of an HTML page carrying
// data-testid=id, whitespace collapsed, in document order.
func texts(t *testing.T, page, id string) []string {
	t.Helper()
	root, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for _, a := range n.Attr {
			if a.Key == "data-testid" && a.Val == id {
				var b strings.Builder
				var collect func(*html.Node)
				collect = func(n *html.Node) {
					switch n.Type {
					case html.TextNode:
						b.WriteString(n.Data)
					case html.ElementNode:
						if n.Data == "li" {
							b.WriteString(" ") // list items read apart
						}
					}
					for c := n.FirstChild; c != nil; c = c.NextSibling {
						collect(c)
					}
				}
				collect(n)
				out = append(out, strings.Join(strings.Fields(b.String()), " "))
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return out
}

// After a check of the demo site the summary names what needs attention
// (the advisory with no fix first), the source never read and the oldest
// exposure; the pages name the same: the banner on every page, the
// dashboard, the catalog's counted filters and the detail page's headline.
func TestAttentionNamed(t *testing.T) {
	t.Parallel()
	var m *metrics.Metrics
	b := setup(t, withMetrics(&m, true))
	admin := b.login("admin@example.test")
	exposure := func() float64 {
		t.Helper()
		r := b.anonymous().do("GET", "/metrics", "", "", nil)
		for line := range strings.Lines(r.body) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "upcheck_oldest_security_problem_seconds "); ok {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatal(err)
				}
				return f
			}
		}
		t.Fatalf("no upcheck_oldest_security_problem_seconds in\n%s", r.body)
		return 0
	}
	if s := exposure(); s != 0 {
		t.Fatalf("before any check the oldest security problem is %v s old", s)
	}
	wantStatus(t, "check", admin.postCheck(true), 200)
	// Known for three days now (before the summary is read and cached).
	b.db.MustExec(t, "UPDATE security_problems SET first_seen_at = first_seen_at - interval '3 days'")

	r := admin.do("GET", "/api/admin/plugins/updates/summary", "", "", nil)
	wantStatus(t, "summary", r, 200)
	var sum readmodel.Summary
	if err := json.Unmarshal([]byte(r.body), &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Attention) != 2 || sum.Attention[0].Code != "gallery" || sum.Attention[0].Kind != "vulnerable_no_fix" ||
		sum.Attention[1].Code != "blog" || sum.AttentionMore != 0 {
		t.Fatalf("summary attention: %s", r.body)
	}
	if a := sum.Attention[0].Advisory; a == nil || a.ID != "ACME-2026-011" || a.FixedIn != nil || !strings.Contains(r.body, `"fixed_in":null`) {
		t.Errorf("gallery's advisory: %s", r.body)
	}
	if sum.NeverSucceeded == nil || sum.NeverSucceeded.Code != "shop" || sum.OldestSecuritySince == nil ||
		!strings.Contains(r.body, `"next_check_at":null`) {
		t.Errorf("summary: %s", r.body)
	}

	if s := exposure(); s < 3*24*3600 || s > 3*24*3600+600 {
		t.Errorf("oldest security problem %v s old, want three days", s)
	}

	dash := admin.do("GET", "/admin", "", "", nil)
	wantStatus(t, "dashboard", dash, 200)
	// The dashboard names them once, in its widget; every other page's
	// banner names them.
	if banner := texts(t, dash.body, "attention-banner-items"); len(banner) != 0 {
		t.Errorf("the dashboard's banner names %q", banner)
	}
	hist := admin.do("GET", "/admin/history", "", "", nil)
	wantStatus(t, "history", hist, 200)
	banner := texts(t, hist.body, "attention-banner-items")
	if len(banner) != 1 || banner[0] != "Gallery 3.1.0: ACME-2026-011, no fix yet Blog 2.3.0 → 2.4.0: stored XSS in comments (high)" {
		t.Errorf("banner names %q", banner)
	}
	items := texts(t, dash.body, "widget-attention-items")
	if len(items) != 1 || !strings.Contains(items[0], "Blog 2.3.0 → 2.4.0: stored XSS in comments (high) Security fix available for 3 days") {
		t.Errorf("dashboard names %q", items)
	}
	if got := texts(t, dash.body, "widget-oldest-success"); len(got) != 1 || got[0] != "never (Shop has never been read successfully)" ||
		!strings.Contains(dash.body, `href="/admin/plugins/shop" data-testid="widget-never-succeeded"`) {
		t.Errorf("oldest success %q", got)
	}

	cat := admin.do("GET", "/admin/plugins", "", "", nil)
	wantStatus(t, "catalog", cat, 200)
	if got := texts(t, cat.body, "catalog-filters"); len(got) != 1 ||
		got[0] != "All (7) Needs attention (2) Updates (2) Security (1) Vulnerable (2) Failing checks (1) Stale (0) Dismissed advisories (0)" {
		t.Errorf("catalog filters %q", got)
	}
	var order []string
	for _, row := range texts(t, cat.body, "catalog-row") {
		order = append(order, strings.Fields(row)[0])
	}
	// Needing action, updates, a failing check, up to date, untracked.
	if got := strings.Join(order, " "); got != "Blog Gallery Core Shop Forms Newsletter Legacy" {
		t.Errorf("catalog order %q", got)
	}
	if got := texts(t, cat.body, "exposure"); len(got) != 2 || got[0] != "Security fix available for 3 days" || got[1] != "Vulnerable for 3 days" {
		t.Errorf("catalog exposure clocks %q", got)
	}
	wantStatus(t, "attention filter", admin.do("GET", "/admin/plugins?status=attention", "", "", nil), 200)
	api := admin.do("GET", "/api/admin/plugins/updates?status=attention", "", "", nil)
	wantStatus(t, "API attention filter", api, 200)
	var page struct {
		Components []struct {
			Code          string     `json:"code"`
			SecuritySince *time.Time `json:"security_since"`
		} `json:"components"`
		Total int `json:"total"`
	}
	if err := json.Unmarshal([]byte(api.body), &page); err != nil {
		t.Fatal(err)
	}
	if page.Total != 2 || len(page.Components) != 2 || page.Components[0].SecuritySince == nil {
		t.Errorf("API attention filter: %s", api.body)
	}

	for code, want := range map[string]string{
		"blog":         "Security update: update to 2.4.0 (high) Security fix available for 3 days",
		"gallery":      "Vulnerable, no fix yet: consider disabling Gallery until a fix is published Vulnerable for 3 days",
		"newsletter":   "Update to 5.1.0 needs core 2.0.0 or newer (installed 1.9.0)",
		"core":         "Update available: update to 1.10.0",
		"forms":        "Up to date",
		"shop":         "Unknown: the update source has never been read successfully",
		"legacy-theme": "Not tracked: nobody publishes updates for this component",
	} {
		d := admin.do("GET", "/admin/plugins/"+code, "", "", nil)
		wantStatus(t, code, d, 200)
		if got := texts(t, d.body, "detail-headline"); len(got) != 1 || !strings.HasPrefix(got[0], want) {
			t.Errorf("%s: headline %q, want %q", code, got, want)
		}
	}
	if d := admin.do("GET", "/admin/plugins/newsletter", "", "", nil); !strings.Contains(d.body, "2.0.0 or newer") || strings.Contains(d.body, "&gt;=2.0.0") {
		t.Errorf("newsletter's releases show the range as written")
	}
}

// "Needs attention" is one set (upcheck_needs_attention): the banner's
// count (the components it names and "and N more"), the navigation badge,
// the dashboard's list, the summary's attention_total and the catalog's
// attention filter (its count, its rows, the API's total) agree, on a site
// with a security update, a vulnerable version, a trust downgrade of each
// kind and a deprecated version; a plain update and an up-to-date
// component are in none of them.
func TestAttentionIsOneSet(t *testing.T) {
	t.Parallel()
	b := setup(t)
	insertRanked(t, b,
		rankedComponent{"zz-sec", "Sec", "up", `security = true, update_available = true, update_version = '1.1.0'`},
		rankedComponent{"zz-vul", "Vul", "up", `advisories = '[{"id": "V-1", "fixed_in": "1.1.0"}]', advisory_ids = '{V-1}'`},
		rankedComponent{"zz-lost", "Lost", "up", `provenance_lost = '1.1.0', update_available = true, update_version = '1.1.0'`},
		rankedComponent{"zz-pub", "Pub", "up", `new_publisher_version = '1.1.0', new_publisher = 'mallory', update_available = true, update_version = '1.1.0'`},
		rankedComponent{"zz-pin", "Pin", "up", "-"},
		rankedComponent{"zz-dep", "Dep", "up", `deprecated = 'use something else'`},
		rankedComponent{"zz-upd", "Upd", "up", `update_available = true, update_version = '1.1.0'`},
		rankedComponent{"zz-ok", "Ok", "up", "-"},
	)
	b.db.MustExec(t, `INSERT INTO pin_downgrades (code, source_url, pin, reason) VALUES ('zz-pin', 'https://example.test/zz.json', '', 'the manifest pins no key any more')`)
	want := []string{"zz-dep", "zz-lost", "zz-pin", "zz-pub", "zz-sec", "zz-vul"}
	admin := b.login("admin@example.test")

	r := admin.do("GET", "/api/admin/plugins/updates/summary", "", "", nil)
	wantStatus(t, "summary", r, 200)
	var sum readmodel.Summary
	if err := json.Unmarshal([]byte(r.body), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.AttentionTotal != len(want) || len(sum.Attention)+sum.AttentionMore != len(want) {
		t.Errorf("summary: attention_total %d, %d named and %d more; want %d", sum.AttentionTotal, len(sum.Attention), sum.AttentionMore, len(want))
	}

	// The API's filter.
	var page struct {
		Components []struct {
			Code string `json:"code"`
		} `json:"components"`
		Total int `json:"total"`
	}
	api := admin.do("GET", "/api/admin/plugins/updates?status=attention", "", "", nil)
	wantStatus(t, "API attention filter", api, 200)
	if err := json.Unmarshal([]byte(api.body), &page); err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, c := range page.Components {
		listed = append(listed, c.Code)
	}
	slices.Sort(listed)
	if page.Total != sum.AttentionTotal || !slices.Equal(listed, want) {
		t.Errorf("API attention filter: total %d, %v; the summary counts %d, want %v", page.Total, listed, sum.AttentionTotal, want)
	}

	// The page's filter and its banner.
	cat := admin.do("GET", "/admin/plugins?status=attention", "", "", nil)
	wantStatus(t, "attention filter", cat, 200)
	filters := texts(t, cat.body, "catalog-filters")
	m := regexp.MustCompile(`Needs attention \((\d+)\)`).FindStringSubmatch(strings.Join(filters, " "))
	if m == nil || m[1] != strconv.Itoa(len(want)) {
		t.Errorf("catalog filters %q: want Needs attention (%d)", filters, len(want))
	}
	if rows := texts(t, cat.body, "catalog-row"); len(rows) != len(want) {
		t.Errorf("the attention filter lists %d rows, want %d: %q", len(rows), len(want), rows)
	}
	if n := bannerCount(t, cat.body); n != len(want) {
		t.Errorf("the banner counts %d components (named and more), the filter lists %d", n, len(want))
	}
	if got := regexp.MustCompile(`data-testid="nav-attention-badge" data-count="(\d+)"`).FindStringSubmatch(cat.body); got == nil || got[1] != strconv.Itoa(len(want)) {
		t.Errorf("the navigation badge counts %v, want %d", got, len(want))
	}

	// The dashboard names them once, in its own list (5 at most, then "and
	// 1 more component"), not in the banner as well.
	dash := admin.do("GET", "/admin", "", "", nil)
	wantStatus(t, "dashboard", dash, 200)
	if got := texts(t, dash.body, "attention-banner-items"); len(got) != 0 {
		t.Errorf("the dashboard's banner names %q; its Needs attention names them", got)
	}
	if got := texts(t, dash.body, "security-alert-text"); len(got) != 1 {
		t.Errorf("the dashboard's banner says %q", got)
	}
	items := texts(t, dash.body, "attention-item")
	more := texts(t, dash.body, "attention-more")
	if len(items) != readmodel.AttentionLimit || len(more) != 1 || more[0] != "and 1 more component" {
		t.Errorf("the dashboard names %q, then %q", items, more)
	}
}

// bannerCount is how many components the attention banner of a page
// counts: those it names, and the N of "and N more".
func bannerCount(t *testing.T, page string) int {
	t.Helper()
	lists := texts(t, page, "attention-banner-items")
	if len(lists) != 1 {
		t.Fatalf("%d banner lists", len(lists))
	}
	n := strings.Count(page, `data-testid="attention-item"`)
	for _, m := range texts(t, page, "attention-more") {
		k, err := strconv.Atoi(strings.Fields(m)[1])
		if err != nil {
			t.Fatalf("banner's more link %q", m)
		}
		n += k
	}
	return n
}
