// Package web is upcheck's HTTP surface on echo v4: routes.go lists every
// route and the permission each group needs, middleware.go applies
// internal/auth's decisions (who is asking, may they, is it forged) to each
// request, handlers return errors, and one error handler (errors.go) turns
// them into status codes, as JSON under /api/ and as pages elsewhere.
package web

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// Deps are what the handlers need.
type Deps struct {
	Store   *store.Store
	Checker *updatecheck.Checker
	Auth    *auth.Service
	Notify  *notify.Service
	Logger  *slog.Logger
	// Context lives as long as the server: a manual check runs under it, so
	// a closed browser tab does not cancel the check but a shutdown does.
	Context context.Context
	// Metrics serves /metrics; nil leaves the route out. It asks for an API
	// token of a user with plugins.can_view unless MetricsPublic.
	Metrics http.Handler
	// MetricsPublic serves /metrics to anyone (UPCHECK_METRICS_PUBLIC=1).
	MetricsPublic bool
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names the
	// client (UPCHECK_TRUSTED_PROXIES); empty: the client is the TCP peer.
	TrustedProxies []netip.Prefix
	// Middleware runs first on every request (request metrics).
	Middleware []echo.MiddlewareFunc

	// AdvisoryLinks are where the detail page links advisory aliases
	// (UPCHECK_ADVISORY_LINKS); none: they are shown as text.
	AdvisoryLinks readmodel.AdvisoryLinks
	// LockfileDev is UPCHECK_LOCKFILE_DEV: how the pages treat the
	// findings on packages installed only for development; "" is
	// readmodel.DevSeparate.
	LockfileDev readmodel.DevMode
	// SiteStaleAfter is UPCHECK_SITE_STALE_AFTER; 0 is
	// readmodel.DefaultSiteStaleAfter.
	SiteStaleAfter time.Duration

	// Importer, Reads and Dismissals are the import, the reads of the
	// read model and the dismissals, wired to the same writes as Checker
	// (app.App).
	Importer   *updatecheck.Importer
	Reads      *catalog.Reads
	Dismissals *catalog.Dismissals
}

// Server holds the handlers' dependencies.
type Server struct {
	store   *store.Store
	checker *updatecheck.Checker
	auth    *auth.Service
	notify  *notify.Service
	logger  *slog.Logger
	ctx     context.Context
	metrics http.Handler
	// metricsPublic serves /metrics without a token.
	metricsPublic bool
	// fragments are rendered parts of catalog answers (fragments.go).
	fragments fragments
	// fleetFragments are the Fleet page's rendered contents, fleetJSON
	// the fleet API's pages, by the read they show (fragments.go).
	fleetFragments keptBytes[fleetFragmentKey]
	fleetJSON      keptBytes[uint64]
	// advisoryLinks link the advisories' aliases on the detail page.
	advisoryLinks readmodel.AdvisoryLinks
	// devMode is UPCHECK_LOCKFILE_DEV (Deps.LockfileDev).
	devMode readmodel.DevMode
	// siteStaleAfter is UPCHECK_SITE_STALE_AFTER, its default filled in.
	siteStaleAfter time.Duration

	importer   *updatecheck.Importer
	reads      *catalog.Reads
	dismissals *catalog.Dismissals
}

// New builds the HTTP handler.
func New(d Deps) http.Handler {
	if d.Context == nil {
		d.Context = context.Background()
	}
	s := &Server{store: d.Store, checker: d.Checker, auth: d.Auth, notify: d.Notify, logger: d.Logger, ctx: d.Context,
		metrics: d.Metrics, metricsPublic: d.MetricsPublic, importer: d.Importer, reads: d.Reads, dismissals: d.Dismissals,
		advisoryLinks: d.AdvisoryLinks, devMode: d.LockfileDev, siteStaleAfter: readmodel.SiteStaleAfter(d.SiteStaleAfter)}
	if !s.devMode.Valid() {
		s.devMode = readmodel.DevSeparate
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	// The client address is the peer's, or behind a trusted proxy the one
	// the proxy appended to X-Forwarded-For: login throttling per address
	// must neither be escaped by sending a new X-Forwarded-For nor lump
	// every client of a proxy together.
	e.IPExtractor = auth.ClientAddress(d.TrustedProxies)
	e.Use(d.Middleware...)
	e.HTTPErrorHandler = s.handleError
	s.routes(e)
	return e
}
