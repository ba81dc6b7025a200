package web

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
	"github.com/upcheck/upcheck/views"
)

// skipFormKey carries a refused skip form, or a notice for a request that
// cannot carry a flash, from the skip handlers to the detail page they
// render (skipSection reads it).
const skipFormKey = "upcheck.skip"

// skipAnswer is what a skip post leaves for the page it renders.
type skipAnswer struct {
	form   views.SkipForm
	notice string
}

// skip skips a version of the component, from the detail page's form
// (docs/policy.md "Skips"). A refused form is answered with the page
// again (422), the form open and refilled and the error in words; an
// accepted one redirects to the page, which says what was skipped
// (its skip section words what a skip does).
func (s *Server) skip(c echo.Context) error {
	code, err := pathParam(c, "code")
	if err != nil {
		return err
	}
	form := views.SkipForm{Version: c.FormValue("version"), Reason: c.FormValue("reason")}
	p, _ := auth.PrincipalFrom(c)
	sk, err := updatecheck.NewSkips(s.checker).Skip(c.Request().Context(),
		updatecheck.SkipRequest{Site: siteOf(c).ID, Code: code, Version: form.Version, Reason: form.Reason, UserID: p.UserID, By: p.Email})
	if form.Error = skipErrorText(err, form.Version); form.Error != "" {
		c.Set(skipFormKey, skipAnswer{form: form})
		return s.renderDetail(c, http.StatusUnprocessableEntity, views.DismissForm{})
	}
	if err != nil {
		return err
	}
	return s.skipDone(c, code, "Skipped "+sk.Version+".")
}

// unskip ends the component's skip: the skipped version is offered again
// if it is the newest the policy allows. Nothing is lost that a new skip
// cannot bring back, so it does not ask first, as restoring a dismissed
// advisory does not.
func (s *Server) unskip(c echo.Context) error {
	code, err := pathParam(c, "code")
	if err != nil {
		return err
	}
	p, _ := auth.PrincipalFrom(c)
	sk, err := updatecheck.NewSkips(s.checker).Unskip(c.Request().Context(), siteOf(c).ID, code, p.UserID, p.Email)
	switch {
	case errors.Is(err, updatecheck.ErrNoSkip):
		return s.skipDone(c, code, "No version is skipped: there was nothing to end.")
	case errors.Is(err, store.ErrFromManifest):
		c.Set(skipFormKey, skipAnswer{form: views.SkipForm{Error: skipFromManifestText}})
		return s.renderDetail(c, http.StatusUnprocessableEntity, views.DismissForm{})
	case err != nil:
		return err
	}
	return s.skipDone(c, code, sk.Version+" is no longer skipped: it is offered again if it is the newest release this site takes.")
}

// skipDone answers an accepted post: a redirect to the detail page with
// the notice in the flash, or, for a request without a browser session
// (an API token cannot carry a flash), the page itself with the notice,
// not cached.
func (s *Server) skipDone(c echo.Context, code, notice string) error {
	if s.auth.SessionToken(c.Request()) != "" {
		return s.redirectWithFlash(c, componentPath(c, code), flash{Notice: notice})
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	c.Set(skipFormKey, skipAnswer{notice: notice})
	return s.renderDetail(c, http.StatusOK, views.DismissForm{})
}

// componentPath is the page of the request's site's component code
// (siteOf): where its forms' posts lead back to.
func componentPath(c echo.Context, code string) string {
	return views.SiteComponentPath(viewSite(siteOf(c)), code)
}

// skipSection is the detail page's skip section for d: the standing skip
// (as the page's policy facts read it), the offered update the form
// presets, and what the last post left (a refused form, or a notice from
// the flash).
func (s *Server) skipSection(c echo.Context, d catalog.Detail, standing *views.DetailSkip, canManage bool) views.SkipProps {
	p := views.SkipProps{Site: viewSite(siteOf(c)), Code: d.Code, CanManage: canManage, Standing: standing}
	if a, ok := c.Get(skipFormKey).(skipAnswer); ok {
		p.Form, p.Notice = a.form, a.notice
	} else if f, ok := s.takeFlash(c, componentPath(c, d.Code)); ok {
		p.Notice = f.Notice
	}
	if d.Update != nil {
		p.Offer, p.OfferSecurity = d.Update.Version, updateIsSecurity(d)
	}
	return p
}

// updateIsSecurity: the offered update is a security release for the site
// (its publisher's mark, or the release that clears an advisory of the
// installed version, as the offer marks it), which updatecheck.Skips
// refuses to skip: no skip form is offered for it.
func updateIsSecurity(d catalog.Detail) bool {
	if d.Update == nil {
		return false
	}
	for _, r := range d.Releases {
		if r.Version == d.Update.Version && (r.Security || r.SecurityFix) {
			return true
		}
	}
	return d.Update.Security
}

// skipFromManifestText is why a skip the manifest declares cannot be
// changed here.
var skipFromManifestText = readmodel.SkipRefusalText(readmodel.SkipFromManifest, "", store.MaxReasonLength)

// skipErrorText words why a skip was refused (readmodel.SkipRefusalText);
// "" when it was not, or when the error is not the operator's to correct
// (it is then answered as any other error).
func skipErrorText(err error, version string) string {
	if r := updatecheck.SkipRefusalOf(err); r != "" {
		return readmodel.SkipRefusalText(r, clip(version), store.MaxReasonLength)
	}
	return ""
}
