package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/treekit"
)

// fleetBundle is three sites: the local one (lodash 4.17.21, clean),
// acme-shop (lodash 4.17.20, vulnerable, and evil 1.0.0, malicious) and
// globex-blog, which installed lodash 4.17.20 and then moved to 4.17.21,
// registered a month ago and never pushed (stale).
type fleetBundle struct {
	*bundle
	acme, globex store.Site
}

const (
	fleetAdvisory = "GHSA-FLEE-T000-0001"
	fleetMalware  = "MAL-2026-0001"
)

func setupFleet(t *testing.T) *fleetBundle {
	t.Helper()
	b := &fleetBundle{bundle: setup(t)}
	ctx := context.Background()
	var err error
	if _, b.acme, err = b.auth.AddSite(ctx, "acme-shop", "Acme"); err != nil {
		t.Fatal(err)
	}
	if _, b.globex, err = b.auth.AddSite(ctx, "globex-blog", "Globex"); err != nil {
		t.Fatal(err)
	}
	// globex was registered a month ago: stale (no push within
	// UPCHECK_SITE_STALE_AFTER, counted from its registration).
	if _, err := b.db.Pool.Exec(ctx, "UPDATE sites SET created_at = created_at - interval '30 days' WHERE id = $1", b.globex.ID); err != nil {
		t.Fatal(err)
	}
	treekit.Write(t, b.store, "package-lock.json", treekit.Tree(t, "node_modules/lodash 4.17.21"), nil)
	treekit.WriteSite(t, b.store, b.acme.ID, "package-lock.json", treekit.Tree(t, "node_modules/lodash 4.17.20", "node_modules/evil 1.0.0"), nil)
	treekit.WriteSite(t, b.store, b.globex.ID, "package-lock.json", treekit.Tree(t, "node_modules/lodash 4.17.20"), nil)
	treekit.WriteSite(t, b.store, b.globex.ID, "package-lock.json", treekit.Tree(t, "node_modules/lodash 4.17.21"), nil)
	treekit.WriteFindings(t, b.store, []store.TreeFinding{
		treeFinding(t, "lodash", "4.17.20", fleetAdvisory, false, false),
		treeFinding(t, "evil", "1.0.0", fleetMalware, true, false),
	}, nil)
	treekit.WriteSiteFixes(t, b.store, b.acme.ID, store.TreeFix{PackageID: "node_modules/lodash", AdvisoryID: fleetAdvisory,
		Fix: []byte(`{"kind": "in_range", "manager": "npm", "package": "lodash"}`)})
	return b
}

type fleetAnswer struct {
	Sites []readmodel.FleetRow `json:"sites"`
	Page  int                  `json:"page"`
	More  bool                 `json:"more"`
}

