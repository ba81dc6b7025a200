package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/auth"
)

// siteRowNames are the names of a Sites page's rows, in order.
func siteRowNames(body string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`data-testid="site-row" data-name="([^"]+)"`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// sitesPage is a page of GET /api/admin/sites.
type sitesPage struct {
	Sites   []siteAnswer
	Page    int  `json:"page"`
	PerPage int  `json:"per_page"`
	More    bool `json:"more"`
	Total   int  `json:"total"`
}

func (p sitesPage) names() []string {
	out := make([]string, len(p.Sites))
	for i, s := range p.Sites {
		out[i] = s.Name
	}
	return out
}

// The Sites section and GET /api/admin/sites are paged as the Fleet is:
// with more sites than a page (the local site and 55 registered ones),
// the first page holds the local site and then the first 49 by name, the
// second the 6 others; the search finds a site by a part of its owner,
// without case; the API pages the same with page and per_page, more and
// total (client.do checks each answer against openapi.json); a user
// limited to three sites pages and counts those three alone, and sees no
// name of another site on any page.
func TestSitesPaged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var names []string
	for i := range 55 {
		name, owner := fmt.Sprintf("site-%03d", i), fmt.Sprintf("Owner %d", i)
		if i == 7 {
			owner = "Initech Corp"
		}
		if _, _, err := b.auth.AddSite(ctx, name, owner); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	// The rows come in name order whatever the order of registration.
	if _, _, err := b.auth.AddSite(ctx, "aaa-last-added", "Owner z"); err != nil {
		t.Fatal(err)
	}
	names = append([]string{"aaa-last-added"}, names...)
	local := "local"

	admin := b.login("admin@example.test")
	first := admin.do("GET", "/admin/sites", "", "", nil)
	wantStatus(t, "page 1", first, http.StatusOK)
	if got, want := siteRowNames(first.body), append([]string{local}, names[:49]...); !slices.Equal(got, want) {
		t.Errorf("page 1 lists %v, want %v", got, want)
	}
	if !strings.Contains(first.body, "Showing 1–50 of 57 sites") || !strings.Contains(first.body, `href="/admin/sites?page=2"`) ||
		!strings.Contains(first.body, `data-testid="site-form"`) {
		t.Errorf("page 1: no count, no link to page 2, or no add form: %.3000s", first.body)
	}
	second := admin.do("GET", "/admin/sites?page=2", "", "", nil)
	if got := siteRowNames(second.body); !slices.Equal(got, names[49:]) {
		t.Errorf("page 2 lists %v, want %v", got, names[49:])
	}
	if !strings.Contains(second.body, "Showing 51–57 of 57 sites") {
		t.Errorf("page 2's count: %.3000s", second.body)
	}
	found := admin.do("GET", "/admin/sites?q=INITECH", "", "", nil)
	if got := siteRowNames(found.body); !slices.Equal(got, []string{"site-007"}) || !strings.Contains(found.body, "matching “INITECH”") {
		t.Errorf("the search by owner lists %v", got)
	}
	wantStatus(t, "page 0", admin.do("GET", "/admin/sites?page=0", "", "", nil), http.StatusBadRequest)

	token, err := b.auth.CreateToken(ctx, "admin@example.test", "sites")
	if err != nil {
		t.Fatal(err)
	}
	api := func(h map[string]string, query string) sitesPage {
		t.Helper()
		r := b.anonymous().do("GET", "/api/admin/sites"+query, "", "", h)
		wantStatus(t, "GET /api/admin/sites"+query, r, http.StatusOK)
		var p sitesPage
		if err := json.Unmarshal([]byte(r.body), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	admins := map[string]string{"Authorization": "Bearer " + token}
	if p := api(admins, "?per_page=50"); !slices.Equal(p.names(), append([]string{local}, names[:49]...)) || !p.More || p.Total != 57 || p.Page != 1 || p.PerPage != 50 {
		t.Errorf("the API's page 1: %v more %v total %d page %d per_page %d", p.names(), p.More, p.Total, p.Page, p.PerPage)
	}
	if p := api(admins, "?per_page=50&page=2"); !slices.Equal(p.names(), names[49:]) || p.More || p.Total != 57 {
		t.Errorf("the API's page 2: %v more %v total %d", p.names(), p.More, p.Total)
	}
	if p := api(admins, "?q=initech"); !slices.Equal(p.names(), []string{"site-007"}) || p.Total != 1 || p.More {
		t.Errorf("the API's search by owner: %v total %d", p.names(), p.Total)
	}
	if p := api(admins, ""); len(p.Sites) != 57 || p.PerPage != 100 || p.More {
		t.Errorf("the API's default page: %d sites, per_page %d, more %v", len(p.Sites), p.PerPage, p.More)
	}
	wantStatus(t, "per_page 501", b.anonymous().do("GET", "/api/admin/sites?per_page=501", "", "", admins), http.StatusBadRequest)

	// A user limited to three sites: its pages and totals hold those alone.
	mine := []string{"site-010", "site-020", "site-030"}
	limited := b.limitedUser("three@example.test", auth.RoleViewer, mine...)
	p1, p2 := api(limited, "?per_page=2"), api(limited, "?per_page=2&page=2")
	if !slices.Equal(p1.names(), mine[:2]) || !p1.More || p1.Total != 3 || !slices.Equal(p2.names(), mine[2:]) || p2.More || p2.Total != 3 {
		t.Errorf("a limited user's API pages: %v (more %v, total %d), %v (more %v, total %d)", p1.names(), p1.More, p1.Total, p2.names(), p2.More, p2.Total)
	}
	if p := api(limited, "?q=initech"); len(p.Sites) != 0 || p.Total != 0 {
		t.Errorf("a limited user's search finds a site it may not see: %v total %d", p.names(), p.Total)
	}
	page := b.loginLimited("three@example.test").do("GET", "/admin/sites", "", "", nil)
	if got := siteRowNames(page.body); !slices.Equal(got, mine) || !strings.Contains(page.body, "Showing 1–3 of 3 sites") ||
		strings.Contains(page.body, `data-testid="sites-pagination"`) {
		t.Errorf("a limited user's page lists %v: %.3000s", got, page.body)
	}
	for _, other := range []string{"site-000", "site-007", "Initech", "aaa-last-added", `data-name="local"`} {
		if strings.Contains(page.body, other) {
			t.Errorf("a limited user is shown %s", other)
		}
	}
}
