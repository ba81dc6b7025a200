package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
	"github.com/upcheck/upcheck/internal/updatedoc"
	"github.com/upcheck/upcheck/static"
	"github.com/upcheck/upcheck/views"
)

// summaryKey stores the request's one summary in the echo context.
const summaryKey = "upcheck.summary"

// withSummary computes the summary once per page request: the navigation
// badge, the security alert and the widget all read this one value.
func (s *Server) withSummary(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		sum, err := s.checker.Summary(c.Request().Context())
		if err != nil {
			return err
		}
		c.Set(summaryKey, sum)
		return next(c)
	}
}

// layout builds the props every signed-in page shares.
func layout(c echo.Context) views.LayoutProps {
	p, _ := auth.PrincipalFrom(c)
	sum, _ := c.Get(summaryKey).(updatecheck.Summary)
	props := views.LayoutProps{
		User:      views.User{Email: p.Email, Role: p.Role, CanManage: p.Can(auth.PermManage)},
		CSRFToken: p.CSRFToken,
		Summary:   summaryProps(sum),
		Asset:     static.Path,
		Now:       time.Now(),
	}
	return props
}

func summaryProps(s updatecheck.Summary) views.SummaryProps {
	p := views.SummaryProps{
		Components: s.Components, UpdatesAvailable: s.UpdatesAvailable, SecurityUpdates: s.SecurityUpdates,
		Vulnerable: s.Vulnerable, FailingSources: s.FailingSources, Stale: s.Stale,
		OldestSuccessAt: s.OldestSuccessAt, CheckRunning: s.CheckRunning,
	}
	if s.LastCheck != nil {
		p.LastCheckStatus, p.LastCheckTrigger, p.LastCheckFinishedAt = s.LastCheck.Status, s.LastCheck.Trigger, s.LastCheck.FinishedAt
	}
	return p
}

func (s *Server) dashboard(c echo.Context) error {
	l := layout(c)
	return renderOK(c, views.Dashboard(views.DashboardProps{Layout: l, CanManage: l.User.CanManage, Flash: flash(c)}))
}

// flash words the outcome of a check posted without JavaScript. The
// redirect carries only a known status and numbers, never text, so a crafted
// link cannot make the dashboard say anything else.
func flash(c echo.Context) string {
	status := c.QueryParam("check")
	switch updatecheck.Status(status) {
	case updatecheck.Completed, updatecheck.Busy, updatecheck.Cooldown, updatecheck.LeaseLost,
		updatecheck.Skipped, updatecheck.Cancelled, updatecheck.Failed:
	default:
		return ""
	}
	n := func(name string) int {
		v, err := strconv.Atoi(c.QueryParam(name))
		if err != nil || v < 0 || v > 1_000_000 {
			return 0
		}
		return v
	}
	return views.CheckOutcomeMessage(views.CheckOutcome{Status: status, Fetched: n("fetched"),
		NotModified: n("not_modified"), Failed: n("failed"), RetryAfter: n("retry_after")})
}

// pageSize is the catalog page's size: big enough to scan, small enough to
// render fast with thousands of components.
const pageSize = 50

func (s *Server) catalogPage(c echo.Context) error {
	f, page, err := catalogQuery(c, pageSize)
	if err != nil {
		return err
	}
	entries, total, err := s.store.Catalog(c.Request().Context(), f)
	if err != nil {
		return err
	}
	rows := make([]views.CatalogRow, len(entries))
	for i, e := range entries {
		rows[i] = views.CatalogRow{
			Code: e.Code, Name: e.Name, Installed: e.Installed, Latest: e.Latest, UpdateVersion: e.UpdateVersion,
			UpdateAvailable: e.UpdateAvailable, Security: e.Security, Vulnerable: e.Vulnerable,
			VulnerableNoFix: hasNoFix(e.Advisories), NeedsNewerCore: e.NeedsNewerCore, RequiredCore: e.RequiredCore,
			ReleaseURL: e.ReleaseURL, SourceURL: e.SourceURL, LastSuccessAt: e.LastSuccessAt,
			LastAttemptAt: e.LastAttemptAt, LastError: e.LastError, Stale: e.Stale,
		}
	}
	return renderOK(c, views.Catalog(views.CatalogProps{
		Layout: layout(c), Rows: rows, Filter: f.Status, Query: f.Search, Page: page, PageSize: f.Limit, Total: total,
	}))
}

func hasNoFix(advisories []byte) bool {
	var list []updatedoc.AdvisoryMatch
	if json.Unmarshal(advisories, &list) != nil {
		return false
	}
	for _, a := range list {
		if a.NoFix {
			return true
		}
	}
	return false
}

