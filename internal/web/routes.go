package web

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
	"github.com/upcheck/upcheck/static"
	"github.com/upcheck/upcheck/views"
)

// The operations endpoints: monitoring and load balancers read them, and
// they answer in JSON, errors included (isAPI).
const (
	pathHealthz = "/healthz"
	pathReadyz  = "/readyz"
	pathMetrics = "/metrics"
)

// apiPrefix is where the JSON API lives; every route under it needs a
// principal. Its routes are described in openapi.json (api_openapi.go).
const (
	apiPrefix        = "/api/admin"
	apiPlugins       = apiPrefix + "/plugins"
	apiDismissal     = apiPlugins + "/:code/advisories/:id/dismissal"
	apiSkip          = apiPlugins + "/:code/skip"
	apiApprove       = apiPlugins + "/:code/approve"
	apiChannels      = apiPrefix + "/notifications/channels"
	apiDeliveries    = apiPrefix + "/notifications/deliveries"
	apiChannelPrefix = apiChannels + "/:id"
	apiSites         = apiPrefix + "/sites"
)

// routes is the whole HTTP surface. Permissions are attached per group,
// never inside handlers: reading a route here tells who may call it. Routes
// are written with their full paths, the views.Path* constants the
// templates link to.
func (s *Server) routes(e *echo.Echo) {
	e.Use(middleware.Recover())
	// Forms and the check POST are tiny; an imported document may be as
	// large as a fetched one.
	// A pushed lockfile as large as one read from disk.
	e.Use(bodyLimit(64<<10, map[string]int64{http.MethodPost + " " + views.PathSourceImport: s.importBodyLimit(),
		http.MethodPut + " " + pathPush: updatecheck.PushMaxSize}))
	e.Use(securityHeaders())

	// Operations: no session, and /healthz touches nothing else. /metrics
	// counts failed logins and names what is installed: it wants a viewer's
	// API token unless the operator made it public.
	e.GET(pathHealthz, s.healthz)
	e.GET(pathReadyz, s.readyz)
	if s.metrics != nil {
		var guard []echo.MiddlewareFunc
		if !s.metricsPublic {
			// The metrics are the local site's: a token limited to other
			// sites gets 404 (localSite).
			guard = append(guard, requireToken(s.auth, auth.PermView), localSite())
		}
		e.GET(pathMetrics, echo.WrapHandler(s.metrics), guard...)
	}
	e.GET(static.Prefix+"*", echo.WrapHandler(static.Handler()))
	e.GET("/robots.txt", echo.WrapHandler(static.Handler()))

	// A site's push: its push token alone, neither session nor API token
	// (apiPush); a push token authenticates nothing else.
	e.PUT(pathPush, s.apiPush)

	// A login needs no principal (it always opens a new session), and a
	// login posted from another site is refused before anything else runs.
	e.POST(views.PathLogin, s.login, sameOrigin())

	// Everything below may know who is asking.
	app := group{e.Group("", authenticate(s.auth)), ""}
	app.get("/", home)
	app.get(views.PathLogin, s.loginPage)
	app.post(views.PathLogout, s.logout, require(auth.PermView), csrf())

	s.apiRoutes(e, app)
	s.adminRoutes(app)
	s.fleetRoutes(app)
	s.sitePageRoutes(app)
}

