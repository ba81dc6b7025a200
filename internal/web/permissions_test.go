package web_test

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/web"
)

// publicRoutes answer anyone, as "METHOD path" the way e.Routes() lists
// them, with the reason. Every other route refuses an anonymous caller.
var publicRoutes = map[string]string{
	"GET /healthz":    "liveness probe",
	"GET /readyz":     "readiness probe",
	"GET /static/*":   "CSS, JS and images",
	"GET /robots.txt": "crawlers",
	"GET /login":      "the login form",
	"POST /login":     "signs in; refuses cross-site posts",
	"GET /":           "redirects to the dashboard, which needs a principal",
	// The API's OpenAPI document: the same for every installation.
	"GET /api/openapi.json": "the API's description, no site's data",
	// echo's catch-all of the group around every page: unknown paths
	// answer 404 to anyone.
	echo.RouteNotFound + " /":  "404",
	echo.RouteNotFound + " /*": "404",
}

// needs is the permission of a route whose method does not say it: a GET
// needs plugins.can_view, any other method changes something and needs
// plugins.can_manage.
var needs = map[string]string{
	"POST /logout": auth.PermView, // a viewer may end their own session
	// Who dismissed what and every check: admins only.
	"GET /admin/audit":     auth.PermAudit,
	"GET /admin/audit.csv": auth.PermAudit,
	"GET /api/admin/audit": auth.PermAudit,
	// Other users' credentials: admins only, reads included.
	"GET /admin/tokens":             auth.PermTokens,
	"POST /admin/tokens":            auth.PermTokens,
	"POST /admin/tokens/:id/revoke": auth.PermTokens,
	"GET /admin/tokens/:id/revoke":  auth.PermTokens, // the question before a revoke
	// The import form: importing writes as a check does, managers only.
	"GET /admin/sources/import": auth.PermManage,
	// The question before a channel is deleted: only for those who may.
	"GET /admin/notifications/channels/:id/delete": auth.PermManage,
	// Sites: registering, rotating and removing are admins'; so are the
	// questions before them.
	"GET /admin/sites/:site/rotate":      auth.PermSites,
	"GET /admin/sites/:site/remove":      auth.PermSites,
	"POST /admin/sites":                  auth.PermSites,
	"POST /admin/sites/:site/rotate":     auth.PermSites,
	"POST /admin/sites/:site/remove":     auth.PermSites,
	"POST /api/admin/sites":              auth.PermSites,
	"POST /api/admin/sites/:site/rotate": auth.PermSites,
	"DELETE /api/admin/sites/:site":      auth.PermSites,
	// A registered site's policy: admins', read included (it is set with
	// the same rights).
	"GET /api/admin/sites/:site/policy": auth.PermSites,
	"PUT /api/admin/sites/:site/policy": auth.PermSites,
	"POST /admin/sites/:site/policy":    auth.PermSites,
	// Who sees what: admins who see every site.
	"GET /api/admin/users/:email/sites": auth.PermSites,
	"PUT /api/admin/users/:email/sites": auth.PermSites,
	"GET /admin/users":                  auth.PermSites,
	"GET /admin/users/:email/sites":     auth.PermSites,
	"POST /admin/users/:email/sites":    auth.PermSites,
}

// pushOnly are the routes no principal uses, whatever its role: a site's
// push token alone authenticates them (and nothing else), so a session or
// an API token is refused as no credential (401).
var pushOnly = map[string]string{
	"PUT /api/sites/:site/lockfile": "a site's push (apiPush): its push token, never an API token",
}

