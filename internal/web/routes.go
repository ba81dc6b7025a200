package web

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/static"
)

// routes is the whole HTTP surface. Permissions are attached per group,
// never inside handlers: reading a route here tells who may call it.
func (s *Server) routes(e *echo.Echo) {
	e.Use(middleware.Recover())
	e.Use(middleware.BodyLimit("64K")) // forms and the check POST are tiny
	e.Use(securityHeaders())

	// Operations: no session, and /healthz touches nothing else. /metrics
	// counts failed logins and names what is installed: it wants a viewer's
	// API token unless the operator made it public.
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	if s.metrics != nil {
		var guard []echo.MiddlewareFunc
		if !s.metricsPublic {
			guard = append(guard, requireToken(s.auth, auth.PermView))
		}
		e.GET("/metrics", echo.WrapHandler(s.metrics), guard...)
	}
	e.GET("/static/*", echo.WrapHandler(static.Handler()))
	e.GET("/robots.txt", echo.WrapHandler(static.Handler()))

	// A login needs no principal (it always opens a new session), and a
	// login posted from another site is refused before anything else runs.
	e.POST("/login", s.login, sameOrigin())

	// Everything below may know who is asking.
	app := e.Group("", authenticate(s.auth))
	app.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, "/admin") })
	app.GET("/login", s.loginPage)
	app.POST("/logout", s.logout, require(auth.PermView), csrf())

	// JSON API.
	api := app.Group("/api/admin/plugins", require(auth.PermView))
	api.GET("/updates/summary", s.apiSummary)
	api.GET("/updates", s.apiCatalog)
	apiManage := api.Group("", require(auth.PermManage), csrf())
	apiManage.POST("/updates/check", s.apiCheck)

	// AdminCP pages; each reads the one summary of its request.
	admin := app.Group("/admin", require(auth.PermView), s.withSummary)
	admin.GET("", s.dashboard)
	admin.GET("/plugins", s.catalogPage)
	admin.GET("/plugins/:code", s.detailPage)
	admin.GET("/history", s.historyPage)
	admin.GET("/sources", s.sourcesPage)
	adminManage := admin.Group("", require(auth.PermManage), csrf())
	adminManage.POST("/plugins/updates/check", s.checkForm)
	adminManage.POST("/plugins/:code/advisories/:id/dismiss", s.dismiss)
	adminManage.POST("/plugins/:code/advisories/:id/undismiss", s.undismiss)
}
