package views

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
	"golang.org/x/net/html"
)

// The catalog's filters say how many components each shows, and a row
// with a security problem says how long it has been known.
func TestCatalogCountsAndExposure(t *testing.T) {
	t.Parallel()
	root := doc(t, Catalog(CatalogProps{Layout: layout(attention(), true), Rows: catalogRows(), Page: 1, Total: 6,
		Counts: map[readmodel.Filter]int{readmodel.FilterAll: 6, readmodel.FilterAttention: 2, readmodel.FilterUpdates: 1, readmodel.FilterSecurity: 2, readmodel.FilterVulnerable: 2, readmodel.FilterFailing: 1, readmodel.FilterStale: 1, readmodel.FilterDismissed: 1}}))
	var chips []string
	for _, a := range findAll(one(t, root, "catalog-filters"), func(n *html.Node) bool { return n.Data == "a" }) {
		chips = append(chips, text(a))
	}
	if got := strings.Join(chips, " | "); got != "All (6) | Needs attention (2) | Updates (1) | Security (2) | Vulnerable (2) | Failing checks (1) | Stale (1) | Dismissed advisories (1)" {
		t.Errorf("filters %q", got)
	}
	rows := byTestID(root, "catalog-row")
	if got := text(one(t, rows[0], "exposure")); got != "Security fix available for 3 days" {
		t.Errorf("blog's exposure %q", got)
	}
	if got := text(one(t, rows[1], "exposure")); got != "Vulnerable for 2 hours" {
		t.Errorf("gallery's exposure (no fix) %q", got)
	}
	if n := len(byTestID(rows[3], "exposure")); n != 0 {
		t.Errorf("core, up to date, shows %d exposure clocks", n)
	}
}

func TestCatalog(t *testing.T) {
	t.Parallel()
	root := doc(t, Catalog(CatalogProps{Layout: layout(attention(), true), Rows: catalogRows(), Page: 3, PageSize: 6, Total: 3000}))
	rows := byTestID(root, "catalog-row")
	if len(rows) != len(catalogRows()) {
		t.Fatalf("%d rows", len(rows))
	}
	for i, r := range catalogRows() {
		if code, _ := attr(rows[i], "data-code"); code != r.Code {
			t.Errorf("row %d data-code %q, want %q", i, code, r.Code)
		}
		links := findAll(rows[i], func(n *html.Node) bool {
			h, _ := attr(n, "href")
			return n.Data == "a" && h == "/admin/plugins/"+r.Code
		})
		if len(links) != 1 {
			t.Errorf("row %s does not link to its page", r.Code)
		}
	}
	if got := text(one(t, root, "catalog-count")); got != "Showing 13–18 of 3,000 components" {
		t.Errorf("count line %q", got)
	}
	pager := one(t, root, "catalog-pagination")
	var items []string
	for _, li := range findAll(pager, func(n *html.Node) bool { return n.Data == "li" }) {
		items = append(items, text(li))
	}
	if got := strings.Join(items, " | "); got != "‹ Previous | Page 1 | Page 2 | Page 3 | Page 4 | Page 5 | … | Page 500 | Next ›" {
		t.Errorf("pagination %q", got)
	}
	current := findAll(pager, func(n *html.Node) bool { v, _ := attr(n, "aria-current"); return v == "page" })
	if len(current) != 1 || text(current[0]) != "Page 3" {
		t.Errorf("current page not marked")
	}

	// Security and vulnerability are said in words, not colour.
	if got := text(rows[1]); !strings.Contains(got, "Security update") || !strings.Contains(got, "Vulnerable, no fix yet") ||
		!strings.Contains(got, "Needs core 2.0.0 or newer") {
		t.Errorf("gallery row %q", got)
	}
}

func TestPager(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		page, size, total int
		want              string
		links             string
	}{
		{1, 50, 0, "Showing 0 of 0", "1"},
		{1, 50, 3000, "Showing 1–50 of 3,000", "1 2 3 … 60"},
		{60, 50, 3000, "Showing 2,951–3,000 of 3,000", "1 … 58 59 60"},
		{30, 0, 3000, "Showing 1,451–1,500 of 3,000", "1 … 28 29 30 31 32 … 60"},
		{99, 10, 15, "Showing 11–15 of 15", "1 2"},
		{-1, 10, 15, "Showing 1–10 of 15", "1 2"},
	} {
		pg := newPager(CatalogProps{Page: tc.page, PageSize: tc.size, Total: tc.total})
		if got := pg.showingText(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc, got, tc.want)
		}
		var links []string
		for _, l := range pg.Links {
			if l.Gap {
				links = append(links, "…")
			} else {
				links = append(links, strconv.Itoa(l.Number))
			}
		}
		if got := strings.Join(links, " "); got != tc.links {
			t.Errorf("%+v: links %q, want %q", tc, got, tc.links)
		}
	}
}

