package web

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/views"
)

// A registered site's history (docs/design.md "A site's pages"): its
// accepted pushes from their audit rows, the refused push that stands,
// and the fleet's check runs and feed syncs since it was registered, as
// the local history reads them (store.Runs, store.FeedSyncs).

// Rows the site's history page reads of the fleet's runs and feed syncs:
// the local history's.
const (
	historyPageRuns  = 200
	historyPageSyncs = 50
)

// siteHistoryPage is GET /sites/NAME/history.
func (s *Server) siteHistoryPage(c echo.Context) error {
	ctx, site := c.Request().Context(), siteOf(c)
	page, _, err := pageParams(c, views.SitePushesPerPage, views.SitePushesPerPage)
	if err != nil {
		return err
	}
	pushes, more, err := s.sitePushPage(c, site, page, views.SitePushesPerPage)
	if err != nil {
		return err
	}
	refusal, err := s.store.PushRefusal(ctx, site.ID)
	if err != nil {
		return err
	}
	runs, err := s.store.Runs(ctx, historyPageRuns)
	if err != nil {
		return err
	}
	syncs, err := s.store.FeedSyncs(ctx, historyPageSyncs)
	if err != nil {
		return err
	}
	return renderOK(c, views.SiteHistory(views.SiteHistoryProps{Layout: layout(c), Refusal: refusal, Pushes: pushes,
		Page: page, More: more, Runs: siteRuns(runs, site.CreatedAt, leanRuns(c)), FeedSyncs: syncsSince(syncs, site.CreatedAt),
		PushedAt: site.PushedAt}))
}

// sitePushPage reads page (from 1) of site's pushes, perPage a page, and
// whether an older page exists.
func (s *Server) sitePushPage(c echo.Context, site store.Site, page, perPage int) ([]readmodel.SitePushRow, bool, error) {
	pushes, err := s.store.SitePushes(c.Request().Context(), site, perPage+1, (page-1)*perPage)
	if err != nil {
		return nil, false, err
	}
	if len(pushes) > perPage {
		return pushes[:perPage], true, nil
	}
	return pushes, false, nil
}

// siteRuns is the fleet's runs a registered site's history lists, newest
// first: those that started at or after since (the newest ones, up to
// the first that started before), without the document imports (an
// operator's import for one of the local site's sources, not a check of
// the fleet). For a principal that may not see the local site (lean),
// who asked and the error are left out: an operator's email and the
// local site's source in a failure are not the site's.
func siteRuns(runs []readmodel.RunRow, since time.Time, lean bool) []readmodel.RunRow {
	out := make([]readmodel.RunRow, 0, len(runs))
	for _, r := range runs {
		if r.StartedAt.Before(since) {
			break
		}
		if readmodel.Trigger(r.Trigger) == readmodel.TriggerImport {
			continue
		}
		if lean {
			r.Actor, r.Error = "", ""
		}
		out = append(out, r)
	}
	return out
}

// leanRuns reports whether c's principal may not see the local site, and
// so is shown the fleet's runs without who asked and their errors.
func leanRuns(c echo.Context) bool {
	p, _ := auth.PrincipalFrom(c)
	return !p.MaySee(store.LocalSite)
}

// syncsSince is the feed syncs, newest first, that started at or after
// since.
func syncsSince(syncs []readmodel.FeedSyncRow, since time.Time) []readmodel.FeedSyncRow {
	for i, r := range syncs {
		if r.StartedAt.Before(since) {
			return syncs[:i]
		}
	}
	return syncs
}

// siteHistoryJSON is GET /api/sites/{site}/history.
type siteHistoryJSON struct {
	Site string `json:"site"`
	// Refusal is the refused push that stands, null when the last push
	// was accepted; RefusalText says it as the pages do.
	Refusal     *readmodel.InputRefusal `json:"refusal"`
	RefusalText *string                 `json:"refusal_text"`
	Pushes      []sitePushJSON          `json:"pushes"`
	Runs        []runJSON               `json:"runs"`
	Page        int                     `json:"page"`
	PerPage     int                     `json:"per_page"`
	NextPage    *int                    `json:"next_page"`
}

// sitePushJSON is one accepted push, with what it changed in words.
type sitePushJSON struct {
	readmodel.SitePushRow
	Change string `json:"change"`
}

// apiSiteHistory is GET /api/sites/{site}/history: the site's pushes,
// newest first, and the fleet's runs started since it was registered,
// each list per_page rows (1–200, default 50) of page page (the runs
// within the newest maxHistoryRows, as /api/admin/history reads them);
// next_page is null when neither has more; and the refused push that
// stands.
func (s *Server) apiSiteHistory(c echo.Context) error {
	ctx, site := c.Request().Context(), siteOf(c)
	page, perPage, err := pageParams(c, 50, 200)
	if err != nil {
		return err
	}
	pushes, more, err := s.sitePushPage(c, site, page, perPage)
	if err != nil {
		return err
	}
	out := siteHistoryJSON{Site: site.Name, Pushes: make([]sitePushJSON, len(pushes)), Runs: []runJSON{}, Page: page, PerPage: perPage}
	for i, p := range pushes {
		out.Pushes[i] = sitePushJSON{SitePushRow: p, Change: readmodel.SitePushChangeText(p.TreeChange)}
	}
	// The runs within the newest maxHistoryRows, as /api/admin/history
	// pages them: a page past them lists none (the pushes go on).
	if first, end := (page-1)*perPage, min(page*perPage, maxHistoryRows); first < end {
		runs, err := s.store.Runs(ctx, end+1)
		if err != nil {
			return err
		}
		runs = siteRuns(runs, site.CreatedAt, leanRuns(c))
		more = more || len(runs) > end && end < maxHistoryRows
		for _, r := range runs[min(len(runs), first):min(len(runs), end)] {
			out.Runs = append(out.Runs, runBody(r))
		}
	}
	if more {
		out.NextPage = new(int)
		*out.NextPage = page + 1
	}
	if out.Refusal, err = s.store.PushRefusal(ctx, site.ID); err != nil {
		return err
	}
	if out.Refusal != nil {
		text := readmodel.SitePushRefusedText(time.Now(), *out.Refusal)
		out.RefusalText = &text
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, out)
}
