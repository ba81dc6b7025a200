package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/feedserver"
	"github.com/upcheck/upcheck/internal/testing/npmreg"
	"github.com/upcheck/upcheck/internal/updatecheck"
	"github.com/upcheck/upcheck/internal/web"
)

// siteAdvisory is the advisory of vuln 1.0.0 in siteCatalogBundle's feed.
const siteAdvisory = "GHSA-2222-3333-4444"

// siteCatalogBundle is the local site and two registered ones, acme and
// globex, whose pushed lockfiles install the same two packages from a
// registry of the test's: xpress 1.0.0, offered 1.1.0 (a plain update
// that adds a postinstall script: it can be skipped and approved), and
// vuln 1.0.0, which an OSV record names (no fix): both sites' components,
// checked by one check.
func siteCatalogBundle(t *testing.T) *bundle {
	t.Helper()
	reg := npmreg.New(t)
	day := func(n int) time.Time { return time.Date(2026, 1, n, 12, 0, 0, 0, time.UTC) }
	reg.Publish("xpress", "1.1.0", map[string]npmreg.Version{
		"1.0.0": {Published: day(1)},
		"1.1.0": {Published: day(2), Scripts: map[string]string{"postinstall": "node setup.js"}}})
	reg.Publish("vuln", "1.0.0", map[string]npmreg.Version{"1.0.0": {Published: day(1)}})
	u, err := npm.ParseRegistryURL(reg.URL)
	if err != nil {
		t.Fatal(err)
	}
	fs := feedserver.New(t)
	rec := fmt.Appendf(nil, `{"schema_version": "1.6.0", "id": %q, "modified": "2026-11-01T00:00:00Z", "published": "2026-11-01T00:00:00Z",
		"summary": "vuln leaks", "affected": [{"package": {"ecosystem": "npm", "name": "vuln"}, "versions": ["1.0.0"]}]}`, siteAdvisory)
	fs.SetRecords(func(yield func(string, []byte) bool) { yield(siteAdvisory, rec) })
	f := fetch.New(fetch.Config{AllowPrivate: true}, nil)
	t.Cleanup(f.Close)
	b := setup(t, func(b *bundle, _ *web.Deps) {
		b.checker.UseNpm(&npm.Client{Fetcher: f, Registries: npm.Registries{Default: u}, MaxDocument: 1 << 20})
		b.checker.UseFeeds(updatecheck.NewFeeds(b.checker, []feed.Feed{{Kind: readmodel.FeedOSV, URL: fs.ArchiveURL()}}, t.TempDir()))
	})
	ctx := context.Background()
	lock := `{"name": "shop", "lockfileVersion": 3, "packages": {"": {"name": "shop", "dependencies": {"xpress": "^1.0.0", "vuln": "^1.0.0"}},` +
		`"node_modules/xpress": {"version": "1.0.0", "resolved": "` + reg.URL + `xpress/-/xpress-1.0.0.tgz"},` +
		`"node_modules/vuln": {"version": "1.0.0", "resolved": "` + reg.URL + `vuln/-/vuln-1.0.0.tgz"}}}`
	for _, name := range []string{"acme", "globex"} {
		if _, _, err := b.auth.AddSite(ctx, name, strings.ToUpper(name[:1])+name[1:]); err != nil {
			t.Fatal(err)
		}
		site, err := b.store.SiteByName(ctx, name, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.checker.Push(ctx, site, "package-lock.json", []byte(lock)); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := b.checker.RunLockedUpdateCheck(ctx, lease.Operator, "test"); err != nil || !res.Status.RanToEnd() {
		t.Fatalf("check: %+v, %v", res, err)
	}
	return b
}

// siteComponent is a registered site's component as its JSON says it.
type siteComponent struct {
	Code          string  `json:"code"`
	UpdateVersion *string `json:"update_version"`
	Vulnerable    bool    `json:"vulnerable"`
}

// offer is what site's xpress is offered now, "" nothing, by the API.
func offer(t *testing.T, c *client, site string) string {
	t.Helper()
	var d siteComponent
	c.fleetJSON(t, "/api/sites/"+site+"/plugins/xpress", &d)
	if d.UpdateVersion == nil {
		return ""
	}
	return *d.UpdateVersion
}

// vulnerable says whether site's vuln counts as vulnerable now, by the API.
func vulnerable(t *testing.T, c *client, site string) bool {
	t.Helper()
	var d siteComponent
	c.fleetJSON(t, "/api/sites/"+site+"/plugins/vuln", &d)
	return d.Vulnerable
}

// siteRows counts the rows of table (component_skips, component_approvals,
// advisory_dismissals standing) of site's component code.
func siteRows(t *testing.T, b *bundle, table, site, code string) (n int) {
	t.Helper()
	where := "c.code = $2"
	if table == "advisory_dismissals" {
		where = "c.component_code = $2 AND c.ended_at IS NULL"
	}
	b.db.QueryRow(t, `SELECT count(*) FROM `+table+` c JOIN sites s ON s.id = c.site_id WHERE s.name = $1 AND `+where, site, code).Scan(&n)
	return n
}

// siteAudit is how many audit rows of action name site.
func siteAudit(t *testing.T, b *bundle, action readmodel.AuditAction, site string) (n int) {
	t.Helper()
	b.db.QueryRow(t, `SELECT count(*) FROM audit_log WHERE action = $1 AND detail->>'site' = $2`, string(action), site).Scan(&n)
	return n
}

// A registered site's catalog and component pages are the local site's
// pages scoped to it: its catalog lists its components, each linked to
// its page under the site, with the site's navigation and the switcher
// keeping the catalog; a component's page carries the site's forms; the
// JSON twins answer as openapi.json says (client.do checks them); the
// local site's catalog lists none of them; /sites/local/plugins… leads
// to today's URLs.
func TestSiteCatalogAndComponentPages(t *testing.T) {
	t.Parallel()
	b := siteCatalogBundle(t)
	admin, viewer := b.login("admin@example.test"), b.login("viewer@example.test")

	list := viewer.do("GET", "/sites/acme/plugins", "", "", nil)
	wantStatus(t, "acme's catalog", list, http.StatusOK)
	for _, want := range []string{`data-code="xpress"`, `data-code="vuln"`, `href="/sites/acme/plugins/xpress"`, `action="/sites/acme/plugins"`,
		`href="/sites/acme/plugins?status=updates"`, `data-testid="site-nav"`, `href="/sites/acme/plugins" class="filter active" data-testid="site-nav-link"`,
		`href="/sites/globex/plugins" data-testid="site-switch"`, `href="/admin/plugins" data-testid="site-switch"`, `<title>Plugins · acme · upcheck</title>`} {
		if !strings.Contains(list.body, want) {
			t.Errorf("acme's catalog lacks %s", want)
		}
	}
	if strings.Contains(list.body, `data-code="gallery"`) {
		t.Error("acme's catalog lists the local site's gallery")
	}
	if r := viewer.do("GET", "/sites/acme/plugins?status=vulnerable", "", "", nil); !strings.Contains(r.body, `data-code="vuln"`) ||
		strings.Contains(r.body, `data-code="xpress"`) {
		t.Error("acme's vulnerable filter")
	}
	if local := viewer.do("GET", "/admin/plugins", "", "", nil); strings.Contains(local.body, `data-code="xpress"`) {
		t.Error("the local site's catalog lists acme's xpress")
	}
	if o := viewer.do("GET", "/sites/acme", "", "", nil); !strings.Contains(o.body, `href="/sites/acme/plugins" data-testid="site-catalog"`) {
		t.Error("acme's overview does not link its components")
	}

	page := admin.do("GET", "/sites/acme/plugins/xpress", "", "", nil)
	wantStatus(t, "acme's xpress", page, http.StatusOK)
	for _, want := range []string{`data-testid="component-detail" data-code="xpress"`, `action="/sites/acme/plugins/xpress/skip"`,
		`<li><a href="/sites/acme/plugins">Plugins</a></li>`,
		`href="/sites/globex/plugins?q=xpress" data-testid="site-switch"`, `href="/admin/plugins?q=xpress" data-testid="site-switch"`} {
		if !strings.Contains(page.body, want) {
			t.Errorf("acme's xpress page lacks %s", want)
		}
	}
	if p := admin.do("GET", "/sites/acme/plugins/vuln", "", "", nil); !strings.Contains(p.body, `action="/sites/acme/plugins/vuln/advisories/`+siteAdvisory+`/dismiss"`) {
		t.Error("acme's vuln page has no dismiss form of its own")
	}
	wantStatus(t, "a component acme does not install", viewer.do("GET", "/sites/acme/plugins/gallery", "", "", nil), http.StatusNotFound)

	var cat struct {
		Components []siteComponent `json:"components"`
		Total      int             `json:"total"`
	}
	viewer.fleetJSON(t, "/api/sites/acme/plugins/updates", &cat)
	if cat.Total != 2 || len(cat.Components) != 2 {
		t.Errorf("acme's catalog JSON: %+v", cat)
	}
	if o := offer(t, viewer, "acme"); o != "1.1.0" {
		t.Errorf("acme's xpress is offered %q, want 1.1.0", o)
	}
	if !vulnerable(t, viewer, "globex") {
		t.Error("globex's vuln is not vulnerable")
	}
	wantStatus(t, "local's xpress", viewer.do("GET", "/api/admin/plugins/xpress", "", "", nil), http.StatusNotFound)

	for path, want := range map[string]string{
		"/sites/local/plugins?status=updates":   "/admin/plugins?status=updates",
		"/sites/local/plugins/gallery":          "/admin/plugins/gallery",
		"/api/sites/local/plugins/updates?q=a":  "/api/admin/plugins/updates?q=a",
		"/api/sites/local/plugins/gallery":      "/api/admin/plugins/gallery",
		"/api/sites/local/plugins/gallery/skip": "/api/admin/plugins/gallery/skip",
	} {
		method, status := "GET", http.StatusSeeOther
		if strings.HasSuffix(path, "/skip") {
			method, status = "POST", http.StatusTemporaryRedirect
		}
		if r := admin.do(method, path, "", "", nil); r.status != status || r.header.Get("Location") != want {
			t.Errorf("%s %s: %d %s; want %d to %s", method, path, r.status, r.header.Get("Location"), status, want)
		}
	}
}

// Skips, approvals and dismissals are each site's own: a skip on globex
// (from its page's form: CSRF-checked, a viewer refused, 303 back to
// globex's page) hides 1.1.0 from globex's xpress and leaves acme's offer;
// an unskip by the API offers it again; an approval on globex is
// globex's row alone; a dismissal on globex hides the advisory on globex,
// not on acme, and its end brings it back; the API does the same on
// acme. Every audit row names its site.
func TestSiteSkipApproveAndDismissAreTheSites(t *testing.T) {
	t.Parallel()
	b := siteCatalogBundle(t)
	admin, viewer := b.login("admin@example.test"), b.login("viewer@example.test")
	skip := url.Values{"version": {"1.1.0"}, "reason": {"breaks the theme"}}

	wantStatus(t, "a viewer's skip", viewer.postForm("/sites/globex/plugins/xpress/skip", skip), http.StatusForbidden)
	wantStatus(t, "a skip without CSRF", admin.do("POST", "/sites/globex/plugins/xpress/skip", skip.Encode(), formType, nil), http.StatusForbidden)
	r := admin.postForm("/sites/globex/plugins/xpress/skip", url.Values{"version": {"1.1.0"}, "reason": {" "}})
	wantStatus(t, "a skip without a reason", r, http.StatusUnprocessableEntity)
	if !strings.Contains(r.body, `action="/sites/globex/plugins/xpress/skip"`) {
		t.Error("the refused skip's page is not globex's")
	}
	r = admin.postForm("/sites/globex/plugins/xpress/skip", skip)
	wantStatus(t, "globex's skip", r, http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != "/sites/globex/plugins/xpress" {
		t.Errorf("globex's skip leads to %q", loc)
	}
	if page := admin.do("GET", "/sites/globex/plugins/xpress", "", "", nil); !strings.Contains(page.body, "Skipped 1.1.0.") {
		t.Error("globex's page does not say what was skipped")
	}
	if g, a := offer(t, viewer, "globex"), offer(t, viewer, "acme"); g != "" || a != "1.1.0" {
		t.Errorf("after globex's skip: globex offered %q, acme %q; want nothing and 1.1.0", g, a)
	}
	if siteRows(t, b, "component_skips", "globex", "xpress") != 1 || siteRows(t, b, "component_skips", "acme", "xpress") != 0 {
		t.Error("the skip is not globex's alone")
	}
	wantStatus(t, "globex's unskip", admin.sendJSON("DELETE", "/api/sites/globex/plugins/xpress/skip", nil, true, nil), http.StatusOK)
	if g := offer(t, viewer, "globex"); g != "1.1.0" {
		t.Errorf("after globex's unskip: offered %q, want 1.1.0", g)
	}
	wantStatus(t, "acme's API skip", admin.sendJSON("POST", "/api/sites/acme/plugins/xpress/skip",
		map[string]string{"version": "1.1.0", "reason": "not yet"}, true, nil), http.StatusCreated)
	if g, a := offer(t, viewer, "globex"), offer(t, viewer, "acme"); g != "1.1.0" || a != "" {
		t.Errorf("after acme's skip: globex offered %q, acme %q; want 1.1.0 and nothing", g, a)
	}

	r = admin.postForm("/sites/globex/plugins/xpress/approve", url.Values{"version": {"1.1.0"}, "reason": {"setup.js reviewed"}})
	wantStatus(t, "globex's approval", r, http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != "/sites/globex/plugins/xpress" {
		t.Errorf("globex's approval leads to %q", loc)
	}
	if siteRows(t, b, "component_approvals", "globex", "xpress") != 1 || siteRows(t, b, "component_approvals", "acme", "xpress") != 0 {
		t.Error("the approval is not globex's alone")
	}
	wantStatus(t, "acme's API approval", admin.sendJSON("POST", "/api/sites/acme/plugins/xpress/approve",
		map[string]string{"version": "1.1.0", "reason": "reviewed"}, true, nil), http.StatusCreated)
	if siteRows(t, b, "component_approvals", "acme", "xpress") != 1 {
		t.Error("acme's API approval is not acme's")
	}

	dismiss := "/sites/globex/plugins/vuln/advisories/" + siteAdvisory + "/dismiss"
	wantStatus(t, "a viewer's dismissal", viewer.postForm(dismiss, url.Values{"reason": {"not used"}}), http.StatusForbidden)
	r = admin.postForm(dismiss, url.Values{"reason": {"not reachable here"}})
	wantStatus(t, "globex's dismissal", r, http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != "/sites/globex/plugins/vuln#advisories" {
		t.Errorf("globex's dismissal leads to %q", loc)
	}
	if g, a := vulnerable(t, viewer, "globex"), vulnerable(t, viewer, "acme"); g || !a {
		t.Errorf("after globex's dismissal: globex vulnerable %v, acme %v; want false and true", g, a)
	}
	if page := viewer.do("GET", "/sites/globex/plugins?status=dismissed", "", "", nil); !strings.Contains(page.body, `data-code="vuln"`) {
		t.Error("globex's dismissed filter does not list vuln")
	}
	if page := viewer.do("GET", "/sites/acme/plugins?status=dismissed", "", "", nil); strings.Contains(page.body, `data-code="vuln"`) {
		t.Error("acme's dismissed filter lists vuln")
	}
	r = admin.postForm("/sites/globex/plugins/vuln/advisories/"+siteAdvisory+"/undismiss", url.Values{})
	wantStatus(t, "globex's restore", r, http.StatusSeeOther)
	if !vulnerable(t, viewer, "globex") {
		t.Error("after the restore globex's vuln is not vulnerable")
	}
	apiDismissal := "/api/sites/acme/plugins/vuln/advisories/" + siteAdvisory + "/dismissal"
	wantStatus(t, "acme's API dismissal", admin.sendJSON("POST", apiDismissal, map[string]string{"reason": "accepted"}, true, nil), http.StatusCreated)
	if g, a := vulnerable(t, viewer, "globex"), vulnerable(t, viewer, "acme"); !g || a {
		t.Errorf("after acme's dismissal: globex vulnerable %v, acme %v; want true and false", g, a)
	}
	if siteRows(t, b, "advisory_dismissals", "acme", "vuln") != 1 || siteRows(t, b, "advisory_dismissals", "globex", "vuln") != 0 {
		t.Error("the standing dismissal is not acme's alone")
	}
	wantStatus(t, "acme's API restore", admin.sendJSON("DELETE", apiDismissal, nil, true, nil), http.StatusNoContent)
	wantStatus(t, "acme's API restore again", admin.sendJSON("DELETE", apiDismissal, nil, true, nil), http.StatusNotFound)

	for _, c := range []struct {
		action readmodel.AuditAction
		site   string
	}{{readmodel.AuditComponentSkip, "globex"}, {readmodel.AuditComponentUnskip, "globex"}, {readmodel.AuditComponentSkip, "acme"},
		{readmodel.AuditComponentApprove, "globex"}, {readmodel.AuditComponentApprove, "acme"},
		{store.AuditAdvisoryDismiss, "globex"}, {store.AuditAdvisoryUndismiss, "globex"}, {store.AuditAdvisoryDismiss, "acme"},
		{store.AuditAdvisoryUndismiss, "acme"}} {
		if n := siteAudit(t, b, c.action, c.site); n != 1 {
			t.Errorf("%d audit rows of %s naming %s, want 1", n, c.action, c.site)
		}
	}
	// The Audit log says which site's component each row is about, and
	// leads to that site's page.
	audit := admin.do("GET", "/admin/audit?kind=dismissal", "", "", nil)
	for _, want := range []string{"Skipped a version of xpress on the site globex", "for vuln on the site acme", `href="/sites/globex/plugins/xpress"`, `href="/sites/acme/plugins/vuln"`} {
		if !strings.Contains(audit.body, want) {
			t.Errorf("the Audit log lacks %s", want)
		}
	}
	if strings.Contains(audit.body, `href="/admin/plugins/xpress"`) {
		t.Error("the Audit log leads a registered site's row to the local site's page")
	}
}
