package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
)

// sitePagesLock is a package-lock.json as npm writes it: left-pad and a
// scoped package, which the pages and routes reach plainly
// (/packages/@types/node) and escaped.
const sitePagesLock = `{"name":"shop","lockfileVersion":3,"requires":true,"packages":{` +
	`"":{"name":"shop","dependencies":{"left-pad":"^1.3.0","@types/node":"^20.0.0"}},` +
	`"node_modules/left-pad":{"version":"1.3.0","resolved":"http://127.0.0.1/left-pad/-/left-pad-1.3.0.tgz"},` +
	`"node_modules/@types/node":{"version":"20.0.0","resolved":"http://127.0.0.1/@types/node/-/node-20.0.0.tgz"}}}`

// sitePagesBundle is the local site and two registered ones: acme, which
// pushed sitePagesLock through the push endpoint, and globex, which never
// pushed.
func sitePagesBundle(t *testing.T) *bundle {
	t.Helper()
	b := setup(t)
	ctx := context.Background()
	token, _, err := b.auth.AddSite(ctx, "acme", "Acme Ltd")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.auth.AddSite(ctx, "globex", "Globex"); err != nil {
		t.Fatal(err)
	}
	push := b.anonymous().do("PUT", "/api/sites/acme/lockfile?name=package-lock.json", sitePagesLock, "application/octet-stream",
		map[string]string{"Authorization": "Bearer " + token})
	wantStatus(t, "acme's push", push, http.StatusOK)
	return b
}