// apiRoutes is the JSON API, with the pages' permissions: view for reads,
// manage (and CSRF with a session) for changes, audit for the audit log.
// Its description is public.
func (s *Server) apiRoutes(e *echo.Echo, app group) {
	e.GET(pathOpenAPI, s.openAPI)
	// Every route of the API is about the local site (localSite: 404 for
	// a principal that may not see it) but the sites' own and the
	// notifications'.
	all := app.group(apiPrefix, require(auth.PermView))
	api := all.group("", localSite())
	api.get(views.PathAPISummary, s.apiSummary)
	api.get(views.PathAPICatalog, s.apiCatalog)
	api.get(apiPlugins+"/:code", s.apiDetail)
	api.get(views.PathAPIPackages, s.apiPackages)
	api.get(views.PathAPIPackages+"/:name", s.apiPackage)
	api.get(views.PathAPIPackages+"/:scope/:name", s.apiPackage) // "@types/node" plain
	api.get(apiPrefix+"/history", s.apiHistory)
	api.get(apiPrefix+"/sources", s.apiSources)
	api.get(apiPrefix+"/feeds", s.apiFeeds)
	apiAudit := api.group("", require(auth.PermAudit))
	apiAudit.get(apiPrefix+"/audit", s.apiAudit)
	apiManage := api.group("", require(auth.PermManage), csrf())
	apiManage.post(views.PathAPICheck, s.apiCheck)
	apiManage.post(apiDismissal, s.apiDismiss)
	apiManage.delete(apiDismissal, s.apiUndismiss)
	apiManage.post(apiSkip, s.apiSkip)
	apiManage.delete(apiSkip, s.apiUnskip)
	apiManage.post(apiApprove, s.apiApprove)
	// A tree's dismissal, on one package (in one segment): the local
	// site's; /api/sites/NAME/… is a registered site's (sitePageRoutes).
	apiManage.post(views.PathAPIPackages+"/:name/advisories/:id/dismissal", s.apiTreeDismiss, s.readsChanged)
	apiManage.delete(views.PathAPIPackages+"/:name/advisories/:id/dismissal", s.apiTreeUndismiss, s.readsChanged)

	// Notifications: every principal, of the channels whose sites are all
	// its own (notify_sites.go: another channel is 404), so not behind
	// localSite: a principal limited to registered sites manages theirs.
	all.get(apiChannels, s.apiChannels)
	all.get(apiDeliveries, s.apiDeliveries)
	allManage := all.group("", require(auth.PermManage), csrf())
	allManage.post(apiChannels, s.apiAddChannel)
	allManage.post(apiChannelPrefix+"/test", s.apiTestChannel)
	allManage.post(apiChannelPrefix+"/enable", s.apiEnableChannel)
	allManage.post(apiChannelPrefix+"/disable", s.apiDisableChannel)
	allManage.delete(apiChannelPrefix, s.apiDeleteChannel)
	allManage.post(apiDeliveries+"/:id/retry", s.apiRetryDelivery)

	// Sites: a viewer lists the sites it may see; registering, rotating
	// and removing are sites.can_manage (admins), with an API token too.
	all.get(apiSites, s.apiSites)
	apiSitesManage := all.group("", require(auth.PermSites), csrf(), s.readsChanged)
	apiSitesManage.post(apiSites, s.apiAddSite)
	apiSitesManage.post(apiSites+"/:site/rotate", s.apiRotateSite)
	apiSitesManage.delete(apiSites+"/:site", s.apiRemoveSite)
	// A registered site's own update policy (an admin who may see it).
	apiSitesManage.get(apiSites+"/:site/policy", s.apiSitePolicy)
	apiSitesManage.put(apiSites+"/:site/policy", s.apiSetSitePolicy)
	// Who sees what: the sites a user may see (admins who see every site).
	apiSitesManage.get(apiPrefix+"/users/:email/sites", s.apiUserSites)
	apiSitesManage.put(apiPrefix+"/users/:email/sites", s.apiSetUserSites)
}

