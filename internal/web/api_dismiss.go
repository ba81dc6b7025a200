package web

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/views"
)

// dismissalRequest is the body of POST …/advisories/{id}/dismissal.
type dismissalRequest struct {
	Reason string `json:"reason"`
	// Expires is a date (YYYY-MM-DD), as the page's form takes it: the
	// dismissal holds to the end of that day, UTC; "" or absent: no end.
	Expires string `json:"expires"`
}

// apiDismiss is POST /api/admin/plugins/{code}/advisories/{id}/dismissal:
// the page's dismiss form (the same Dismissals.Dismiss and the same words
// for a refusal), answered with the dismissal (201).
func (s *Server) apiDismiss(c echo.Context) error {
	code, id, err := advisoryParams(c)
	if err != nil {
		return err
	}
	var req dismissalRequest
	if err := decodeJSONBody(c, &req); err != nil {
		return err
	}
	p, _ := auth.PrincipalFrom(c)
	d := store.NewDismissal{Site: siteOf(c).ID, Code: code, AdvisoryID: id, UserID: p.UserID, Reason: req.Reason}
	var words string
	if d.ExpiresAt, words = parseExpiry(strings.TrimSpace(req.Expires), time.Now()); words != "" {
		return echo.NewHTTPError(http.StatusUnprocessableEntity, words)
	}
	out, err := s.dismissals.Dismiss(c.Request().Context(), d)
	switch {
	case errors.Is(err, catalog.ErrNoSuchAdvisory):
		return echo.NewHTTPError(http.StatusNotFound, noSuchAdvisoryText(code, id)).WithInternal(err)
	case errors.Is(err, store.ErrNotFound):
		return echo.NewHTTPError(http.StatusNotFound, views.UnknownComponentText(code)).WithInternal(err)
	case errors.Is(err, store.ErrFromManifest):
		return echo.NewHTTPError(http.StatusConflict, dismissalFromManifestText).WithInternal(err)
	case err != nil:
		if words := dismissErrorText(err); words != "" {
			return echo.NewHTTPError(http.StatusUnprocessableEntity, words).WithInternal(err)
		}
		return err
	}
	return c.JSON(http.StatusCreated, dismissalBody(out))
}

// apiUndismiss is DELETE …/advisories/{id}/dismissal: the page's restore
// (Dismissals.Undismiss). 204 when a standing dismissal was ended; 404 when
// the component is not installed or the advisory has no standing
// dismissal.
func (s *Server) apiUndismiss(c echo.Context) error {
	code, id, err := advisoryParams(c)
	if err != nil {
		return err
	}
	ctx, site := c.Request().Context(), siteOf(c).ID
	if _, err := s.store.Component(ctx, site, code); errors.Is(err, store.ErrNotFound) {
		return echo.NewHTTPError(http.StatusNotFound, views.UnknownComponentText(code)).WithInternal(err)
	} else if err != nil {
		return err
	}
	standing, err := s.store.StandingDismissals(ctx, site, code)
	if err != nil {
		return err
	}
	if _, ok := standing[id]; !ok {
		return echo.NewHTTPError(http.StatusNotFound, "The advisory “"+clip(id)+"” of “"+clip(code)+"” has no standing dismissal.")
	}
	p, _ := auth.PrincipalFrom(c)
	if err := s.dismissals.Undismiss(ctx, site, code, id, p.UserID); errors.Is(err, store.ErrFromManifest) {
		return echo.NewHTTPError(http.StatusConflict, dismissalFromManifestText).WithInternal(err)
	} else if err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func noSuchAdvisoryText(code, id string) string {
	return "No advisory “" + clip(id) + "” affects the installed version of “" + clip(code) + "” now, so there is nothing to dismiss."
}

// clip shortens what a client sent before it is quoted back.
func clip(s string) string {
	if r := []rune(s); len(r) > 80 {
		return string(r[:79]) + "…"
	}
	return s
}
