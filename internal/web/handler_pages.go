package web

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
	"github.com/upcheck/upcheck/static"
	"github.com/upcheck/upcheck/views"
)

// summaryKey stores the request's one summary in the echo context.
const summaryKey = "upcheck.summary"

// withSummary computes the summary once per page request: the navigation
// badge, the security alert and the widget all read this one value.
func (s *Server) withSummary(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if p, _ := auth.PrincipalFrom(c); !p.MaySee(store.LocalSite) {
			// The summary is the local site's: a principal that may not
			// see it reads none, and the layout says nothing of it.
			return next(c)
		}
		sum, err := s.reads.Summary(c.Request().Context())
		if err != nil {
			return err
		}
		c.Set(summaryKey, sum)
		return next(c)
	}
}

// layout builds the props every signed-in page shares. The summary is the
// value withSummary read, handed over as it is.
func layout(c echo.Context) views.LayoutProps {
	p, _ := auth.PrincipalFrom(c)
	sum, _ := c.Get(summaryKey).(readmodel.Summary)
	sites, more := siteSwitches(c)
	return views.LayoutProps{
		Site:      viewSite(siteOf(c)),
		Sites:     sites,
		SitesMore: more,
		User: views.User{Email: p.Email, Role: p.Role, CanManage: p.Can(auth.PermManage),
			CanManageTokens: p.Can(auth.PermTokens) && !p.ViaToken, CanAudit: p.Can(auth.PermAudit),
			CanManageUsers: p.Can(auth.PermSites) && !p.Sites.Limited(),
			NoLocalSite:    !p.MaySee(store.LocalSite)},
		CSRFToken: p.CSRFToken,
		Summary:   sum,
		Asset:     static.Path,
		Now:       time.Now(),
	}
}

func (s *Server) dashboard(c echo.Context) error {
	l := layout(c)
	text, tone := checkOutcomeFlash(c, s.checker.Cooldown())
	return renderOK(c, views.Dashboard(views.DashboardProps{Layout: l, CanManage: l.User.CanManage, Flash: text, FlashTone: tone,
		Cooldown: s.checker.Cooldown()}))
}

// checkOutcomeFlash words the outcome of a check posted without JavaScript. The
// redirect carries only a known status and numbers, never text, so a crafted
// link cannot make the dashboard say anything else.
func checkOutcomeFlash(c echo.Context, cooldown time.Duration) (text, tone string) {
	status := c.QueryParam("check")
	if !updatecheck.Status(status).Answered() {
		return "", ""
	}
	n := func(name string) int {
		v, err := strconv.Atoi(c.QueryParam(name))
		if err != nil || v < 0 || v > 1_000_000 {
			return 0
		}
		return v
	}
	return views.CheckOutcomeMessage(views.CheckOutcome{Status: status, Fetched: n("fetched"),
		NotModified: n("not_modified"), Failed: n("failed"), RetryAfter: n("retry_after"), Cooldown: cooldown}), views.CheckOutcomeTone(status)
}

// pageSize is the catalog page's size: big enough to scan, small enough to
// render fast with thousands of components.
const pageSize = 50

// catalogPage is a site's catalog: the local site's (/admin/plugins), its
// table rendered once a second for many requests (fragments), or a
// registered site's (/sites/NAME/plugins), rendered for each.
func (s *Server) catalogPage(c echo.Context) error {
	f, page, err := catalogQuery(c, pageSize)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	site := siteOf(c)
	snap, err := s.reads.SiteSnapshot(ctx, site.ID)
	if err != nil {
		return err
	}
	l := layout(c)
	if !site.Local() {
		return s.siteCatalogPage(c, snap, f, page, l)
	}
	// Whether the feeds were read is the summary's, not the snapshot's: the
	// key names it, so a page kept from before a feed's first sync is not
	// shown after it.
	malwareRead, exploitedRead := l.Summary.Malicious != nil, l.Summary.KnownExploited != nil
	key := keyOf("page", f, l.Now.Unix())
	key.malwareRead, key.exploitedRead = malwareRead, exploitedRead
	content, err := s.fragments.get(snap, key, func() ([]byte, error) {
		entries, counts, err := snap.Page(f)
		if err != nil {
			return nil, err
		}
		p := catalogProps(f, page, entries, counts)
		p.MalwareRead, p.ExploitedRead = malwareRead, exploitedRead
		return renderBytes(ctx, views.CatalogContent(p, l.Now))
	})
	if err != nil {
		return err
	}
	return renderOK(c, views.CatalogPage(l, rawHTML(content)))
}

// siteCatalogPage is a registered site's catalog page from snap, made for
// each request. Whether the feeds were read is the fleet's fact
// (upcheck_malware_read_at, upcheck_exploited_read_at), the same in every
// site's summary: it is read from the cached summary (catalog.Reads), also
// for a principal the layout reads none for.
func (s *Server) siteCatalogPage(c echo.Context, snap *catalog.Snapshot, f store.CatalogFilter, page int, l views.LayoutProps) error {
	sum, err := s.reads.Summary(c.Request().Context())
	if err != nil {
		return err
	}
	entries, counts, err := snap.Page(f)
	if err != nil {
		return err
	}
	p := catalogProps(f, page, entries, counts)
	p.Site, p.MalwareRead, p.ExploitedRead = l.Site, sum.Malicious != nil, sum.KnownExploited != nil
	return renderOK(c, views.CatalogPage(l, views.CatalogContent(p, l.Now)))
}