// adminRoutes is the AdminCP's pages; each reads the one summary of its
// request.
func (s *Server) adminRoutes(app group) {
	// Every page is about the local site (localSite: 404 for a principal
	// that may not see it) but the Sites section and the Notifications.
	all := app.group(views.PathDashboard, require(auth.PermView), s.withSites, s.withSummary)
	admin := all.group("", localSite())
	admin.get(views.PathDashboard, s.dashboard)
	admin.get(views.PathCatalog, s.catalogPage)
	admin.get(views.PathCatalog+"/:code", s.detailPage) // views.ComponentPath
	admin.get(views.PathPackages, s.packagesPage)
	admin.get(views.PathPackages+"/:name", s.packagePage)        // views.PackagePath
	admin.get(views.PathPackages+"/:scope/:name", s.packagePage) // "@types/node" plain
	admin.get(views.PathHistory, s.historyPage)
	admin.get(views.PathSources, s.sourcesPage)
	adminAudit := admin.group("", require(auth.PermAudit))
	adminAudit.get(views.PathAudit, s.auditPage)
	adminAudit.get(views.PathAuditCSV, s.auditCSV)
	adminManage := admin.group("", require(auth.PermManage), csrf())
	adminManage.post(views.PathCheck, s.checkForm)
	adminManage.post(views.PathCatalog+"/:code/advisories/:id/dismiss", s.dismiss)     // views.AdvisoryDismissPath
	adminManage.post(views.PathCatalog+"/:code/advisories/:id/undismiss", s.undismiss) // views.AdvisoryUndismissPath
	adminManage.post(views.PathCatalog+"/:code/skip", s.skip)                          // views.ComponentSkipPath
	adminManage.post(views.PathCatalog+"/:code/unskip", s.unskip)                      // views.ComponentUnskipPath
	adminManage.post(views.PathCatalog+"/:code/approve", s.approve)                    // views.ComponentApprovePath
	// A package page's dismiss forms answer through the session's flash.
	adminManage.post(views.PathPackages+"/:name/advisories/:id/dismiss", s.treeDismiss, requireSession(), s.readsChanged)     // views.TreeDismissPath
	adminManage.post(views.PathPackages+"/:name/advisories/:id/undismiss", s.treeUndismiss, requireSession(), s.readsChanged) // views.TreeUndismissPath

	// A document obtained elsewhere, imported for a source: it writes as a
	// check does, so the form too is for managers.
	adminManage.get(views.PathSourceImport, s.sourceImportPage) // views.SourceImportPath
	adminManage.post(views.PathSourceImport, s.sourceImport)

	// API tokens: admins only (tokens.can_manage), from a browser session:
	// an API token cannot manage API tokens.
	adminTokens := admin.group("", require(auth.PermTokens), requireSession())
	adminTokens.get(views.PathTokens, s.tokensPage)
	adminTokens.get(views.PathTokens+"/:id/revoke", s.revokeTokenPage) // views.TokenRevokePath: the question
	adminTokensChange := adminTokens.group("", csrf())
	adminTokensChange.post(views.PathTokens, s.createToken)
	adminTokensChange.post(views.PathTokens+"/:id/revoke", s.revokeToken) // views.TokenRevokePath

	// Notifications: every principal, of the channels whose sites are all
	// its own (notify_sites.go: another channel is 404), so not behind
	// localSite.
	all.get(views.PathNotifications, s.notificationsPage)
	allManage := all.group("", require(auth.PermManage), csrf())
	allManage.post(views.PathNotifications+"/channels", s.addChannel)
	allManage.post(views.PathNotifications+"/channels/:id/test", s.testChannel)       // views.ChannelPath
	allManage.post(views.PathNotifications+"/channels/:id/delete", s.deleteChannel)   // views.ChannelPath
	allManage.post(views.PathNotifications+"/channels/:id/enable", s.enableChannel)   // views.ChannelPath
	allManage.post(views.PathNotifications+"/channels/:id/disable", s.disableChannel) // views.ChannelPath
	allManage.post(views.PathNotifications+"/events/:id/retry", s.retryDelivery)      // views.DeliveryRetryPath
	// Deleting a channel asks first (views.Confirm); the POST above needs confirmed=yes.
	allManage.get(views.PathNotifications+"/channels/:id/delete", s.deleteChannelConfirm)

	// Sites: the sites the principal may see; registering, rotating and
	// removing are sites.can_manage (admins), asked first, from a browser
	// session (the new push token is shown once through the flash).
	all.get(views.PathAdminSites, s.sitesPage)
	adminSites := all.group("", require(auth.PermSites))
	adminSites.get(views.PathAdminSites+"/:site/rotate", s.rotateSitePage) // views.SiteRotatePath: the question
	adminSites.get(views.PathAdminSites+"/:site/remove", s.removeSitePage) // views.SiteRemovePath: the question
	adminSitesChange := adminSites.group("", requireSession(), csrf(), s.readsChanged)
	adminSitesChange.post(views.PathAdminSites, s.addSite)
	adminSitesChange.post(views.PathAdminSites+"/:site/rotate", s.rotateSite)
	adminSitesChange.post(views.PathAdminSites+"/:site/remove", s.removeSite)
	adminSitesChange.post(views.PathAdminSites+"/:site/policy", s.setSitePolicyForm) // views.SitePolicyPath: the overview's form

	// Who sees what: every account's sites, set by an admin who sees
	// every site (everySite), as PUT /api/admin/users/{email}/sites.
	adminUsers := all.group("", require(auth.PermSites))
	adminUsers.get(views.PathUsers, s.usersPage)
	adminUsers.get(views.PathUsers+"/:email/sites", s.userSitesPage) // views.UserSitesPath: the form
	adminUsers.post(views.PathUsers+"/:email/sites", s.setUserSites, requireSession(), csrf())
}