// sessionOnly are the routes an API token cannot use, whatever its role,
// with the reason: there, an admin gets through with a browser session
// (and its CSRF token) and gets 403 with a token.
var sessionOnly = map[string]string{
	"GET /admin/tokens":             "an API token cannot manage API tokens",
	"POST /admin/tokens":            "a leaked token cannot mint its successor",
	"POST /admin/tokens/:id/revoke": "nor revoke the others",
	"GET /admin/tokens/:id/revoke":  "nor be asked to",
	// The AdminCP's site forms show a new push token through the flash,
	// which needs a session; the API takes a token (POST /api/admin/sites).
	"POST /admin/sites":              "the new push token is shown once through the session's flash",
	"POST /admin/sites/:site/rotate": "the same",
	"POST /admin/sites/:site/remove": "the notice comes through the session's flash",
	"POST /admin/users/:email/sites": "the notice comes through the session's flash",
	"POST /admin/sites/:site/policy": "the notice or the refusal comes through the session's flash",
	// A package page's dismiss forms answer through the flash too; the
	// API takes a token (…/advisories/:id/dismissal).
	"POST /admin/packages/:name/advisories/:id/dismiss":         "the notice comes through the session's flash",
	"POST /admin/packages/:name/advisories/:id/undismiss":       "the same",
	"POST /sites/:site/packages/:name/advisories/:id/dismiss":   "the same",
	"POST /sites/:site/packages/:name/advisories/:id/undismiss": "the same",
}

// samples fills in path parameters: a component and an advisory of the
// demo, so that a manager's request reaches a handler that can answer it.
var samples = strings.NewReplacer(":code", "gallery", ":id", "ACME-2026-011", "*", "no-such-page")

// sitePages fills in the site of a registered site's pages and routes
// (/sites/:site/…, /api/sites/:site/…): acme, which
// testPermissionsOnEveryRoute adds, so that the permission, not the
// unknown site's 404, answers. The sites' own admin routes
// (/api/admin/sites/:site) keep the parameter as written: an admin's
// request there must not remove acme.
func sitePages(path string) string {
	if strings.HasPrefix(path, "/sites/:site") || strings.HasPrefix(path, "/api/sites/:site") {
		return strings.Replace(path, ":site", "acme", 1)
	}
	return path
}

// Every route in echo's table, the catch-alls echo adds for each group
// included, is public by name (publicRoutes) or refuses an anonymous caller
// (401, 403 or a redirect to the login page); a viewer gets 403 from every
// route that needs plugins.can_manage and through every other one; a
// manager gets through all of them. A route added without a permission, or
// a change open to viewers, fails here.
func TestPermissionsOnEveryRoute(t *testing.T) {
	t.Parallel()
	for name, public := range map[string]bool{"metrics behind a token": false, "metrics public": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testPermissionsOnEveryRoute(t, public)
		})
	}
}

