package web

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
	"github.com/upcheck/upcheck/views"
)

// apiSummary is GET /api/admin/plugins/updates/summary: stored results
// only, the same readmodel.Summary the pages render (withSummary).
func (s *Server) apiSummary(c echo.Context) error {
	body, err := s.reads.SummaryJSON(c.Request().Context())
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSONBlob(http.StatusOK, body)
}

// maxPageSize bounds one catalog read.
const maxPageSize = 500

// apiCatalog is GET /api/admin/plugins/updates: the catalog as JSON, with
// the same filter and paging parameters as the page (status, q, page,
// per_page), and the keyset cursor after: "next" of the page before.
func (s *Server) apiCatalog(c echo.Context) error {
	f, page, err := catalogQuery(c, maxPageSize)
	if err != nil {
		return err
	}
	if v := c.QueryParam("after"); v != "" {
		if c.QueryParam("page") != "" {
			return echo.NewHTTPError(http.StatusBadRequest, "after and page cannot be used together")
		}
		cur, ok := decodeCursor(v)
		if !ok {
			return echo.NewHTTPError(http.StatusBadRequest, "after must be the next value of an earlier page")
		}
		f.After, page = &cur, 0
	}
	// One row more than the page tells whether a next page exists.
	f.Limit++
	ctx := c.Request().Context()
	site := siteOf(c)
	snap, err := s.reads.SiteSnapshot(ctx, site.ID)
	if err != nil {
		return err
	}
	build := func() ([]byte, error) {
		entries, counts, err := snap.Page(f)
		if err != nil {
			return nil, err
		}
		return catalogJSON(entries, counts.Of(f.Status), f.Limit-1, page)
	}
	// The local site's answers are kept for many requests (fragments); a
	// registered site's is made for each, so that it never takes the
	// local site's place there.
	var body []byte
	if site.Local() {
		body, err = s.fragments.get(snap, keyOf("api", f, 0), build)
	} else {
		body, err = build()
	}
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSONBlob(http.StatusOK, body)
}

// catalogJSON is the catalog API's answer: up to limit entries (one more
// means a next page exists), the number matching, and page when the
// request was numbered.
func catalogJSON(entries []store.CatalogEntry, total, limit, page int) ([]byte, error) {
	var next *string
	if len(entries) > limit {
		entries = entries[:limit]
		v := encodeCursor(entries[len(entries)-1].Cursor)
		next = &v
	}
	out := make([]catalogEntry, len(entries))
	for i, e := range entries {
		out[i] = catalogBody(e.CatalogRow)
		var err error
		if out[i].Advisories, err = advisoriesFacts(out[i].Advisories); err != nil {
			return nil, err
		}
	}
	body := map[string]any{"components": out, "total": total, "per_page": limit, "next": next}
	if page > 0 {
		body["page"] = page
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(body); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encodeCursor is a row's place in the catalog as an opaque URL-safe
// string: base64url of the JSON array [rank, lower(name), code].
func encodeCursor(cur store.CatalogCursor) string {
	b, _ := json.Marshal([]any{cur.Rank, cur.Name, cur.Code})
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor reads what encodeCursor wrote, with any rank the catalog
// gives (readmodel.IsCatalogRank); false for anything else.
func decodeCursor(v string) (store.CatalogCursor, bool) {
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(b) > 2048 {
		return store.CatalogCursor{}, false
	}
	var parts []json.RawMessage
	var cur store.CatalogCursor
	if json.Unmarshal(b, &parts) != nil || len(parts) != 3 ||
		json.Unmarshal(parts[0], &cur.Rank) != nil || json.Unmarshal(parts[1], &cur.Name) != nil ||
		json.Unmarshal(parts[2], &cur.Code) != nil || cur.Code == "" || !readmodel.IsCatalogRank(cur.Rank) {
		return store.CatalogCursor{}, false
	}
	return cur, true
}

// catalogQuery reads and checks the catalog's filter and paging parameters.
func catalogQuery(c echo.Context, defaultSize int) (store.CatalogFilter, int, error) {
	f := store.CatalogFilter{Status: readmodel.Filter(c.QueryParam("status")), Search: c.QueryParam("q"), Limit: defaultSize}
	if !f.Status.Valid() {
		names := make([]string, 0, len(readmodel.CatalogFilters)-1)
		for _, name := range readmodel.CatalogFilters[1:] {
			names = append(names, string(name))
		}
		return f, 0, echo.NewHTTPError(http.StatusBadRequest, "status must be one of "+strings.Join(names, ", "))
	}
	if len(f.Search) > 200 {
		return f, 0, echo.NewHTTPError(http.StatusBadRequest, "q is too long")
	}
	page := 1
	if v := c.QueryParam("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1_000_000 {
			return f, 0, echo.NewHTTPError(http.StatusBadRequest, "page must be a positive number")
		}
		page = n
	}
	if v := c.QueryParam("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPageSize {
			return f, 0, echo.NewHTTPError(http.StatusBadRequest, "per_page must be between 1 and 500")
		}
		f.Limit = n
	}
	f.Offset = (page - 1) * f.Limit
	return f, page, nil
}

// apiCheck is POST /api/admin/plugins/updates/check: the manual check.
func (s *Server) apiCheck(c echo.Context) error {
	res, err := s.runManualCheck(c)
	if err != nil {
		return err
	}
	// message is the outcome in the words the dashboard says without
	// JavaScript (views.CheckOutcomeMessage): app.js shows it as it is.
	message := func(status readmodel.CheckStatus) string {
		return views.CheckOutcomeMessage(views.CheckOutcome{Status: string(status), Fetched: res.Fetched, NotModified: res.NotModified,
			Failed: res.Failed, RetryAfter: res.RetryAfter, Cooldown: s.checker.Cooldown()})
	}
	switch res.Status {
	case updatecheck.Completed, updatecheck.CompletedWithFailures:
		return c.JSON(http.StatusOK, struct {
			updatecheck.Result
			Message string `json:"message"`
		}{res, message(res.Status)})
	case updatecheck.LeaseLost:
		return c.JSON(http.StatusConflict, map[string]any{"status": readmodel.StatusInterrupted, "run_id": res.RunID,
			"message": message(readmodel.StatusInterrupted)})
	case updatecheck.Busy:
		return c.JSON(http.StatusConflict, map[string]any{"status": updatecheck.Busy, "message": message(res.Status)})
	case updatecheck.Cooldown:
		c.Response().Header().Set("Retry-After", strconv.Itoa(res.RetryAfter))
		return c.JSON(http.StatusTooManyRequests, map[string]any{"status": updatecheck.Cooldown, "retry_after": res.RetryAfter,
			"message": message(res.Status)})
	case updatecheck.Cancelled:
		return c.JSON(http.StatusServiceUnavailable, map[string]any{"status": updatecheck.Cancelled, "message": message(res.Status)})
	}
	return c.JSON(http.StatusInternalServerError, map[string]any{"status": res.Status, "run_id": res.RunID, "message": message(res.Status)})
}

// runManualCheck runs the check under the server's context, not the
// request's: a closed tab must not cancel a check, a shutdown must.
func (s *Server) runManualCheck(c echo.Context) (updatecheck.Result, error) {
	p, _ := auth.PrincipalFrom(c)
	return s.checker.RunLockedUpdateCheck(s.ctx, lease.Manual, p.Email)
}

// opt maps "" to a JSON null.
func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
