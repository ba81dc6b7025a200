package web

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/views"
)

// The history, Source health and the audit log as JSON: the same store
// reads as their pages.

// maxHistoryRows is how many history rows the API pages through: as many
// as the runs the history reads (store.Runs folds the newest 2000 runs).
const maxHistoryRows = 2000

// apiHistory is GET /api/admin/history: the check history, newest first,
// per_page rows (1–200, default 50) of page page; next_page is null on
// the last page.
func (s *Server) apiHistory(c echo.Context) error {
	page, perPage, err := pageParams(c, 50, 200)
	if err != nil {
		return err
	}
	if page*perPage > maxHistoryRows {
		return echo.NewHTTPError(http.StatusBadRequest, "The history keeps its newest "+strconv.Itoa(maxHistoryRows)+" rows: ask for a page within them.")
	}
	runs, err := s.store.Runs(c.Request().Context(), page*perPage+1)
	if err != nil {
		return err
	}
	var next *int
	if len(runs) > page*perPage {
		runs, next = runs[:page*perPage], new(int)
		*next = page + 1
	}
	runs = runs[min(len(runs), (page-1)*perPage):]
	out := make([]runJSON, len(runs))
	for i, r := range runs {
		out[i] = runBody(r)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, map[string]any{"runs": out, "page": page, "per_page": perPage, "next_page": next})
}

// pageParams reads page (from 1) and per_page (1 to max, default def).
func pageParams(c echo.Context, def, max int) (page, perPage int, err error) {
	page, perPage = 1, def
	if v := c.QueryParam(views.ParamPage); v != "" {
		if page, err = strconv.Atoi(v); err != nil || page < 1 || page > 1_000_000 {
			return 0, 0, echo.NewHTTPError(http.StatusBadRequest, "page must be a number from 1.")
		}
	}
	if v := c.QueryParam("per_page"); v != "" {
		if perPage, err = strconv.Atoi(v); err != nil || perPage < 1 || perPage > max {
			return 0, 0, echo.NewHTTPError(http.StatusBadRequest, "per_page must be a number from 1 to "+strconv.Itoa(max)+".")
		}
	}
	return page, perPage, nil
}

// apiSources is GET /api/admin/sources and GET /api/sites/{site}/sources:
// the sources the site's components use (siteOf), failing ones first, as
// Source health lists them.
func (s *Server) apiSources(c echo.Context) error {
	sources, err := s.store.SiteSourceHealth(c.Request().Context(), siteOf(c).ID)
	if err != nil {
		return err
	}
	out := make([]sourceJSON, len(sources))
	for i, src := range sources {
		out[i] = sourceBody(src)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, map[string]any{"sources": out})
}

// auditJSON is one entry of the audit log, with the CSV's members.
type auditJSON struct {
	At        time.Time       `json:"at"`
	Kind      string          `json:"kind"`
	Action    string          `json:"action"`
	Actor     *string         `json:"actor"`
	Component *string         `json:"component"`
	Advisory  *string         `json:"advisory"`
	Reason    *string         `json:"reason"`
	ExpiresAt *time.Time      `json:"expires_at"`
	Trigger   *string         `json:"trigger"`
	Status    *string         `json:"status"`
	Detail    json.RawMessage `json:"detail"`
}

// apiAudit is GET /api/admin/audit: the audit log, newest first, with the
// page's kind filter and paging (per_page 1–500, default 50).
func (s *Server) apiAudit(c echo.Context) error {
	kind, err := auditKind(c)
	if err != nil {
		return err
	}
	page, perPage, err := pageParams(c, auditPageSize, 500)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	total, err := s.store.AuditEventCount(ctx, kind)
	if err != nil {
		return err
	}
	events, err := s.store.AuditEvents(ctx, kind, perPage, (page-1)*perPage)
	if err != nil {
		return err
	}
	out := make([]auditJSON, len(events))
	for i, e := range events {
		out[i] = auditJSON{At: e.At, Kind: e.Kind, Action: e.Action, Actor: opt(e.Actor), Component: opt(e.Component),
			Advisory: opt(e.Advisory), Reason: opt(e.Reason), ExpiresAt: e.ExpiresAt, Trigger: opt(e.Trigger),
			Status: opt(e.Status), Detail: auditDetail(e)}
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, map[string]any{"entries": out, "kind": opt(kind), "page": page, "per_page": perPage, "total": total})
}

// auditDetail is an entry's JSON detail as an object; {} when it has none.
func auditDetail(e readmodel.AuditRow) json.RawMessage {
	var m map[string]any
	if len(e.Detail) == 0 || json.Unmarshal(e.Detail, &m) != nil || m == nil {
		return json.RawMessage(`{}`)
	}
	return e.Detail
}
