package web

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
	"github.com/upcheck/upcheck/views"
)

// approveRequest is the body of POST /api/admin/plugins/{code}/approve.
type approveRequest struct {
	Version string `json:"version"`
	Reason  string `json:"reason"`
}

// approvalJSON is an approval as the API answers it.
type approvalJSON struct {
	Version      string    `json:"version"`
	Digest       string    `json:"digest"`
	Reason       string    `json:"reason"`
	By           *string   `json:"by"`
	At           time.Time `json:"at"`
	FromManifest bool      `json:"from_manifest"`
}

// apiApprove is POST /api/admin/plugins/{code}/approve: the page's
// approval form (the same updatecheck.Approvals and the same words for a
// refusal), answered with the approval (201). 404 for a component not
// installed, 422 for a missing reason or a version that brings nothing
// to approve.
func (s *Server) apiApprove(c echo.Context) error {
	code, err := pathParam(c, "code")
	if err != nil {
		return err
	}
	var req approveRequest
	if err := decodeJSONBody(c, &req); err != nil {
		return err
	}
	p, _ := auth.PrincipalFrom(c)
	a, err := updatecheck.NewApprovals(s.checker).Approve(c.Request().Context(),
		updatecheck.ApproveRequest{Site: siteOf(c).ID, Code: code, Version: req.Version, Reason: req.Reason, UserID: p.UserID, By: p.Email})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return echo.NewHTTPError(http.StatusNotFound, views.UnknownComponentText(code)).WithInternal(err)
	case err != nil:
		if words := approvalErrorText(err, req.Version); words != "" {
			return echo.NewHTTPError(http.StatusUnprocessableEntity, words).WithInternal(err)
		}
		return err
	}
	return c.JSON(http.StatusCreated, approvalJSON{Version: a.Version, Digest: a.Digest, Reason: a.Reason,
		By: opt(readmodel.SkippedByText(a.By, a.FromManifest)), At: a.At, FromManifest: a.FromManifest})
}