func (s *Server) detailPage(c echo.Context) error {
	ctx := c.Request().Context()
	d, err := s.store.ComponentDetail(ctx, c.Param("code"))
	if err != nil {
		return err
	}
	dismissals, err := s.store.DismissalsFor(ctx)
	if err != nil {
		return err
	}
	dismissed := dismissals[d.Code]
	l := layout(c)
	props := views.DetailProps{
		Layout: l, Code: d.Code, Name: d.Name, Installed: d.Installed, Latest: d.Latest, SourceURL: d.SourceURL,
		CanManage: l.User.CanManage, LastSuccessAt: d.LastSuccessAt, LastError: d.LastError,
	}
	if doc, err := updatedoc.Parse(d.Document); err == nil && d.Document != nil {
		props.Releases, props.Advisories = detailRows(doc, d, dismissed)
	}
	return renderOK(c, views.ComponentDetail(props))
}

// detailRows lists the package's releases (newest first) and the advisories
// affecting the installed version, dismissed ones included and marked.
func detailRows(doc *updatedoc.Document, d store.ComponentDetail, dismissed map[string]bool) ([]views.ReleaseRow, []views.AdvisoryRow) {
	var releases []views.ReleaseRow
	if pkg := doc.Packages[d.Code]; pkg != nil {
		core, _ := updatedoc.ParseVersion(d.CoreVersion)
		for i := len(pkg.Releases) - 1; i >= 0; i-- {
			r := pkg.Releases[i]
			row := views.ReleaseRow{Version: r.Version, Security: r.Security, Severity: r.Severity,
				Summary: r.Summary, URL: r.URL, RequiresCore: r.RequiresCore, Installable: true}
			if !r.Released.IsZero() {
				row.Released = r.Released.Format("2006-01-02")
			}
			if r.RequiresCore != "" && d.Code != updatedoc.CoreCode {
				rng, err := updatedoc.ParseRange(r.RequiresCore)
				row.Installable = err == nil && core != nil && rng.Contains(core)
			}
			releases = append(releases, row)
		}
	}
	var advisories []views.AdvisoryRow
	if ev, err := updatedoc.Evaluate(doc, d.Code, d.Installed, d.CoreVersion, nil); err == nil {
		for _, a := range ev.Advisories {
			advisories = append(advisories, views.AdvisoryRow{ID: a.ID, Severity: a.Severity, Summary: a.Summary,
				URL: a.URL, Affected: a.Affected, FixedIn: a.FixedIn, NoFix: a.NoFix, Dismissed: dismissed[a.ID]})
		}
	}
	return releases, advisories
}

func (s *Server) historyPage(c echo.Context) error {
	runs, err := s.store.Runs(c.Request().Context(), 200)
	if err != nil {
		return err
	}
	rows := make([]views.RunRow, len(runs))
	for i, r := range runs {
		rows[i] = views.RunRow{ID: r.ID, Trigger: r.Trigger, Actor: r.Actor, Status: r.Status, StartedAt: r.StartedAt,
			FinishedAt: r.FinishedAt, DurationMS: r.DurationMS, Fetched: r.Fetched, NotModified: r.NotModified,
			Failed: r.Failed, Skipped: r.Skipped, Error: r.Error}
	}
	return renderOK(c, views.History(views.HistoryProps{Layout: layout(c), Runs: rows}))
}

func (s *Server) sourcesPage(c echo.Context) error {
	sources, err := s.store.SourceHealth(c.Request().Context())
	if err != nil {
		return err
	}
	rows := make([]views.SourceRow, len(sources))
	for i, src := range sources {
		rows[i] = views.SourceRow{URL: src.URL, Components: src.Components, LastSuccessAt: src.LastSuccessAt,
			LastAttemptAt: src.LastAttemptAt, LastError: src.LastError, ConsecutiveFailures: src.ConsecutiveFailures,
			Stale:     src.Stale,
			ExpiresAt: src.ExpiresAt, SignatureState: src.SignatureState}
	}
	return renderOK(c, views.SourceHealth(views.SourceHealthProps{Layout: layout(c), Sources: rows}))
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

func (s *Server) dismiss(c echo.Context) error   { return s.setDismissed(c, true) }
func (s *Server) undismiss(c echo.Context) error { return s.setDismissed(c, false) }

// setDismissed records the decision (audited) and re-evaluates the
// component at once, so the badge and alert follow.
func (s *Server) setDismissed(c echo.Context, dismiss bool) error {
	ctx := c.Request().Context()
	code, id := c.Param("code"), c.Param("id")
	if len(id) > 200 {
		return echo.NewHTTPError(http.StatusBadRequest, "advisory id is too long")
	}
	if _, err := s.store.Component(ctx, code); err != nil {
		return err
	}
	p, _ := auth.PrincipalFrom(c)
	var err error
	if dismiss {
		err = s.store.DismissAdvisory(ctx, code, id, p.UserID)
	} else {
		err = s.store.UndismissAdvisory(ctx, code, id, p.UserID)
	}
	if err != nil {
		return err
	}
	if err := s.checker.Reevaluate(context.WithoutCancel(ctx), code); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/admin/plugins/"+url.PathEscape(code)+"#advisories")
}
