package web

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/views"
)

// A registered site's pages and JSON (docs/design.md "A site's pages"):
// the local site's handlers and templates, scoped by the site siteScope
// puts in the request (siteOf); the local site keeps today's URLs, and
// /sites/local/… redirects there.

// siteKey stores the site a request is about in the echo context: set by
// siteScope for /sites/NAME/… and /api/sites/NAME/…, and by localSite for
// the local site's routes.
const siteKey = "upcheck.site"

// localSiteRef is the local site as a request about it carries it.
var localSiteRef = store.Site{ID: store.LocalSite, Name: store.LocalSiteName}

// siteOf is the site the request is about: the one siteScope resolved, or
// the local site.
func siteOf(c echo.Context) store.Site {
	if s, ok := c.Get(siteKey).(store.Site); ok {
		return s
	}
	return localSiteRef
}

// viewSite is the site as views name it: "" for the local one (today's
// URLs), its name for a registered one.
func viewSite(s store.Site) string {
	if s.Local() {
		return ""
	}
	return s.Name
}

// siteScope resolves the route's :site once for every route under
// /sites/NAME and /api/sites/NAME: a site that does not exist, or that
// the principal may not see (auth.Principal.MaySee), is the 404 of an
// unknown path, so that the answer tells nothing of other sites; the
// local site redirects to today's URLs; any other is put in the request
// (siteOf). Place it after the route's permission.
func (s *Server) siteScope() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			name := c.Param("site")
			if !auth.ValidSiteName(name) {
				return echo.ErrNotFound
			}
			site, err := s.store.SiteByName(c.Request().Context(), name, s.siteStaleAfter)
			if errors.Is(err, store.ErrNotFound) {
				return echo.ErrNotFound
			}
			if err != nil {
				return err
			}
			if p, _ := auth.PrincipalFrom(c); !p.MaySee(site.ID) {
				return echo.ErrNotFound
			}
			if site.Local() {
				// A write is sent on as it was (307: its method and body
				// kept), a read is led there (303).
				status := http.StatusSeeOther
				if m := c.Request().Method; m != http.MethodGet && m != http.MethodHead {
					status = http.StatusTemporaryRedirect
				}
				return c.Redirect(status, localSiteURL(c.Request()))
			}
			c.Set(siteKey, site)
			return next(c)
		}
	}
}

// localSiteURL is today's URL of a /sites/local/… or /api/sites/local/…
// request: the dashboard, the catalog and a component's page and forms,
// the Packages pages, Source health, the history, the summary, catalog,
// component, packages, sources and history JSON; its query kept.
func localSiteURL(r *http.Request) string {
	path := r.URL.EscapedPath()
	var u string
	if rest, ok := strings.CutPrefix(path, views.PathAPISitePages+"/"+store.LocalSiteName); ok {
		u = views.PathAPIPackages + strings.TrimPrefix(rest, "/packages")
		switch {
		case rest == "/summary":
			u = views.PathAPISummary
		case rest == "/sources":
			u = apiPrefix + "/sources"
		case rest == "/history":
			u = apiPrefix + "/history"
		case strings.HasPrefix(rest, "/plugins"):
			u = apiPlugins + strings.TrimPrefix(rest, "/plugins")
		}
	} else {
		rest = strings.TrimPrefix(path, views.PathSitePages+"/"+store.LocalSiteName)
		u = views.PathPackages + strings.TrimPrefix(rest, "/packages")
		switch {
		case rest == "" || rest == "/":
			u = views.PathDashboard
		case rest == "/sources":
			u = views.PathSources
		case rest == "/history":
			u = views.PathHistory
		case strings.HasPrefix(rest, "/plugins"):
			u = views.PathCatalog + strings.TrimPrefix(rest, "/plugins")
		}
	}
	if r.URL.RawQuery != "" {
		u += "?" + r.URL.RawQuery
	}
	return u
}

// siteRow reads a registered site's row of the fleet: its counts as the
// Fleet page counts them, its push and whether it is stale.
func (s *Server) siteRow(c echo.Context, site store.Site) (readmodel.FleetRow, error) {
	page, err := s.reads.Fleet(c.Request().Context(), store.FleetFilter{Scope: store.FleetScope{Limited: true, IDs: []int64{site.ID}},
		Sort: readmodel.FleetByName, DevMode: s.devMode, StaleAfter: s.fleetStaleAfter(), Limit: 1})
	if err != nil {
		return readmodel.FleetRow{}, err
	}
	if len(page.Rows) == 0 {
		// Removed since siteScope read it.
		return readmodel.FleetRow{}, echo.ErrNotFound
	}
	return page.Rows[0], nil
}