// A registered site's pages and JSON show the tree it pushed, with the
// local site's handlers and templates scoped to it: its overview (its
// push in words, its counts as the fleet counts them, and that its
// components, not checked yet: never "up to date"), its Packages page with
// the filters and links that stay on the site, a package's page plain
// and escaped, and the JSON twins as openapi.json describes them
// (client.do checks every answer). A site that never pushed says its
// dependencies are not checked; /sites/local/… redirects to today's
// URLs; an unknown site is the 404 of an unknown path.
func TestSitePagesShowThePushedTree(t *testing.T) {
	t.Parallel()
	b := sitePagesBundle(t)
	viewer := b.login("viewer@example.test")

	page := viewer.do("GET", "/sites/acme", "", "", nil)
	wantStatus(t, "acme's overview", page, http.StatusOK)
	for _, want := range []string{`data-testid="site-overview" data-site="acme"`, "Acme Ltd", "Lockfile: last push ",
		`data-testid="site-components"`, "Components: 2 direct dependencies, not all checked yet", `href="/sites/acme/packages"`, "2 packages installed"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("acme's overview lacks %q: %.4000s", want, page.body)
		}
	}
	if strings.Contains(strings.ToLower(page.body), "up to date") || strings.Contains(page.body, `data-testid="site-not-checked"`) {
		t.Errorf("acme's overview says up to date, or not checked")
	}

	list := viewer.do("GET", "/sites/acme/packages", "", "", nil)
	wantStatus(t, "acme's packages", list, http.StatusOK)
	for _, want := range []string{`data-name="left-pad"`, `href="/sites/acme/packages/left-pad"`, `href="/sites/acme/packages/@types%2Fnode"`,
		`action="/sites/acme/packages"`, `href="/sites/acme/packages?filter=vulnerable"`, `<a href="/sites/acme">acme</a>`} {
		if !strings.Contains(list.body, want) {
			t.Errorf("acme's Packages page lacks %q", want)
		}
	}
	local := viewer.do("GET", "/admin/packages", "", "", nil)
	if strings.Contains(local.body, `data-name="left-pad"`) {
		t.Error("the local site's Packages page lists acme's left-pad")
	}
	if r := viewer.do("GET", "/sites/acme/packages?q=pad", "", "", nil); !strings.Contains(r.body, `data-name="left-pad"`) ||
		strings.Contains(r.body, `data-name="@types/node"`) {
		t.Error("acme's search for pad")
	}
	wantStatus(t, "a bad filter", viewer.do("GET", "/sites/acme/packages?filter=bogus", "", "", nil), http.StatusBadRequest)
	for _, path := range []string{"/sites/acme/packages/left-pad", "/sites/acme/packages/@types/node", "/sites/acme/packages/@types%2Fnode"} {
		p := viewer.do("GET", path, "", "", nil)
		wantStatus(t, path, p, http.StatusOK)
		if !strings.Contains(p.body, `data-testid="package-detail"`) || !strings.Contains(p.body, `data-testid="package-instance"`) ||
			!strings.Contains(p.body, `<li><a href="/sites/acme/packages">Packages</a></li>`) {
			t.Errorf("%s: %.3000s", path, p.body)
		}
	}
	wantStatus(t, "a package acme never installed", viewer.do("GET", "/sites/acme/packages/express", "", "", nil), http.StatusNotFound)

	never := viewer.do("GET", "/sites/globex", "", "", nil)
	if !strings.Contains(never.body, `data-testid="site-not-checked"`) || !strings.Contains(never.body, "never pushed") {
		t.Errorf("globex's overview: %.3000s", never.body)
	}

	var pkgs struct {
		Packages []struct {
			Name string `json:"name"`
		} `json:"packages"`
		Total int `json:"total"`
	}
	viewer.fleetJSON(t, "/api/sites/acme/packages", &pkgs)
	if pkgs.Total != 2 || len(pkgs.Packages) != 2 {
		t.Errorf("acme's packages: %+v", pkgs)
	}
	var pkg struct {
		Name      string            `json:"name"`
		Instances []json.RawMessage `json:"instances"`
	}
	viewer.fleetJSON(t, "/api/sites/acme/packages/@types/node", &pkg)
	if pkg.Name != "@types/node" || len(pkg.Instances) != 1 {
		t.Errorf("acme's @types/node: %+v", pkg)
	}
	wantStatus(t, "local's left-pad", viewer.do("GET", "/api/admin/packages/left-pad", "", "", nil), http.StatusNotFound)
	var sum struct {
		Site           string          `json:"site"`
		Push           string          `json:"push"`
		ComponentsRead bool            `json:"components_read"`
		Components     string          `json:"components"`
		TreePackages   *int            `json:"tree_packages"`
		TreeCounts     json.RawMessage `json:"tree_counts"`
	}
	viewer.fleetJSON(t, "/api/sites/acme/summary", &sum)
	if sum.Site != "acme" || !strings.HasPrefix(sum.Push, "last push ") || !sum.ComponentsRead || !strings.HasPrefix(sum.Components, "Components: 2 direct dependencies, not all checked") ||
		sum.TreePackages == nil || *sum.TreePackages != 2 || string(sum.TreeCounts) == "null" {
		t.Errorf("acme's summary: %+v", sum)
	}
	viewer.fleetJSON(t, "/api/sites/globex/summary", &sum)
	if sum.TreePackages != nil || string(sum.TreeCounts) != "null" || sum.Push != "never pushed" {
		t.Errorf("globex's summary: %+v", sum)
	}

	for path, want := range map[string]string{
		"/sites/local":                         "/admin",
		"/sites/local/packages?filter=dev&q=a": "/admin/packages?filter=dev&q=a",
		"/sites/local/packages/@types%2Fnode":  "/admin/packages/@types%2Fnode",
		"/sites/local/packages/@types/node":    "/admin/packages/@types/node",
		"/api/sites/local/summary":             "/api/admin/plugins/updates/summary",
		"/api/sites/local/packages?per_page=5": "/api/admin/packages?per_page=5",
		"/api/sites/local/packages/left-pad":   "/api/admin/packages/left-pad",
		"/sites/local/sources":                 "/admin/sources",
		"/api/sites/local/sources":             "/api/admin/sources",
	} {
		r := viewer.do("GET", path, "", "", nil)
		if r.status != http.StatusSeeOther || r.header.Get("Location") != want {
			t.Errorf("GET %s: %d %s; want a redirect to %s", path, r.status, r.header.Get("Location"), want)
		}
	}
	wantStatus(t, "an unknown site", viewer.do("GET", "/sites/nope/packages", "", "", nil), http.StatusNotFound)
	wantStatus(t, "an unknown site's JSON", viewer.do("GET", "/api/sites/nope/summary", "", "", nil), http.StatusNotFound)

	// The Sites section and the Fleet page link each site to its pages.
	for _, path := range []string{"/admin/sites", "/admin/fleet"} {
		p := viewer.do("GET", path, "", "", nil)
		for _, want := range []string{`href="/sites/acme"`, `href="/sites/globex"`, `href="/admin"`} {
			if !strings.Contains(p.body, want) {
				t.Errorf("%s does not link %s", path, want)
			}
		}
	}
}