// catalogProps is what the catalog page shows of one page of entries.
func catalogProps(f store.CatalogFilter, page int, entries []store.CatalogEntry, counts store.CatalogCounts) views.CatalogProps {
	rows := make([]readmodel.CatalogRow, len(entries))
	for i, e := range entries {
		rows[i] = e.CatalogRow
	}
	filters := map[readmodel.Filter]int{}
	for _, status := range readmodel.CatalogFilters {
		filters[status] = counts.Of(status)
	}
	return views.CatalogProps{Rows: rows, Filter: f.Status, Query: f.Search, Page: page, PageSize: f.Limit,
		Total: counts.Of(f.Status), Counts: filters}
}

func (s *Server) detailPage(c echo.Context) error {
	return s.renderDetail(c, http.StatusOK, views.DismissForm{})
}

// renderDetail renders a component's page; form refills the dismiss form
// the server refused, with why.
func (s *Server) renderDetail(c echo.Context, status int, form views.DismissForm) error {
	code, err := pathParam(c, "code")
	if err != nil {
		return err
	}
	d, err := s.reads.SiteDetail(c.Request().Context(), siteOf(c).ID, code)
	if errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, views.UnknownComponentText(code)).WithInternal(err)
	}
	if err != nil {
		return err
	}
	l := layout(c)
	props := views.DetailProps{Layout: l, DetailRow: d.DetailRow, CanManage: l.User.CanManage,
		SecurityRelease: releaseRef(d.SecurityRelease), BlockedRelease: releaseRef(d.BlockedUpdate)}
	for _, r := range d.Releases {
		props.Releases = append(props.Releases, releaseView(r))
	}
	detailPolicy(&props, d)
	for _, a := range d.Advisories {
		props.Advisories = append(props.Advisories, advisoryRow(a))
	}
	props.Withdrawn = withdrawnRows(d.Withdrawn)
	for _, rows := range [][]views.AdvisoryRow{props.Advisories, props.Withdrawn} {
		for i := range rows {
			rows[i].OSV.Links = s.advisoryLinks
		}
	}
	props.DismissForm = form
	props.SkipForm = s.skipSection(c, d, props.Skip, l.User.CanManage)
	if props.Approval, err = s.approvalSection(c, d, l.User.CanManage); err != nil {
		return err
	}
	return render(c, status, views.ComponentDetail(props))
}

// releaseRef is one release of the stored evaluation as the detail page's
// headline names it; nil stays nil.
func releaseRef(r *release.Release) *views.ReleaseRow {
	if r == nil {
		return nil
	}
	return &views.ReleaseRow{Version: r.Version, Security: r.Security, Severity: r.Severity, Summary: r.Summary,
		URL: r.URL, RequiresCore: r.RequiresCore}
}

func (s *Server) historyPage(c echo.Context) error {
	runs, err := s.store.Runs(c.Request().Context(), 200)
	if err != nil {
		return err
	}
	syncs, err := s.store.FeedSyncs(c.Request().Context(), 50)
	if err != nil {
		return err
	}
	return renderOK(c, views.History(views.HistoryProps{Layout: layout(c), Runs: runs, FeedSyncs: syncs}))
}

// sourcesPage is Source health: the sources the site's components use
// (the local site's, or a registered one's, siteOf) and the fleet's feeds.
func (s *Server) sourcesPage(c echo.Context) error {
	sources, err := s.store.SiteSourceHealth(c.Request().Context(), siteOf(c).ID)
	if err != nil {
		return err
	}
	feeds, err := s.store.Feeds(c.Request().Context())
	if err != nil {
		return err
	}
	l := layout(c)
	for i, f := range feeds { // a mirror's token rides in the query: masked as a channel's target
		feeds[i].URL = readmodel.ShownFeedURL(f.URL, l.User.CanManage)
	}
	return renderOK(c, views.SourceHealth(views.SourceHealthProps{Layout: l, Sources: sources, Feeds: feeds}))
}

// checkForm is the "Check for updates" button without JavaScript: run the
// check, then redirect to the dashboard with the outcome in words.
func (s *Server) checkForm(c echo.Context) error {
	res, err := s.runManualCheck(c)
	if err != nil {
		return err
	}
	q := url.Values{"check": {string(res.Status)}}
	for k, v := range map[string]int{"fetched": res.Fetched, "not_modified": res.NotModified, "failed": res.Failed, "retry_after": res.RetryAfter} {
		q.Set(k, strconv.Itoa(v))
	}
	return c.Redirect(http.StatusSeeOther, "/admin?"+q.Encode())
}

// pathParam is a path parameter as the client meant it. Echo routes on the
// escaped path, and so hands over escaped parameters, whenever the request
// path needs one to be told apart ("GHSA%2F2026%2F1": an escaped slash);
// otherwise the parameters are already unescaped.
func pathParam(c echo.Context, name string) (string, error) {
	if c.Request().URL.RawPath == "" {
		return c.Param(name), nil
	}
	v, err := url.PathUnescape(c.Param(name))
	if err != nil {
		return "", echo.NewHTTPError(http.StatusBadRequest, name+" is not a valid path segment")
	}
	return v, nil
}