func testPermissionsOnEveryRoute(t *testing.T, metricsPublic bool) {
	b := setup(t, func(_ *bundle, d *web.Deps) {
		d.Metrics = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
		d.MetricsPublic = metricsPublic
	})
	e, ok := b.handler.(*echo.Echo)
	if !ok {
		t.Fatalf("web.New returned a %T, not the *echo.Echo whose routes this test walks", b.handler)
	}
	if _, _, err := b.auth.AddSite(context.Background(), "acme", ""); err != nil {
		t.Fatal(err)
	}
	public := maps.Clone(publicRoutes)
	if metricsPublic {
		public["GET /metrics"] = "UPCHECK_METRICS_PUBLIC=1"
	}
	bearer := func(email string) map[string]string {
		token, err := b.auth.CreateToken(context.Background(), email, "routes")
		if err != nil {
			t.Fatal(err)
		}
		// A token rather than a session: it is a principal on every route,
		// /metrics included, and needs no CSRF token.
		return map[string]string{"Authorization": "Bearer " + token}
	}
	anon, caller := b.anonymous(), b.anonymous()
	viewer, admin := bearer("viewer@example.test"), bearer("admin@example.test")
	readOnly, _, err := b.auth.CreateTokenFor(context.Background(), auth.TokenRequest{Email: "admin@example.test", Name: "read-only", ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	adminReadOnly := map[string]string{"Authorization": "Bearer " + readOnly}
	adminSession := b.login("admin@example.test")

	seen := map[string]bool{}
	for _, r := range e.Routes() {
		key := r.Method + " " + r.Path
		seen[key] = true
		if _, ok := public[key]; ok {
			continue
		}
		method, path := r.Method, samples.Replace(sitePages(r.Path))
		if method == echo.RouteNotFound {
			method = http.MethodGet
		}
		if got := anon.do(method, path, "", "", nil); !refused(got) {
			t.Errorf("anonymous %s %s (route %s): %d; want 401, 403 or a redirect to the login page. "+
				"Give the route a permission in routes.go, or list it in publicRoutes.", method, path, key, got.status)
		}
		if r.Method == echo.RouteNotFound {
			continue // a group's 404: nothing behind it for a principal to reach
		}
		if _, ok := pushOnly[key]; ok {
			for who, h := range map[string]map[string]string{"viewer": viewer, "read-only admin token": adminReadOnly, "admin": admin} {
				if got := caller.do(method, path, "", "", h); got.status != http.StatusUnauthorized {
					t.Errorf("%s %s %s: %d; want 401: %s", who, method, path, got.status, pushOnly[key])
				}
			}
			continue
		}
		perm := needs[key]
		if perm == "" {
			perm = auth.PermManage
			if method == http.MethodGet {
				perm = auth.PermView
			}
		}
		got := caller.do(method, path, "", "", viewer)
		viewerMay := slices.Contains(auth.Permissions(auth.RoleViewer), perm)
		switch {
		case !viewerMay && got.status != http.StatusForbidden:
			t.Errorf("viewer %s %s: %d; want 403, the route needs %s, which viewers lack. "+
				"Require it in routes.go, or say in needs why a viewer may.", method, path, got.status, perm)
		case viewerMay && (got.status == http.StatusUnauthorized || got.status == http.StatusForbidden):
			t.Errorf("viewer %s %s: %d; want it let through: the route is a read. List it in needs if it is not.", method, path, got.status)
		}
		// An admin's read-only token reads what the admin reads, and
		// changes nothing anywhere: every other method is 403.
		got = caller.do(method, path, "", "", adminReadOnly)
		_, session := sessionOnly[key]
		mayRead := method == http.MethodGet && slices.Contains(auth.ViewPermissions, perm) && !session
		switch {
		case !mayRead && got.status != http.StatusForbidden:
			t.Errorf("read-only admin token %s %s: %d; want 403: a read-only token has only view permissions and makes no change", method, path, got.status)
		case mayRead && (got.status == http.StatusUnauthorized || got.status == http.StatusForbidden):
			t.Errorf("read-only admin token %s %s: %d; want it let through: the route is a read the admin may make", method, path, got.status)
		}
		if session {
			if got := caller.do(method, path, "", "", admin); got.status != http.StatusForbidden {
				t.Errorf("admin's API token %s %s: %d; want 403: %s", method, path, got.status, sessionOnly[key])
			}
			got := adminSession.do(method, path, "", "", map[string]string{"X-CSRF-Token": adminSession.csrf})
			if got.status == http.StatusUnauthorized || got.status == http.StatusForbidden {
				t.Errorf("admin session %s %s: %d; an admin may do everything from the AdminCP", method, path, got.status)
			}
			continue
		}
		if got := caller.do(method, path, "", "", admin); got.status == http.StatusUnauthorized || got.status == http.StatusForbidden {
			t.Errorf("admin %s %s: %d; a manager may do everything", method, path, got.status)
		}
	}
	for _, list := range []map[string]string{public, needs, sessionOnly, pushOnly} {
		for key := range list {
			if !seen[key] {
				t.Errorf("%s is listed in this test but not routed", key)
			}
		}
	}
}

// refused reports whether a response turns an anonymous caller away: 401,
// 403, or a page's redirect to the login form.
func refused(r response) bool {
	loc := r.header.Get("Location")
	return r.status == http.StatusUnauthorized || r.status == http.StatusForbidden ||
		r.status == http.StatusSeeOther && (loc == "/login" || strings.HasPrefix(loc, "/login?"))
}

// Browser sessions on the pages and the API: anonymous pages redirect to
// the login, the API answers 401 in JSON, a viewer reads and cannot
// manage, and only a manager sees the check button.
func TestPermissionsForSessions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	anon, viewer, admin := b.anonymous(), b.login("viewer@example.test"), b.login("admin@example.test")

	pages := []string{"/admin", "/admin/plugins", "/admin/plugins/blog", "/admin/history", "/admin/sources"}
	apis := []string{"/api/admin/plugins/updates/summary", "/api/admin/plugins/updates"}
	for _, p := range pages {
		r := anon.do("GET", p, "", "", nil)
		if r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/login?next=") {
			t.Errorf("anonymous GET %s: %d %s, want a redirect to the login", p, r.status, r.header.Get("Location"))
		}
		wantStatus(t, "viewer GET "+p, viewer.do("GET", p, "", "", nil), 200)
		wantStatus(t, "admin GET "+p, admin.do("GET", p, "", "", nil), 200)
	}
	for _, p := range apis {
		r := anon.do("GET", p, "", "", nil)
		wantStatus(t, "anonymous GET "+p, r, 401)
		if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
			t.Errorf("anonymous GET %s: content type %q, want JSON", p, r.header.Get("Content-Type"))
		}
		wantStatus(t, "viewer GET "+p, viewer.do("GET", p, "", "", nil), 200)
	}
	wantStatus(t, "anonymous check", anon.postCheck(false), 401)
	wantStatus(t, "viewer check", viewer.postCheck(true), 403)
	wantStatus(t, "viewer dismiss", viewer.do("POST", "/admin/plugins/gallery/advisories/ACME-2026-011/dismiss",
		"csrf_token="+viewer.csrf, "application/x-www-form-urlencoded", nil), 403)
	wantStatus(t, "admin unknown component", admin.do("GET", "/admin/plugins/nope", "", "", nil), 404)
	wantStatus(t, "bad filter", admin.do("GET", "/api/admin/plugins/updates?status=bogus", "", "", nil), 400)
	if strings.Contains(viewer.do("GET", "/admin", "", "", nil).body, `data-testid="check-button"`) {
		t.Error("a viewer sees the check button")
	}
	if !strings.Contains(admin.do("GET", "/admin", "", "", nil).body, `data-testid="check-button"`) {
		t.Error("an admin does not see the check button")
	}
}

