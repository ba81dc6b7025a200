package web

import (
	"errors"
	"github.com/upcheck/upcheck/internal/readmodel"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
	"github.com/upcheck/upcheck/views"
)

// skipRequest is the body of POST /api/admin/plugins/{code}/skip.
type skipRequest struct {
	Version string `json:"version"`
	Reason  string `json:"reason"`
}

// skipJSON is a component's skip as the API answers it.
type skipJSON struct {
	Version string `json:"version"`
	Reason  string `json:"reason"`
	// By is who skipped it, worded as the catalog and the detail word it
	// (readmodel.SkippedByText); null: a script with no user.
	By           *string   `json:"by"`
	At           time.Time `json:"at"`
	FromManifest bool      `json:"from_manifest"`
}

func skipBody(s store.Skip) skipJSON {
	return skipJSON{Version: s.Version, Reason: s.Reason, By: opt(readmodel.SkippedByText(s.By, s.FromManifest)), At: s.At,
		FromManifest: s.FromManifest}
}

// apiSkip is POST /api/admin/plugins/{code}/skip: the page's skip form
// (the same updatecheck.Skips and the same words for a refusal), answered
// with the skip (201). 404 for a component not installed, 409 when the
// manifest declares its skip, 422 for a version that cannot be skipped (a
// security release, one not newer than the installed version, one its
// source does not publish) or a missing reason.
func (s *Server) apiSkip(c echo.Context) error {
	code, err := pathParam(c, "code")
	if err != nil {
		return err
	}
	var req skipRequest
	if err := decodeJSONBody(c, &req); err != nil {
		return err
	}
	p, _ := auth.PrincipalFrom(c)
	out, err := updatecheck.NewSkips(s.checker).Skip(c.Request().Context(),
		updatecheck.SkipRequest{Site: siteOf(c).ID, Code: code, Version: req.Version, Reason: req.Reason, UserID: p.UserID, By: p.Email})
	if err != nil {
		return skipAPIError(err, code, req.Version)
	}
	return c.JSON(http.StatusCreated, skipBody(out))
}

// apiUnskip is DELETE /api/admin/plugins/{code}/skip: the page's unskip,
// answered with the skip it ended (200). 404 when the component is not
// installed or skips no version, 409 when the manifest declares its skip.
func (s *Server) apiUnskip(c echo.Context) error {
	code, err := pathParam(c, "code")
	if err != nil {
		return err
	}
	p, _ := auth.PrincipalFrom(c)
	out, err := updatecheck.NewSkips(s.checker).Unskip(c.Request().Context(), siteOf(c).ID, code, p.UserID, p.Email)
	if errors.Is(err, updatecheck.ErrNoSkip) {
		return echo.NewHTTPError(http.StatusNotFound, "“"+clip(code)+"” skips no version.").WithInternal(err)
	}
	if err != nil {
		return skipAPIError(err, code, "")
	}
	return c.JSON(http.StatusOK, skipBody(out))
}

// skipAPIError answers a refused skip or unskip in the page's words.
func skipAPIError(err error, code, version string) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return echo.NewHTTPError(http.StatusNotFound, views.UnknownComponentText(code)).WithInternal(err)
	case errors.Is(err, store.ErrFromManifest):
		return echo.NewHTTPError(http.StatusConflict, skipFromManifestText).WithInternal(err)
	}
	if words := skipErrorText(err, version); words != "" {
		return echo.NewHTTPError(http.StatusUnprocessableEntity, words).WithInternal(err)
	}
	return err
}