// sessionForms are a registered site's forms that answer through the
// session's flash (permissions_test.go's sessionOnly).
var sessionForms = map[string]bool{
	"POST /sites/:site/packages/:name/advisories/:id/dismiss":   true,
	"POST /sites/:site/packages/:name/advisories/:id/undismiss": true,
}

// Every route of a registered site (the route table's /sites/… and
// /api/sites/… but the push: its pages, its catalog and components, their
// skip, approve and dismiss forms and their JSON twins) answers a user
// limited to acme the 404 of an unknown path on globex, by token and by
// session, a viewer and an admin alike (so before the manager's
// permission is judged), as it answers a site that does not exist, and
// lets it through on acme (a viewer's write is then 403: the route is
// there, the permission refuses); a push token is no credential on any of
// them. A route added under /sites/ without siteScope fails here.
func TestSiteRoutesRefuseSitesNotSeen(t *testing.T) {
	t.Parallel()
	b := sitePagesBundle(t)
	ctx := context.Background()
	limited := b.limitedUser("acme-viewer@example.test", auth.RoleViewer, "acme")
	session := b.loginLimited("acme-viewer@example.test")
	admin := b.limitedUser("acme-admin@example.test", auth.RoleAdmin, "acme")
	adminSession := b.loginLimited("acme-admin@example.test")
	pushToken, _, err := b.auth.RotateSiteToken(ctx, "globex")
	if err != nil {
		t.Fatal(err)
	}
	push := map[string]string{"Authorization": "Bearer " + pushToken}
	caller := b.anonymous()
	unknownAPI := caller.do("GET", "/api/no-such-route", "", "", limited)

	walked := 0
	for _, r := range b.handler.(*echo.Echo).Routes() {
		if r.Method == echo.RouteNotFound || r.Method+" "+r.Path == "PUT /api/sites/:site/lockfile" ||
			!strings.HasPrefix(r.Path, "/sites/") && !strings.HasPrefix(r.Path, "/api/sites/") {
			continue
		}
		walked++
		names := strings.NewReplacer(":scope", "@types", ":name", "left-pad", ":code", "left-pad", ":id", "GHSA-2222-3333-4444")
		if strings.Contains(r.Path, ":scope") {
			names = strings.NewReplacer(":scope", "@types", ":name", "node")
		}
		write := r.Method != http.MethodGet
		for _, site := range []string{"globex", "no-such-site"} {
			path := names.Replace(strings.Replace(r.Path, ":site", site, 1))
			for who, c := range map[string]struct {
				c *client
				h map[string]string
			}{"token": {caller, limited}, "session": {session, nil}, "admin's token": {caller, admin}, "admin's session": {adminSession, nil}} {
				got := c.c.do(r.Method, path, "", "", c.h)
				if got.status != http.StatusNotFound {
					t.Errorf("%s of a user limited to acme: %s %s: %d; want 404", who, r.Method, path, got.status)
					continue
				}
				if strings.HasPrefix(path, "/api/") && got.body != unknownAPI.body {
					t.Errorf("%s %s %s: %q; want the answer to an unknown path", who, r.Method, path, got.body)
				}
				if strings.Contains(got.body, "globex") || strings.Contains(got.body, "Globex") {
					t.Errorf("%s %s %s: the 404 names globex", who, r.Method, path)
				}
			}
		}
		path := names.Replace(strings.Replace(r.Path, ":site", "acme", 1))
		if got, want := caller.do(r.Method, path, "", "", limited), map[bool]int{false: http.StatusOK, true: http.StatusForbidden}[write]; got.status != want {
			t.Errorf("a viewer limited to acme: %s %s: %d; want %d", r.Method, path, got.status, want)
		}
		got := caller.do(r.Method, path, "", "", admin)
		if sessionForms[r.Method+" "+r.Path] { // answered through the flash: from the admin's browser session
			got = adminSession.do(r.Method, path, "", "", map[string]string{"X-CSRF-Token": adminSession.csrf})
		}
		if write && (got.status == http.StatusNotFound && got.body == unknownAPI.body || got.status == http.StatusForbidden) {
			t.Errorf("an admin limited to acme: %s %s: %d %s; want its own answer", r.Method, path, got.status, got.body)
		}
		for _, site := range []string{"acme", "globex"} {
			path := names.Replace(strings.Replace(r.Path, ":site", site, 1))
			if got := caller.do(r.Method, path, "", "", push); !refused(got) {
				t.Errorf("globex's push token: %s %s: %d; want 401 or the login page", r.Method, path, got.status)
			}
		}
	}
	if walked != 30 {
		t.Errorf("walked %d routes of a registered site, want 30 (its 8 pages, 7 forms, 8 JSON reads and 7 JSON writes)", walked)
	}
	if p := session.do("GET", "/sites/acme", "", "", nil); strings.Contains(p.body, "globex") || strings.Contains(p.body, `data-testid="site-switcher"`) {
		t.Error("a user limited to acme is shown globex, or a switcher of one site")
	}
}