// A dismissed advisory does not leave a plain green "Up to date": the
// catalog row and the detail headline say how many are dismissed and
// until when, with plurals and without an end.
func TestDismissedAdvisoryIsNotPlainUpToDate(t *testing.T) {
	t.Parallel()
	dec20 := time.Date(2026, 12, 20, 23, 59, 59, 0, time.UTC)
	jan5 := time.Date(2027, 1, 5, 0, 0, 0, 0, time.UTC)
	dec16 := time.Date(2026, 12, 16, 0, 0, 0, 0, time.UTC)
	if got := untilText(&dec16); got != "the end of 15 Dec 2026 (UTC)" {
		t.Errorf("the row says %q", got)
	}
	for _, tc := range []struct {
		n     int
		until *time.Time
		want  string
	}{
		{1, &dec20, "Up to date · 1 advisory dismissed until 20 Dec"},
		{1, nil, "Up to date · 1 advisory dismissed with no end"},
		{2, nil, "Up to date · 2 advisories dismissed with no end"},
		{3, &jan5, "Up to date · 3 advisories dismissed, the first until the end of 4 Jan 2027"},
		// A dismissal until 15 Dec ends at 16 Dec 00:00 UTC: the badge
		// names the day the detail page's row does (the end of 15 Dec).
		{1, &dec16, "Up to date · 1 advisory dismissed until the end of 15 Dec"},
	} {
		row := readmodel.CatalogRow{Code: "core", Name: "Core", Installed: "1.9.0", Latest: "1.9.0", Evaluated: true,
			SourceURL: "https://updates.example.org/core.json", LastSuccessAt: ago(time.Hour),
			Dismissed: tc.n, DismissedUntil: tc.until}
		root := doc(t, Catalog(CatalogProps{Layout: layout(calm(), true), Rows: []readmodel.CatalogRow{row}, Page: 1, Total: 1}))
		if got := text(one(t, root, "catalog-status")); got != tc.want {
			t.Errorf("catalog row with %d dismissed: %q, want %q", tc.n, got, tc.want)
		}
		var as []AdvisoryRow
		for i := range tc.n {
			a := AdvisoryRow{ID: "A-" + string(rune('1'+i)), Severity: "low", FixedIn: "2.0.0", Dismissed: true,
				Dismissal: &AdvisoryDismissal{By: "ada@example.org", At: now.Add(-time.Hour), Reason: "r"}}
			if i == tc.n-1 { // the soonest end is found wherever it is listed
				a.Dismissal.ExpiresAt = tc.until
			}
			as = append(as, a)
		}
		p := DetailProps{Layout: layout(calm(), true), DetailRow: readmodel.DetailRow{Code: "core", Name: "Core", Installed: "1.9.0",
			SourceURL: row.SourceURL, LastSuccessAt: row.LastSuccessAt, Evaluated: true}, Advisories: as}
		if got := text(one(t, doc(t, ComponentDetail(p)), "detail-headline")); got != tc.want {
			t.Errorf("detail with %d dismissed: %q, want %q", tc.n, got, tc.want)
		}
	}
	// Beside other news, the dismissal is said too.
	row := readmodel.CatalogRow{Code: "blog", Installed: "1.0", UpdateAvailable: true, UpdateVersion: "1.1", Evaluated: true,
		SourceURL: "https://p.example/u.json", LastSuccessAt: ago(time.Hour), Dismissed: 1}
	got := rowBadges(row, now)
	if len(got) != 2 || got[0].Text != "Update to 1.1" || got[1].Text != "1 advisory dismissed with no end" {
		t.Errorf("update and a dismissal: %+v", got)
	}
}

// The catalog page offers every filter the store and the API know, the
// dismissed and stale ones included, each with its count line and its
// empty page in words of its own.
func TestCatalogOffersEveryFilter(t *testing.T) {
	t.Parallel()
	var offered []readmodel.Filter
	for _, f := range filterOptions {
		offered = append(offered, f.Value)
	}
	if !slices.Equal(offered, readmodel.CatalogFilters) {
		t.Fatalf("the page offers %q, the read model defines %q", offered, readmodel.CatalogFilters)
	}
	general := filterNoun("", 2)
	for _, f := range readmodel.CatalogFilters[1:] {
		if filterNoun(f, 2) == general {
			t.Errorf("filter %q has no count words of its own", f)
		}
		if catalogEmptyText(CatalogProps{Filter: f}) == catalogEmptyText(CatalogProps{}) {
			t.Errorf("filter %q has no empty page of its own", f)
		}
	}
	if got := filterNoun(readmodel.FilterDismissed, 1); got != "component with a dismissed advisory" {
		t.Errorf("dismissed count words %q", got)
	}
}