// siteOverviewPage is a registered site's overview (/sites/NAME).
func (s *Server) siteOverviewPage(c echo.Context) error {
	site := siteOf(c)
	row, err := s.siteRow(c, site)
	if err != nil {
		return err
	}
	sum, err := s.store.Summary(c.Request().Context(), site.ID, s.devMode)
	if err != nil {
		return err
	}
	policy, err := s.sitePolicyProps(c, site)
	if err != nil {
		return err
	}
	refusal, err := s.store.PushRefusal(c.Request().Context(), site.ID)
	if err != nil {
		return err
	}
	return renderOK(c, views.Site(views.SiteProps{Layout: layout(c), Row: row,
		Components: readmodel.SiteComponentsText(sum.Components, sum.UpdatesAvailable, sum.SecurityUpdates, sum.NeverSucceeded != nil),
		Policy:     policy, Refusal: refusal}))
}

// siteSummaryJSON is GET /api/sites/{site}/summary: a registered site's
// push (and the refused one that stands), its components' and its
// sources' counts and its installed tree's parts of the summary (the
// local site's fields, read the same way).
type siteSummaryJSON struct {
	Site     string     `json:"site"`
	Owner    string     `json:"owner"`
	Push     string     `json:"push"`
	PushedAt *time.Time `json:"pushed_at"`
	Stale    bool       `json:"stale"`
	// ComponentsRead is true: a registered site's components are read
	// from its pushes and checked with the fleet's; Components says their
	// counts in words, ComponentCount, UpdatesAvailable and
	// SecurityUpdates are the counts.
	ComponentsRead    bool                         `json:"components_read"`
	Components        string                       `json:"components"`
	ComponentCount    int                          `json:"component_count"`
	UpdatesAvailable  int                          `json:"updates_available"`
	SecurityUpdates   int                          `json:"security_updates"`
	TreePackages      *int                         `json:"tree_packages"`
	TreeReadAt        *time.Time                   `json:"tree_read_at"`
	TreeCounts        *readmodel.TreeCounts        `json:"tree_counts"`
	TreeAttention     readmodel.TreeAttentionItems `json:"tree_attention"`
	TreeAttentionMore int                          `json:"tree_attention_more"`
	MalwareReadAt     *time.Time                   `json:"malware_read_at"`
	ExploitedReadAt   *time.Time                   `json:"exploited_read_at"`
	// The sources its components use (site_source_state), counted as the
	// local summary counts its own.
	FailingSources   int `json:"failing_sources"`
	UntrustedSources int `json:"untrusted_sources"`
	UnsignedSources  int `json:"unsigned_sources"`
	// InputRefusals is its refused push that stands, as the local
	// summary lists its refused inputs: [] when the last push was
	// accepted.
	InputRefusals readmodel.InputRefusals `json:"input_refusals"`
}

// apiSiteSummary is GET /api/sites/{site}/summary.
func (s *Server) apiSiteSummary(c echo.Context) error {
	site := siteOf(c)
	ctx := c.Request().Context()
	sum, err := s.store.Summary(ctx, site.ID, s.devMode)
	if err != nil {
		return err
	}
	refusal, err := s.store.PushRefusal(ctx, site.ID)
	if err != nil {
		return err
	}
	var refusals readmodel.InputRefusals
	if refusal != nil {
		refusals = append(refusals, *refusal)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, siteSummaryJSON{Site: site.Name, Owner: site.Owner,
		Push: readmodel.SitePushText(time.Now(), site.PushedAt, site.Stale), PushedAt: site.PushedAt, Stale: site.Stale,
		ComponentsRead: true,
		Components:     readmodel.SiteComponentsText(sum.Components, sum.UpdatesAvailable, sum.SecurityUpdates, sum.NeverSucceeded != nil),
		ComponentCount: sum.Components, UpdatesAvailable: sum.UpdatesAvailable, SecurityUpdates: sum.SecurityUpdates,
		TreePackages: sum.TreePackages, TreeReadAt: sum.TreeReadAt,
		TreeCounts: sum.TreeCounts, TreeAttention: sum.TreeAttention, TreeAttentionMore: sum.TreeAttentionMore,
		MalwareReadAt: sum.MalwareReadAt, ExploitedReadAt: sum.ExploitedReadAt,
		FailingSources: sum.FailingSources, UntrustedSources: sum.UntrustedSources, UnsignedSources: sum.UnsignedSources,
		InputRefusals: refusals})
}