// siteRoutes are the routes about sites in general, not about the local
// site: a principal limited to other sites reaches them (and sees only its
// sites there). Every other route that needs a principal is the local
// site's.
var siteRoutes = map[string]bool{
	"GET /admin/sites":                   true,
	"POST /admin/sites":                  true,
	"GET /admin/sites/:site/rotate":      true,
	"POST /admin/sites/:site/rotate":     true,
	"GET /admin/sites/:site/remove":      true,
	"POST /admin/sites/:site/remove":     true,
	"GET /api/admin/sites":               true,
	"POST /api/admin/sites":              true,
	"POST /api/admin/sites/:site/rotate": true,
	"DELETE /api/admin/sites/:site":      true,
	// A registered site's policy: the site's, not the local one's.
	"GET /api/admin/sites/:site/policy": true,
	"PUT /api/admin/sites/:site/policy": true,
	"POST /admin/sites/:site/policy":    true,
	// The fleet: every site the principal may see (fleet_test.go).
	"GET /admin/fleet":                  true,
	"GET /admin/fleet/impact":           true,
	"GET /api/admin/fleet":              true,
	"GET /api/admin/fleet/summary":      true,
	"GET /api/admin/fleet/impact":       true,
	"GET /api/admin/users/:email/sites": true,
	"PUT /api/admin/users/:email/sites": true,
	// The Users section: every site's concern (an admin who sees every
	// site; 403 for a limited one).
	"GET /admin/users":               true,
	"GET /admin/users/:email/sites":  true,
	"POST /admin/users/:email/sites": true,
	// The Notifications: the channels whose sites are all the
	// principal's (notify_sites_test.go), not the local site's alone.
	"GET /admin/notifications":                           true,
	"POST /admin/notifications/channels":                 true,
	"POST /admin/notifications/channels/:id/test":        true,
	"POST /admin/notifications/channels/:id/delete":      true,
	"GET /admin/notifications/channels/:id/delete":       true,
	"POST /admin/notifications/channels/:id/enable":      true,
	"POST /admin/notifications/channels/:id/disable":     true,
	"POST /admin/notifications/events/:id/retry":         true,
	"GET /api/admin/notifications/channels":              true,
	"POST /api/admin/notifications/channels":             true,
	"POST /api/admin/notifications/channels/:id/test":    true,
	"POST /api/admin/notifications/channels/:id/enable":  true,
	"POST /api/admin/notifications/channels/:id/disable": true,
	"DELETE /api/admin/notifications/channels/:id":       true,
	"GET /api/admin/notifications/deliveries":            true,
	"POST /api/admin/notifications/deliveries/:id/retry": true,
	// Before anything about a site: the principal's own session.
	"GET /":        true,
	"POST /logout": true,
}

