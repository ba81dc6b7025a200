package web

import (
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
	"github.com/upcheck/upcheck/views"
)

// A registered site's own update policy (docs/design.md "Many sites",
// docs/policy.md): read and set by an admin who may see the site, as JSON
// (GET and PUT /api/admin/sites/{site}/policy) and on the site's overview
// page; the manifest's parser reads it (updatecheck.Checker.SetSitePolicy).

// sitePolicyLocalText refuses a policy of the local site, whose policy is
// its manifest's.
const sitePolicyLocalText = "The local site's policy is its manifest's \"policy\" (for a lockfile, components sync --policy " +
	"or UPCHECK_LOCKFILE_POLICY): it is not set here."

// sitePolicyJSON is a registered site's policy as GET and PUT
// /api/admin/sites/{site}/policy answer it: as a manifest's "policy"
// holds it ({} the default), whether it is the default, and in words; a
// PUT adds what it did.
type sitePolicyJSON struct {
	Site    string         `json:"site"`
	Policy  release.Policy `json:"policy"`
	Default bool           `json:"default"`
	Text    string         `json:"text"`
	// Unchanged, Components and Reevaluated are a PUT's
	// (updatecheck.SitePolicyReport).
	Unchanged   *bool `json:"unchanged,omitempty"`
	Components  *int  `json:"components,omitempty"`
	Reevaluated *int  `json:"reevaluated,omitempty"`
}

func sitePolicyBody(site string, p release.Policy) sitePolicyJSON {
	return sitePolicyJSON{Site: site, Policy: p, Default: p.IsZero(), Text: views.PolicyText(policyView(p))}
}

// sitePolicyRefusal words why a policy was refused, with its status; 0
// when the error is not the request's fault. A malformed policy is said
// in the manifest parser's words.
func sitePolicyRefusal(err error) (int, string) {
	var pe *updatecheck.SitePolicyError
	switch {
	case errors.As(err, &pe):
		return http.StatusUnprocessableEntity, pe.Error()
	case errors.Is(err, updatecheck.ErrSitePolicyLocal):
		return http.StatusConflict, sitePolicyLocalText
	}
	return 0, ""
}

// apiSitePolicy is GET /api/admin/sites/{site}/policy; 409 for the local
// site.
func (s *Server) apiSitePolicy(c echo.Context) error {
	site, err := s.visibleSite(c)
	if err != nil {
		return err
	}
	p, err := s.checker.SitePolicy(c.Request().Context(), site)
	if status, msg := sitePolicyRefusal(err); status != 0 {
		return echo.NewHTTPError(status, msg).WithInternal(err)
	}
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, sitePolicyBody(site.Name, p))
}

// apiSetSitePolicy is PUT /api/admin/sites/{site}/policy: the body is the
// policy, as a manifest's "policy" holds it ({} the default); the site's
// components are evaluated under it at once. 422 with the parser's words
// for a policy it refuses (nothing is written), 409 for the local site.
func (s *Server) apiSetSitePolicy(c echo.Context) error {
	site, err := s.visibleSite(c)
	if err != nil {
		return err
	}
	mt, _, err := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	if err != nil || mt != echo.MIMEApplicationJSON {
		return echo.NewHTTPError(http.StatusUnsupportedMediaType, "Send the body as JSON, with Content-Type: application/json.")
	}
	body, err := io.ReadAll(c.Request().Body) // bodyLimit caps it
	if err != nil {
		return err
	}
	rep, err := s.setSitePolicy(c, site, body)
	if status, msg := sitePolicyRefusal(err); status != 0 {
		return echo.NewHTTPError(status, msg).WithInternal(err)
	}
	if err != nil {
		return err
	}
	out := sitePolicyBody(site.Name, rep.Policy)
	out.Unchanged, out.Components, out.Reevaluated = &rep.Unchanged, &rep.Components, &rep.Reevaluated
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, out)
}

// setSitePolicy sets site's policy to body for the request's principal.
func (s *Server) setSitePolicy(c echo.Context, site store.Site, body []byte) (updatecheck.SitePolicyReport, error) {
	p, _ := auth.PrincipalFrom(c)
	return s.checker.SetSitePolicy(c.Request().Context(), updatecheck.SitePolicyRequest{Site: site, Body: body, UserID: p.UserID})
}