// switcherKey stores the site switcher's sites (withSites) in the echo
// context.
const switcherKey = "upcheck.switcher"

// withSites reads the sites the layout's switcher names: the first
// views.SiteSwitchLimit the principal may see, the local one first, and
// one more to tell whether there are others; for a principal that sees
// every site, from the reads' cache (catalog.Reads.SiteChoices). Only a
// page shows the switcher: a form's post, which redirects, reads none.
func (s *Server) withSites(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if m := c.Request().Method; m != http.MethodGet && m != http.MethodHead {
			return next(c)
		}
		ctx, scope := c.Request().Context(), fleetScope(c)
		var sites []store.SiteChoice
		var err error
		if scope.Limited {
			sites, err = s.store.SiteChoices(ctx, scope, views.SiteSwitchLimit+1)
		} else {
			sites, err = s.reads.SiteChoices(ctx, views.SiteSwitchLimit+1)
		}
		if err != nil {
			return err
		}
		c.Set(switcherKey, sites)
		return next(c)
	}
}

// readsChanged drops this process's cached reads after a write to the
// sites (registered, given a new token, removed), whatever its answer:
// the switcher names a site from the next page on.
func (s *Server) readsChanged(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		defer s.reads.Changed()
		return next(c)
	}
}

// siteSwitches is the switcher as the layout shows it: each site with
// the page of the current kind there (a Packages page, or a package's,
// which is every site's Packages page searched for its name; a catalog,
// or a component's page, which is every site's catalog searched for its
// code; Source health; a history), else its overview; the site the page is about is marked
// current. more: the principal may see more registered sites than it
// names.
func siteSwitches(c echo.Context) (out []views.SiteSwitch, more bool) {
	sites, _ := c.Get(switcherKey).([]store.SiteChoice)
	registered := len(sites)
	if registered > 0 && sites[0].ID == store.LocalSite {
		registered--
	}
	if registered > views.SiteSwitchLimit {
		sites, more = sites[:len(sites)-1], true
	}
	cur, onSite := c.Get(siteKey).(store.Site)
	kind, q := switchKind(c)
	for _, site := range sites {
		name := ""
		if site.ID != store.LocalSite {
			name = site.Name
		}
		href := views.SitePath(name)
		switch kind {
		case switchPackages:
			href = views.SitePackagesPath(name, "", "", q, "")
		case switchCatalog:
			href = views.SiteCatalogPath(name, "", q, 0)
		case switchSources:
			href = views.SiteSourcesPath(name)
		case switchHistory:
			href = views.SiteHistoryPath(name, 1)
		}
		out = append(out, views.SiteSwitch{Name: site.Name, Href: href, Current: onSite && cur.ID == site.ID})
	}
	return out, more
}

// The kinds of page the switcher keeps (switchKind).
const (
	switchOverview = iota
	switchPackages
	switchCatalog
	switchSources
	switchHistory
)

// switchKind is the kind of page the request is, as the switcher keeps
// it: a Packages page, with the package's name on a package's page; a
// catalog, with the component's code on a component's page; Source
// health; a history; else an overview.
func switchKind(c echo.Context) (kind int, q string) {
	p := c.Path()
	for _, base := range []string{views.PathPackages, views.PathSitePages + "/:site/packages"} {
		if p == base {
			return switchPackages, ""
		}
		if strings.HasPrefix(p, base+"/") {
			name, _ := pathParam(c, "name")
			if scope, _ := pathParam(c, "scope"); scope != "" {
				name = scope + "/" + name
			}
			return switchPackages, name
		}
	}
	for _, base := range []string{views.PathCatalog, views.PathSitePages + "/:site/plugins"} {
		if p == base {
			return switchCatalog, ""
		}
		if strings.HasPrefix(p, base+"/:code") {
			code, _ := pathParam(c, "code")
			return switchCatalog, code
		}
	}
	if p == views.PathSources || p == views.PathSitePages+"/:site/sources" {
		return switchSources, ""
	}
	if p == views.PathHistory || p == views.PathSitePages+"/:site/history" {
		return switchHistory, ""
	}
	return switchOverview, ""
}