// switchLinks are the site switcher's links of a page: site name to href.
func switchLinks(body string) map[string]string {
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`<a href="([^"]*)" data-testid="site-switch" data-switch="([^"]+)"`).FindAllStringSubmatch(body, -1) {
		out[m[2]] = strings.ReplaceAll(m[1], "&amp;", "&")
	}
	return out
}

// The layout's site switcher names the sites the user may see, the local
// one first, and keeps the page's kind: a Packages page leads to each
// site's, a package's page to each site's Packages page searched for it,
// a catalog to each site's catalog, a component's page to each site's
// catalog searched for its code, Source health to each site's Sources
// page, a history to each site's history, any other page to each site's
// overview
// (the dashboard for the local site); the site the page is about is marked. A user limited to acme and
// the local site is not shown globex; one who sees one site has no
// switcher.
func TestSiteSwitcher(t *testing.T) {
	t.Parallel()
	b := sitePagesBundle(t)
	viewer := b.login("viewer@example.test")

	for path, want := range map[string]map[string]string{
		"/admin/packages":                  {"local": "/admin/packages", "acme": "/sites/acme/packages", "globex": "/sites/globex/packages"},
		"/sites/acme/packages/left-pad":    {"local": "/admin/packages?q=left-pad", "acme": "/sites/acme/packages?q=left-pad", "globex": "/sites/globex/packages?q=left-pad"},
		"/sites/acme/packages/@types/node": {"local": "/admin/packages?q=%40types%2Fnode", "acme": "/sites/acme/packages?q=%40types%2Fnode", "globex": "/sites/globex/packages?q=%40types%2Fnode"},
		"/admin/plugins":                   {"local": "/admin/plugins", "acme": "/sites/acme/plugins", "globex": "/sites/globex/plugins"},
		"/admin/plugins/gallery":           {"local": "/admin/plugins?q=gallery", "acme": "/sites/acme/plugins?q=gallery", "globex": "/sites/globex/plugins?q=gallery"},
		"/sites/acme/plugins/left-pad":     {"local": "/admin/plugins?q=left-pad", "acme": "/sites/acme/plugins?q=left-pad", "globex": "/sites/globex/plugins?q=left-pad"},
		"/admin/sources":                   {"local": "/admin/sources", "acme": "/sites/acme/sources", "globex": "/sites/globex/sources"},
		"/sites/acme/sources":              {"local": "/admin/sources", "acme": "/sites/acme/sources", "globex": "/sites/globex/sources"},
		"/admin/history":                   {"local": "/admin/history", "acme": "/sites/acme/history", "globex": "/sites/globex/history"},
		"/sites/acme/history":              {"local": "/admin/history", "acme": "/sites/acme/history", "globex": "/sites/globex/history"},
		"/admin/fleet":                     {"local": "/admin", "acme": "/sites/acme", "globex": "/sites/globex"},
	} {
		p := viewer.do("GET", path, "", "", nil)
		wantStatus(t, path, p, http.StatusOK)
		got := switchLinks(p.body)
		if len(got) != len(want) {
			t.Errorf("%s: switcher %v, want %v", path, got, want)
		}
		for site, href := range want {
			if got[site] != href {
				t.Errorf("%s: the switcher's %s leads to %q, want %q", path, site, got[site], href)
			}
		}
		if i, j := strings.Index(p.body, `data-switch="local"`), strings.Index(p.body, `data-switch="acme"`); i < 0 || j < i {
			t.Errorf("%s: the local site is not first", path)
		}
	}
	if p := viewer.do("GET", "/sites/acme/packages", "", "", nil); !regexp.MustCompile(`data-switch="acme" aria-current="page"`).MatchString(p.body) ||
		!strings.Contains(p.body, "Site: acme") {
		t.Error("on acme's page the switcher does not mark acme")
	}
	if p := viewer.do("GET", "/admin/fleet", "", "", nil); strings.Contains(p.body, `aria-current="page">local`) ||
		!strings.Contains(p.body, "<summary>Sites</summary>") {
		t.Error("the Fleet page's switcher marks a site")
	}

	both := b.limitedUser("both@example.test", auth.RoleViewer, "acme", "local")
	got := switchLinks(b.anonymous().do("GET", "/admin/packages", "", "", both).body)
	if len(got) != 2 || got["local"] != "/admin/packages" || got["acme"] != "/sites/acme/packages" {
		t.Errorf("a user limited to acme and local: switcher %v", got)
	}
	one := b.limitedUser("one@example.test", auth.RoleViewer, "acme")
	if p := b.anonymous().do("GET", "/sites/acme", "", "", one); strings.Contains(p.body, `data-testid="site-switcher"`) {
		t.Error("a user who sees one site is shown a switcher")
	}
}

