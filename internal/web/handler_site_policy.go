package web

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/views"
)

// sitePolicyProps is the policy section of site's overview: the policy in
// words for every viewer, the form for an admin (sites.can_manage), and
// the form's answer from the flash.
func (s *Server) sitePolicyProps(c echo.Context, site store.Site) (views.SitePolicyProps, error) {
	pol, err := s.checker.SitePolicy(c.Request().Context(), site)
	if err != nil {
		return views.SitePolicyProps{}, err
	}
	out := views.SitePolicyProps{Text: views.PolicyText(policyView(pol))}
	if p, _ := auth.PrincipalFrom(c); p.Can(auth.PermSites) {
		out.Form = &views.SitePolicyForm{Offer: string(pol.Offer), Soak: pol.Soak, Hold: pol.Hold, Approve: pol.Approve == release.ApproveScripts}
	}
	if f, ok := s.takeFlash(c, views.SitePath(site.Name)); ok {
		out.Notice, out.Error = f.Notice, f.Error
		if f.Error != "" && out.Form != nil {
			out.Form = &views.SitePolicyForm{Offer: f.Values["offer"], Soak: f.Values["soak"], Hold: f.Values["hold"],
				Approve: f.Values["approve"] == release.ApproveScripts}
		}
	}
	return out, nil
}

// setSitePolicyForm is the overview's policy form: the members it sets,
// read by the manifest's parser as the API's body is, answered with a
// redirect to the overview with a notice, or the parser's refusal and
// the form refilled.
func (s *Server) setSitePolicyForm(c echo.Context) error {
	site, err := s.visibleSite(c)
	if err != nil {
		return err
	}
	if site.Local() {
		return s.redirectWithFlash(c, views.PathAdminSites, flash{Values: map[string]string{"refusal": sitePolicyLocalText}})
	}
	members := map[string]string{}
	for _, name := range []string{"offer", "soak", "hold", "approve"} {
		if v := strings.TrimSpace(c.FormValue(name)); v != "" {
			members[name] = v
		}
	}
	body, err := json.Marshal(members)
	if err != nil {
		return err
	}
	page := views.SitePath(site.Name)
	rep, err := s.setSitePolicy(c, site, body)
	if _, msg := sitePolicyRefusal(err); msg != "" {
		return s.redirectWithFlash(c, page, flash{Error: msg, Values: members})
	}
	if err != nil {
		return err
	}
	notice := "Update policy of " + site.Name + ": " + views.PolicyText(policyView(rep.Policy)) + "."
	switch {
	case rep.Unchanged:
		notice += " It was the policy already."
	case rep.Components > 0:
		notice += " " + strconv.Itoa(rep.Reevaluated) + " of its " + strconv.Itoa(rep.Components) +
			" components were evaluated under it; the others at the next check."
	}
	return s.redirectWithFlash(c, page, flash{Notice: notice})
}