func (c *client) fleet(t *testing.T, query string) fleetAnswer {
	t.Helper()
	r := c.do("GET", "/api/admin/fleet?"+query, "", "", nil)
	wantStatus(t, "fleet "+query, r, 200)
	var a fleetAnswer
	if err := json.Unmarshal([]byte(r.body), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

func fleetSites(a fleetAnswer) []string {
	out := []string{}
	for _, s := range a.Sites {
		out = append(out, s.Site)
	}
	return out
}

func (c *client) fleetJSON(t *testing.T, path string, into any) {
	t.Helper()
	r := c.do("GET", path, "", "", nil)
	wantStatus(t, path, r, 200)
	if err := json.Unmarshal([]byte(r.body), into); err != nil {
		t.Fatal(err)
	}
}

// GET /api/admin/fleet, /summary and /impact for a viewer who sees every
// site, as openapi.json describes them (client.do checks every answer):
// each site's counts from the one definition, the orders, filters,
// search and pages; the totals; and the impact of an advisory and of a
// package in a range, now and in the tree's history (globex no longer
// installs the affected version and is named under ever, with what it
// runs now).
func TestFleetAPI(t *testing.T) {
	t.Parallel()
	b := setupFleet(t)
	viewer := b.login("viewer@example.test")

	all := viewer.fleet(t, "")
	// Most urgent first, then in the order the sites were made.
	if got := fleetSites(all); !slices.Equal(got, []string{"acme-shop", "local", "globex-blog"}) {
		t.Fatalf("most urgent first: %v", got)
	}
	acme := all.Sites[0]
	if !acme.Checked || acme.Packages != 2 || *acme.Counts.Malicious != 1 || acme.Counts.Vulnerable != 1 || acme.Counts.Total != 2 ||
		acme.Owner != "Acme" || acme.Stale || acme.Local {
		t.Errorf("acme: %+v", acme)
	}
	for _, s := range all.Sites[1:] {
		if s.Counts.Total != 0 || !s.Checked || s.Packages != 1 {
			t.Errorf("%s: %+v", s.Site, s)
		}
		if s.Stale != (s.Site == "globex-blog") || s.Local != (s.Site == "local") {
			t.Errorf("%s: stale %v local %v", s.Site, s.Stale, s.Local)
		}
	}
	if got := fleetSites(viewer.fleet(t, "sort=name")); !slices.Equal(got, []string{"acme-shop", "globex-blog", "local"}) {
		t.Errorf("by name: %v", got)
	}
	// None pushed: each never pushed, by name.
	if got := fleetSites(viewer.fleet(t, "sort=pushed")); !slices.Equal(got, []string{"acme-shop", "globex-blog", "local"}) {
		t.Errorf("by push: %v", got)
	}
	if got := fleetSites(viewer.fleet(t, "filter=malicious")); !slices.Equal(got, []string{"acme-shop"}) {
		t.Errorf("with malicious: %v", got)
	}
	if got := fleetSites(viewer.fleet(t, "filter=stale")); !slices.Equal(got, []string{"globex-blog"}) {
		t.Errorf("stale: %v", got)
	}
	if got := fleetSites(viewer.fleet(t, "q=GLOBEX")); !slices.Equal(got, []string{"globex-blog"}) {
		t.Errorf("search by owner: %v", got)
	}
	p1, p2 := viewer.fleet(t, "sort=name&per_page=2"), viewer.fleet(t, "sort=name&per_page=2&page=2")
	if !p1.More || p2.More || !slices.Equal(fleetSites(p2), []string{"local"}) {
		t.Errorf("pages: %+v, %+v", p1, p2)
	}
	for _, bad := range []string{"sort=size", "filter=vulnerable", "page=0", "per_page=501", "q=" + strings.Repeat("x", 201)} {
		wantStatus(t, bad, viewer.do("GET", "/api/admin/fleet?"+bad, "", "", nil), 400)
	}

	var sum readmodel.FleetSummary
	viewer.fleetJSON(t, "/api/admin/fleet/summary", &sum)
	if sum.Sites != 3 || sum.Checked != 3 || sum.Stale != 1 || sum.SitesMalicious != 1 || sum.SitesAttention != 1 ||
		sum.Packages != 4 || sum.Counts.Total != 2 || sum.Counts.Vulnerable != 1 {
		t.Errorf("summary: %+v", sum)
	}

	var im readmodel.FleetImpact
	viewer.fleetJSON(t, "/api/admin/fleet/impact?advisory="+strings.ToLower(fleetAdvisory), &im)
	if im.SitesNow != 1 || len(im.Now) != 1 || im.Now[0].Site != "acme-shop" || im.Now[0].Version != "4.17.20" ||
		im.Now[0].FixText != "in range: npm update lodash" {
		t.Errorf("advisory now: %+v", im.Now)
	}
	if im.SitesEver != 2 || len(im.Ever) != 2 || im.Ever[0].Site != "acme-shop" || im.Ever[0].RemovedAt != nil ||
		im.Ever[1].Site != "globex-blog" || im.Ever[1].RemovedAt == nil || !slices.Equal(im.Ever[1].Runs, []string{"4.17.21"}) {
		t.Errorf("advisory ever: %+v", im.Ever)
	}
	viewer.fleetJSON(t, "/api/admin/fleet/impact?package=lodash&range="+url.QueryEscape("<4.17.21"), &im)
	if im.SitesNow != 1 || im.SitesEver != 2 || im.Range != "<4.17.21" || len(im.Now) != 1 || im.Now[0].Site != "acme-shop" ||
		len(im.Now[0].Fixes) != 1 || im.Now[0].Fixes[0].Text != "in range: npm update lodash" {
		t.Errorf("package in a range: %+v", im)
	}
	viewer.fleetJSON(t, "/api/admin/fleet/impact?package=lodash", &im)
	if im.SitesNow != 3 || im.SitesEver != 3 || len(im.Now) != 3 || len(im.Ever) != 4 {
		t.Errorf("package at any version: %+v", im)
	}
	for _, bad := range []string{"", "range=1", "advisory=X&package=y", "package=lodash&range=" + url.QueryEscape(">=x.y")} {
		wantStatus(t, "impact "+bad, viewer.do("GET", "/api/admin/fleet/impact?"+bad, "", "", nil), 400)
	}

	page := viewer.do("GET", "/admin/fleet?filter=malicious", "", "", nil)
	wantStatus(t, "fleet page", page, 200)
	if !strings.Contains(page.body, `data-site="acme-shop"`) || strings.Contains(page.body, `data-site="globex-blog"`) ||
		!strings.Contains(page.body, "1 malicious package in the dependencies · 1 vulnerable dependency") {
		t.Errorf("fleet page: %.3000s", page.body)
	}
	page = viewer.do("GET", "/admin/fleet/impact?advisory="+fleetAdvisory, "", "", nil)
	wantStatus(t, "impact page", page, 200)
	if !strings.Contains(page.body, "1 site affected now") || !strings.Contains(page.body, "in range: npm update lodash") ||
		!strings.Contains(page.body, "runs 4.17.21") {
		t.Errorf("impact page: %.3000s", page.body)
	}
}

// loginLimited signs in a viewer whom SetUserSites limits to the sites
// named (a user limited away from the local site has no dashboard to
// read a CSRF token from: these reads need none).
func (b *fleetBundle) loginLimited(t *testing.T, email string, sites ...string) *client {
	t.Helper()
	ctx := context.Background()
	if _, err := b.auth.CreateUser(ctx, email, "viewer", testPassword); err != nil {
		t.Fatal(err)
	}
	if _, err := b.auth.SetUserSites(ctx, email, false, sites); err != nil {
		t.Fatal(err)
	}
	c := b.anonymous()
	r := c.do("POST", "/login", url.Values{"email": {email}, "password": {testPassword}, "next": {"/admin/fleet"}}.Encode(),
		"application/x-www-form-urlencoded", nil)
	if r.status != http.StatusSeeOther {
		t.Fatalf("login %s: %d %s", email, r.status, r.body)
	}
	return c
}

// A user limited to acme-shop sees nothing of globex-blog or of the local
// site in the fleet's page, API, summary and impact; one limited to the
// local site sees nothing of either registered site.
func TestFleetSeesOnlyItsSites(t *testing.T) {
	t.Parallel()
	b := setupFleet(t)
	c := b.loginLimited(t, "acme@example.test", "acme-shop")

	if got := fleetSites(c.fleet(t, "")); !slices.Equal(got, []string{"acme-shop"}) {
		t.Errorf("fleet: %v", got)
	}
	if got := fleetSites(c.fleet(t, "sort=name&q=blog")); len(got) != 0 {
		t.Errorf("search for another's site: %v", got)
	}
	var sum readmodel.FleetSummary
	c.fleetJSON(t, "/api/admin/fleet/summary", &sum)
	if sum.Sites != 1 || sum.Packages != 2 || sum.Stale != 0 {
		t.Errorf("summary: %+v", sum)
	}
	var im readmodel.FleetImpact
	c.fleetJSON(t, "/api/admin/fleet/impact?advisory="+fleetAdvisory, &im)
	if im.SitesNow != 1 || im.SitesEver != 1 || len(im.Ever) != 1 || im.Ever[0].Site != "acme-shop" {
		t.Errorf("impact: %+v", im)
	}
	c.fleetJSON(t, "/api/admin/fleet/impact?package=lodash", &im)
	if im.SitesNow != 1 || im.SitesEver != 1 || len(im.Now) != 1 || len(im.Ever) != 1 {
		t.Errorf("package impact: %+v", im)
	}
	for _, path := range []string{"/admin/fleet", "/admin/fleet?sort=name", "/admin/fleet/impact?package=lodash"} {
		page := c.do("GET", path, "", "", nil)
		wantStatus(t, path, page, 200)
		if !strings.Contains(page.body, "acme-shop") || strings.Contains(page.body, "globex") || strings.Contains(page.body, `data-site="local"`) {
			t.Errorf("%s names another's site: %.3000s", path, page.body)
		}
	}

	local := b.loginLimited(t, "local@example.test", "local")
	if got := fleetSites(local.fleet(t, "")); !slices.Equal(got, []string{"local"}) {
		t.Errorf("limited to the local site: %v", got)
	}
	local.fleetJSON(t, "/api/admin/fleet/impact?advisory="+fleetAdvisory, &im)
	if im.SitesNow != 0 || im.SitesEver != 0 || len(im.Now) != 0 || len(im.Ever) != 0 {
		t.Errorf("limited to the local site, impact: %+v", im)
	}
}

// The Fleet page's content is rendered once for the requests that show
// the same (fleetFragments): a user limited to acme-shop asking the page
// right after one who sees every site, and that one again, each get the
// sites they may see, never the other's page.
func TestFleetPageIsRenderedForItsSites(t *testing.T) {
	t.Parallel()
	b := setupFleet(t)
	all := b.login("viewer@example.test")
	acme := b.loginLimited(t, "acme@example.test", "acme-shop")
	for range 2 {
		page := all.do("GET", "/admin/fleet", "", "", nil)
		wantStatus(t, "every site's fleet", page, 200)
		for _, site := range []string{"acme-shop", "globex-blog", `data-site="local"`} {
			if !strings.Contains(page.body, site) {
				t.Errorf("every site's fleet lacks %s", site)
			}
		}
		page = acme.do("GET", "/admin/fleet", "", "", nil)
		wantStatus(t, "acme's fleet", page, 200)
		if !strings.Contains(page.body, "acme-shop") || strings.Contains(page.body, "globex") || strings.Contains(page.body, `data-site="local"`) {
			t.Errorf("acme's fleet names another's site: %.3000s", page.body)
		}
	}
}

// The fleet API's pages are encoded once for the requests that show the
// same read (fleetJSON): a user limited to acme-shop asking right after
// one who sees every site, and one page right after another, each get
// the answer to their own question.
func TestFleetAPIIsEncodedForItsQuestion(t *testing.T) {
	t.Parallel()
	b := setupFleet(t)
	all := b.login("viewer@example.test")
	acme := b.loginLimited(t, "acme@example.test", "acme-shop")
	type page struct {
		Sites []struct {
			Site string `json:"site"`
		} `json:"sites"`
		Page    int  `json:"page"`
		PerPage int  `json:"per_page"`
		More    bool `json:"more"`
	}
	names := func(p page) (out []string) {
		for _, s := range p.Sites {
			out = append(out, s.Site)
		}
		return out
	}
	for range 2 {
		if got := names(decodeJSON[page](t, all.do("GET", "/api/admin/fleet?sort=name", "", "", nil))); !slices.Equal(got, []string{"acme-shop", "globex-blog", "local"}) {
			t.Errorf("every site's fleet: %v", got)
		}
		if got := names(decodeJSON[page](t, acme.do("GET", "/api/admin/fleet?sort=name", "", "", nil))); !slices.Equal(got, []string{"acme-shop"}) {
			t.Errorf("acme's fleet: %v", got)
		}
		first := decodeJSON[page](t, all.do("GET", "/api/admin/fleet?sort=name&per_page=1", "", "", nil))
		second := decodeJSON[page](t, all.do("GET", "/api/admin/fleet?sort=name&per_page=1&page=2", "", "", nil))
		if !slices.Equal(names(first), []string{"acme-shop"}) || !first.More || !slices.Equal(names(second), []string{"globex-blog"}) {
			t.Errorf("pages one and two: %+v, %+v", first, second)
		}
	}
}