// The Users section: an admin who sees every site lists every account's
// sites and sets a user's (a checked list, or every site) with a form
// that posts and answers 303 with a notice, audited as user.sites by
// auth.Service.SetUserSites (the API's); a refusal in words changes
// nothing; the post needs its CSRF token; a viewer and an admin limited
// to some sites get 403, and only the admin sees the section's link.
func TestUsersPageSetsSites(t *testing.T) {
	t.Parallel()
	b := sitePagesBundle(t)
	ctx := context.Background()
	admin := b.login("admin@example.test")
	const formType = "application/x-www-form-urlencoded"
	post := func(c *client, v url.Values) response {
		v.Set("csrf_token", c.csrf)
		return c.do("POST", "/admin/users/viewer@example.test/sites", v.Encode(), formType, nil)
	}
	audits := func() (n int) {
		b.db.QueryRow(t, `SELECT count(*) FROM audit_log WHERE action = 'user.sites' AND detail->>'email' = 'viewer@example.test'`).Scan(&n)
		return n
	}

	page := admin.do("GET", "/admin/users", "", "", nil)
	wantStatus(t, "the Users section", page, http.StatusOK)
	if !strings.Contains(page.body, `data-email="viewer@example.test"`) || !strings.Contains(page.body, "every site") ||
		!strings.Contains(page.body, `href="/admin/users/viewer@example.test/sites"`) || !strings.Contains(page.body, `href="/admin/users" class="nav-link`) {
		t.Fatalf("the Users section: %.4000s", page.body)
	}
	form := admin.do("GET", "/admin/users/viewer@example.test/sites", "", "", nil)
	wantStatus(t, "the form", form, http.StatusOK)
	for _, want := range []string{`name="sites" value="local"`, `name="sites" value="acme"`, `name="sites" value="globex"`, `value="all" checked`, `name="csrf_token"`} {
		if !strings.Contains(form.body, want) {
			t.Errorf("the form lacks %s", want)
		}
	}

	r := post(admin, url.Values{"scope": {"some"}, "sites": {"acme", "globex"}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/admin/users" {
		t.Fatalf("set acme and globex: %d %s", r.status, r.header.Get("Location"))
	}
	if p := admin.do("GET", "/admin/users", "", "", nil); !strings.Contains(p.body, "viewer@example.test now sees only acme, globex.") {
		t.Errorf("no notice after the change: %.3000s", p.body)
	}
	if us, err := b.auth.UserSiteLimit(ctx, "viewer@example.test"); err != nil || !us.Limited || strings.Join(us.Sites, ",") != "acme,globex" {
		t.Fatalf("the viewer's sites: %+v %v", us, err)
	}
	// The section shows each account's own sites (read for every account
	// in one query).
	b.limitedUser("globex-viewer@example.test", auth.RoleViewer, "globex")
	users := admin.do("GET", "/admin/users", "", "", nil)
	for email, want := range map[string]string{"viewer@example.test": "acme, globex", "globex-viewer@example.test": "globex",
		"admin@example.test": "every site"} {
		m := regexp.MustCompile(`data-email="` + regexp.QuoteMeta(email) + `"(?s:.*?)data-testid="user-sites">([^<]*)<`).FindStringSubmatch(users.body)
		if m == nil || m[1] != want {
			t.Errorf("the Users section shows the sites of %s as %v, want %q", email, m, want)
		}
	}
	if f := admin.do("GET", "/admin/users/viewer@example.test/sites", "", "", nil); !strings.Contains(f.body, `value="acme" checked`) ||
		strings.Contains(f.body, `value="local" checked`) || !strings.Contains(f.body, `value="some" checked`) {
		t.Error("the form does not show the sites set")
	}
	if n := audits(); n != 1 {
		t.Errorf("%d user.sites audit rows, want 1", n)
	}

	r = post(admin, url.Values{"scope": {"some"}})
	wantStatus(t, "no site checked", r, http.StatusSeeOther)
	if p := admin.do("GET", "/admin/users", "", "", nil); !strings.Contains(p.body, `data-testid="users-refusal"`) {
		t.Error("no site checked is not refused in words")
	}
	if us, _ := b.auth.UserSiteLimit(ctx, "viewer@example.test"); !us.Limited || len(us.Sites) != 2 {
		t.Errorf("a refused post changed the sites: %+v", us)
	}
	wantStatus(t, "without its CSRF token", admin.do("POST", "/admin/users/viewer@example.test/sites", "scope=all", formType, nil), http.StatusForbidden)

	wantStatus(t, "every site", post(admin, url.Values{"scope": {"all"}, "sites": {"acme"}}), http.StatusSeeOther)
	if us, _ := b.auth.UserSiteLimit(ctx, "viewer@example.test"); us.Limited {
		t.Errorf("scope=all left the viewer limited: %+v", us)
	}
	if n := audits(); n != 2 {
		t.Errorf("%d user.sites audit rows, want 2", n)
	}

	viewer := b.login("viewer@example.test")
	wantStatus(t, "a viewer's Users section", viewer.do("GET", "/admin/users", "", "", nil), http.StatusForbidden)
	wantStatus(t, "a viewer's post", post(viewer, url.Values{"scope": {"all"}}), http.StatusForbidden)
	if strings.Contains(viewer.do("GET", "/admin", "", "", nil).body, `href="/admin/users"`) {
		t.Error("a viewer is shown the Users section's link")
	}
	b.limitedUser("acme-admin@example.test", auth.RoleAdmin, "acme")
	limitedAdmin := b.loginLimited("acme-admin@example.test")
	wantStatus(t, "a limited admin's Users section", limitedAdmin.do("GET", "/admin/users", "", "", nil), http.StatusForbidden)
	wantStatus(t, "a limited admin's post", post(limitedAdmin, url.Values{"scope": {"all"}}), http.StatusForbidden)
	if strings.Contains(limitedAdmin.do("GET", "/admin/sites", "", "", nil).body, `href="/admin/users"`) {
		t.Error("a limited admin is shown the Users section's link")
	}
}
