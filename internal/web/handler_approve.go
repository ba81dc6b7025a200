package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
	"github.com/upcheck/upcheck/views"
)

// approveFormKey carries a refused approval form from approve to the
// detail page it renders (approvalSection reads it).
const approveFormKey = "upcheck.approve"

// approve approves what a version of the component brings, from the
// detail page's form (docs/policy.md "Approvals"). A refused form is
// answered with the page again (422), refilled, the error in words; an
// accepted one redirects to the page, which says what was approved.
func (s *Server) approve(c echo.Context) error {
	code, err := pathParam(c, "code")
	if err != nil {
		return err
	}
	form := views.ApproveForm{Version: c.FormValue("version"), Reason: c.FormValue("reason")}
	p, _ := auth.PrincipalFrom(c)
	a, err := updatecheck.NewApprovals(s.checker).Approve(c.Request().Context(),
		updatecheck.ApproveRequest{Site: siteOf(c).ID, Code: code, Version: form.Version, Reason: form.Reason, UserID: p.UserID, By: p.Email})
	if form.Error = approvalErrorText(err, form.Version); form.Error != "" {
		c.Set(approveFormKey, form)
		return s.renderDetail(c, http.StatusUnprocessableEntity, views.DismissForm{})
	}
	if err != nil {
		return err
	}
	return s.skipDone(c, code, "Approved what "+a.Version+" brings.")
}

// approvalErrorText words a refused approval; "" for an error that is not
// the operator's to correct.
func approvalErrorText(err error, version string) string {
	if r := updatecheck.ApprovalRefusalOf(err); r != "" {
		return readmodel.ApprovalRefusalText(r, clip(version), store.MaxReasonLength)
	}
	return ""
}

// approvalSection is the detail page's approval section for d: what
// awaits an approval (the stored registry facts), the approvals standing,
// and what the last post left.
func (s *Server) approvalSection(c echo.Context, d catalog.Detail, canManage bool) (views.ApprovalProps, error) {
	p := views.ApprovalProps{Site: viewSite(siteOf(c)), Code: d.Code, CanManage: canManage}
	if d.Registry != nil {
		p.Ask = d.Registry.Approval
	}
	standing, err := s.store.Approvals(c.Request().Context(), siteOf(c).ID, d.Code)
	if err != nil {
		return p, err
	}
	for _, a := range standing {
		p.Standing = append(p.Standing, views.ApprovalRow{Version: a.Version, Digest: a.Digest, Reason: a.Reason,
			By: readmodel.SkippedByText(a.By, a.FromManifest), FromManifest: a.FromManifest, At: a.At})
	}
	if f, ok := c.Get(approveFormKey).(views.ApproveForm); ok {
		p.Form = f
	}
	return p, nil
}
