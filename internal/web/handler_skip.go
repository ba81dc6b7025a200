package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/catalog"
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
		updatecheck.SkipRequest{Code: code, Version: form.Version, Reason: form.Reason, UserID: p.UserID, By: p.Email})
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
	sk, err := updatecheck.NewSkips(s.checker).Unskip(c.Request().Context(), code, p.UserID, p.Email)
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
		return s.redirectWithFlash(c, views.ComponentPath(code), flash{Notice: notice})
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	c.Set(skipFormKey, skipAnswer{notice: notice})
	return s.renderDetail(c, http.StatusOK, views.DismissForm{})
}

// skipSection is the detail page's skip section for d: the standing skip
// (as the page's policy facts read it), the offered update the form
// presets, and what the last post left (a refused form, or a notice from
// the flash).
func (s *Server) skipSection(c echo.Context, d catalog.Detail, standing *views.DetailSkip, canManage bool) views.SkipProps {
	p := views.SkipProps{Code: d.Code, CanManage: canManage, Standing: standing}
	if a, ok := c.Get(skipFormKey).(skipAnswer); ok {
		p.Form, p.Notice = a.form, a.notice
	} else if f, ok := s.takeFlash(c, views.ComponentPath(d.Code)); ok {
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

const skipFromManifestText = "The manifest declares this component’s skip, so it is reviewed with the site’s code: change it in the manifest, and sync the components."

// skipErrorText words why a skip was refused; "" when it was not, or when
// the error is not the operator's to correct (it is then answered as any
// other error).
func skipErrorText(err error, version string) string {
	v := "“" + clip(version) + "”"
	switch {
	case err == nil:
		return ""
	case errors.Is(err, store.ErrReasonRequired):
		return "Give a reason for skipping this version: it is shown with the skip and kept in the audit log."
	case errors.Is(err, store.ErrReasonTooLong):
		return "The reason is too long: keep it to " + strconv.Itoa(store.MaxReasonLength) + " characters."
	case errors.Is(err, store.ErrFromManifest):
		return skipFromManifestText
	case errors.Is(err, updatecheck.ErrSkipNotAVersion):
		return v + " is not a version: write it as the release list does, such as 2.4.0."
	case errors.Is(err, updatecheck.ErrSkipNotNewer):
		return v + " is not newer than the installed version: it is not offered anyway."
	case errors.Is(err, updatecheck.ErrSkipNoSuchRelease):
		return "The update source publishes no release " + v + ": pick one from the releases listed below."
	case errors.Is(err, updatecheck.ErrSkipPrerelease):
		return v + " is a pre-release, which is not offered to a site on a stable release: there is nothing to skip."
	case errors.Is(err, updatecheck.ErrSkipWayOut):
		return v + " is the only way out of a known malicious or exploited advisory of the installed version (the oldest release it does not affect), which cannot be skipped: dismiss the advisory, with a reason, to accept the risk."
	case errors.Is(err, updatecheck.ErrSkipSecurity):
		return v + " is a security release for this site, which cannot be skipped. To accept the risk of one of its advisories, dismiss the advisory, with a reason."
	case errors.Is(err, updatecheck.ErrSkipNotEvaluated):
		return "The releases of this component are not known now (see the top of the page), so no version can be skipped. Try again after the next check."
	}
	return ""
}