// Who sees what, on the whole route table: every route about the local
// site (every page and API route but the sites' own) answers a user
// limited to a registered site, viewer or admin, by token or session, the
// 404 of an unknown path, with nothing of the local site in it (not its
// components, not the navigation to its pages); a user limited to that
// site and the local one, and an unlimited viewer, are let through.
// A route added without localSite fails here.
func TestLocalSiteRoutesRefuseOtherSites(t *testing.T) {
	t.Parallel()
	b := setup(t, func(_ *bundle, d *web.Deps) {
		d.Metrics = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	})
	ctx := context.Background()
	if _, _, err := b.auth.AddSite(ctx, "acme", "Acme Ltd"); err != nil {
		t.Fatal(err)
	}
	limitedViewer := b.limitedUser("acme-viewer@example.test", auth.RoleViewer, "acme")
	limitedAdmin := b.limitedUser("acme-admin@example.test", auth.RoleAdmin, "acme")
	withLocal := b.limitedUser("both@example.test", auth.RoleViewer, "acme", store.LocalSiteName)
	viewerToken, err := b.auth.CreateToken(ctx, "viewer@example.test", "unlimited")
	if err != nil {
		t.Fatal(err)
	}
	viewer := map[string]string{"Authorization": "Bearer " + viewerToken}
	session := b.loginLimited("acme-admin@example.test")
	caller := b.anonymous()
	unknownAPI := caller.do("GET", "/api/no-such-route", "", "", limitedViewer)

	e := b.handler.(*echo.Echo)
	walked := 0
	for _, r := range e.Routes() {
		key := r.Method + " " + r.Path
		if _, public := publicRoutes[key]; public || r.Method == echo.RouteNotFound || siteRoutes[key] ||
			// A registered site's own routes: each checks the principal
			// may see its site (auth.Principal.MaySee).
			strings.HasPrefix(r.Path, "/sites/") || strings.HasPrefix(r.Path, "/api/sites/") {
			continue
		}
		walked++
		method, path := r.Method, samples.Replace(r.Path)
		for who, h := range map[string]map[string]string{"limited viewer": limitedViewer, "limited admin": limitedAdmin} {
			got := caller.do(method, path, "", "", h)
			if got.status != http.StatusNotFound {
				t.Errorf("%s %s %s: %d; want 404, the route is the local site's (localSite in routes.go, or list it in siteRoutes)", who, method, path, got.status)
				continue
			}
			if strings.HasPrefix(path, "/api/") && got.body != unknownAPI.body {
				t.Errorf("%s %s %s: %q; want the answer to an unknown path, %q", who, method, path, got.body, unknownAPI.body)
			}
			if strings.Contains(got.body, "gallery") || strings.Contains(got.body, `href="/admin/plugins"`) {
				t.Errorf("%s %s %s: the 404 names the local site's components or links its pages", who, method, path)
			}
		}
		got := session.do(method, path, "", "", map[string]string{"X-CSRF-Token": session.csrf})
		if got.status != http.StatusNotFound && key != "GET /metrics" { // /metrics takes a token alone
			t.Errorf("limited admin's session %s %s: %d; want 404", method, path, got.status)
		}
		if method != http.MethodGet {
			continue
		}
		for who, h := range map[string]map[string]string{"unlimited viewer": viewer, "viewer of acme and local": withLocal} {
			if got := caller.do(method, path, "", "", h); got.status == http.StatusNotFound && !strings.Contains(path, ":") {
				t.Errorf("%s GET %s: 404; want it let through, the principal may see the local site", who, path)
			}
		}
	}
	if walked < 30 {
		t.Fatalf("walked %d routes of the local site; the route table has more", walked)
	}
}