// home is where "/" (and a login without a next page) leads: the
// dashboard, or the Sites section for a principal that may not see the
// local site.
func home(c echo.Context) error {
	if p, ok := auth.PrincipalFrom(c); ok && !p.MaySee(store.LocalSite) {
		return c.Redirect(http.StatusSeeOther, views.PathAdminSites)
	}
	return c.Redirect(http.StatusSeeOther, views.PathDashboard)
}

// fleetRoutes is the fleet's roll-up (docs/design.md "The fleet"): every
// site the principal may see, so not only the local site's pages' guard.
func (s *Server) fleetRoutes(app group) {
	api := app.group(views.PathAPIFleet, require(auth.PermView))
	api.get(views.PathAPIFleet, s.apiFleet)
	api.get(views.PathAPIFleetSummary, s.apiFleetSummary)
	api.get(views.PathAPIFleetImpact, s.apiFleetImpact)
	admin := app.group(views.PathFleet, require(auth.PermView), s.withSites, s.withSummary)
	admin.get(views.PathFleet, s.fleetPage)
	admin.get(views.PathFleetImpact, s.fleetImpactPage)
}

// sitePageRoutes is a registered site's pages and JSON (docs/design.md
// "A site's pages"): the local site's handlers for the site siteScope
// resolves once (the 404 of an unknown path for a site the principal may
// not see, before any other permission is judged; /sites/local/…
// redirects to today's URLs). Reads: a viewer's; a skip, an approval and
// a dismissal: a manager's, with CSRF, as the local site's. A push token
// authenticates none of them (authenticate never takes it).
func (s *Server) sitePageRoutes(app group) {
	const site, api = views.PathSitePages + "/:site", views.PathAPISitePages + "/:site"
	pages := []echo.MiddlewareFunc{require(auth.PermView), s.siteScope(), s.withSites, s.withSummary}
	app.get(site, s.siteOverviewPage, pages...)
	app.get(site+"/plugins", s.catalogPage, pages...)
	app.get(site+"/plugins/:code", s.detailPage, pages...) // views.SiteComponentPath
	manage := append(pages[:len(pages):len(pages)], require(auth.PermManage), csrf())
	app.post(site+"/plugins/:code/advisories/:id/dismiss", s.dismiss, manage...)     // views.AdvisoryDismissPath
	app.post(site+"/plugins/:code/advisories/:id/undismiss", s.undismiss, manage...) // views.AdvisoryUndismissPath
	app.post(site+"/plugins/:code/skip", s.skip, manage...)                          // views.ComponentSkipPath
	app.post(site+"/plugins/:code/unskip", s.unskip, manage...)                      // views.ComponentUnskipPath
	app.post(site+"/plugins/:code/approve", s.approve, manage...)                    // views.ComponentApprovePath
	app.get(site+"/packages", s.packagesPage, pages...)
	app.get(site+"/packages/:name", s.packagePage, pages...)
	app.get(site+"/packages/:scope/:name", s.packagePage, pages...) // "@types/node" plain
	app.get(site+"/sources", s.sourcesPage, pages...)               // views.SiteSourcesPath
	app.get(site+"/history", s.siteHistoryPage, pages...)           // views.SiteHistoryPath
	reads := []echo.MiddlewareFunc{require(auth.PermView), s.siteScope()}
	app.get(api+"/summary", s.apiSiteSummary, reads...)
	app.get(api+"/history", s.apiSiteHistory, reads...)
	app.get(api+"/packages", s.apiPackages, reads...)
	app.get(api+"/packages/:name", s.apiPackage, reads...)
	app.get(api+"/packages/:scope/:name", s.apiPackage, reads...)
	app.get(api+"/sources", s.apiSources, reads...)
	// A tree's dismissal on the site's package: an admin's, CSRF as
	// every change; the site resolved first, so that one the principal
	// may not see is the 404 of an unknown path, not a 403.
	treeManage := []echo.MiddlewareFunc{require(auth.PermView), s.siteScope(), require(auth.PermManage), csrf(), s.readsChanged}
	forms := append(slices.Clone(treeManage), requireSession())                          // the answer's notice comes through the session's flash
	app.post(site+"/packages/:name/advisories/:id/dismiss", s.treeDismiss, forms...)     // views.TreeDismissPath
	app.post(site+"/packages/:name/advisories/:id/undismiss", s.treeUndismiss, forms...) // views.TreeUndismissPath
	app.post(api+"/packages/:name/advisories/:id/dismissal", s.apiTreeDismiss, treeManage...)
	app.delete(api+"/packages/:name/advisories/:id/dismissal", s.apiTreeUndismiss, treeManage...)
	app.get(api+"/plugins/updates", s.apiCatalog, reads...)
	app.get(api+"/plugins/:code", s.apiDetail, reads...)
	writes := append(reads[:len(reads):len(reads)], require(auth.PermManage), csrf())
	app.post(api+"/plugins/:code/advisories/:id/dismissal", s.apiDismiss, writes...)
	app.delete(api+"/plugins/:code/advisories/:id/dismissal", s.apiUndismiss, writes...)
	app.post(api+"/plugins/:code/skip", s.apiSkip, writes...)
	app.delete(api+"/plugins/:code/skip", s.apiUnskip, writes...)
	app.post(api+"/plugins/:code/approve", s.apiApprove, writes...)
}

// group is an echo group whose routes are given by their full paths, as
// the templates link to them; echo wants them relative to the group's
// prefix.
type group struct {
	g      *echo.Group
	prefix string
}

// group returns a group under g at prefix (relative to g's), whose
// middleware runs after g's.
func (g group) group(prefix string, m ...echo.MiddlewareFunc) group {
	return group{g.g.Group(prefix, m...), g.prefix + prefix}
}

func (g group) get(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	g.add(http.MethodGet, path, h, m...)
}

func (g group) post(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	g.add(http.MethodPost, path, h, m...)
}

func (g group) put(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	g.add(http.MethodPut, path, h, m...)
}

func (g group) delete(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	g.add(http.MethodDelete, path, h, m...)
}

// add registers a route at its full path. A path outside the group is a
// mistake in routes.go, and panics when the server is built, as a
// conflicting http.ServeMux pattern does: every test of this package
// builds it.
func (g group) add(method, path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) {
	rel, ok := strings.CutPrefix(path, g.prefix)
	if !ok || rel != "" && !strings.HasPrefix(rel, "/") {
		panic(fmt.Sprintf("web: route %s %s is outside its group %s", method, path, g.prefix))
	}
	g.g.Add(method, rel, h, m...)
}
