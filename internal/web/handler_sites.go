package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/views"
)

// sitesPage is the Sites section: the sites the principal may see,
// pageSize a page (the Fleet's), searched by name or owner; for an admin,
// each site's rotate and remove, and the add form when the admin sees
// every site. A push token just made comes once, through the flash.
func (s *Server) sitesPage(c echo.Context) error {
	lp, err := siteListQuery(c, pageSize, pageSize)
	if err != nil {
		return err
	}
	sites, total, err := s.visibleSites(c, lp)
	if err != nil {
		return err
	}
	p, _ := auth.PrincipalFrom(c)
	props := views.SitesProps{Layout: layout(c), CanManage: p.Can(auth.PermSites), CanAdd: p.Can(auth.PermSites) && !p.Sites.Limited(),
		StaleAfter: s.siteStaleAfter, Query: lp.Search, Page: lp.Page, PageSize: lp.Limit, Total: total}
	if f, ok := s.takeFlash(c, views.PathAdminSites); ok {
		props.Notice, props.NoticeError = f.Notice, f.Values["refusal"]
		props.NewToken, props.NewTokenSite = f.Values["token"], f.Values["site"]
		if f.Error != "" {
			props.FormError = f.Error
			props.Form = views.SiteForm{Name: f.Values["name"], Owner: f.Values["owner"]}
		}
	}
	for _, site := range sites {
		props.Sites = append(props.Sites, views.SiteRow{Name: site.Name, Owner: site.Owner, Local: site.Local(),
			CreatedAt: site.CreatedAt, PushedAt: site.PushedAt, Stale: site.Stale})
	}
	return renderOK(c, views.Sites(props))
}

// addSite registers a site from the form and redirects to the section,
// which shows its push token once; a refusal redirects there too, with
// the form refilled.
func (s *Server) addSite(c echo.Context) error {
	name, owner := c.FormValue("name"), c.FormValue("owner")
	refused := func(msg string) error {
		return s.redirectWithFlash(c, views.PathAdminSites, flash{Error: msg, Values: map[string]string{"name": name, "owner": owner}})
	}
	if err := everySite(c); err != nil {
		return refused(siteAddLimitedText)
	}
	raw, site, err := s.auth.AddSite(c.Request().Context(), name, owner)
	if status, msg := siteRefusal(err); status != 0 {
		return refused(msg)
	}
	if err != nil {
		return err
	}
	return s.redirectWithFlash(c, views.PathAdminSites, flash{Notice: "Site " + site.Name + " registered.",
		Values: map[string]string{"token": raw, "site": site.Name}})
}

// rotateSitePage asks before a site's push token is replaced.
func (s *Server) rotateSitePage(c echo.Context) error {
	site, err := s.visibleSite(c)
	if err != nil {
		return err
	}
	if site.Local() {
		return s.redirectWithFlash(c, views.PathAdminSites, flash{Values: map[string]string{"refusal": siteLocalText}})
	}
	return renderOK(c, views.Confirm(views.ConfirmProps{
		Layout: layout(c), Nav: views.NavSites,
		Title: "Replace the push token of " + site.Name + "?",
		Question: "The site's deploy step pushes with its token: from now on it is refused until it is given the new one, " +
			"which is shown once, on the next page. Its installed tree and history stay.",
		Action: views.SiteRotatePath(site.Name), Button: "Replace the token", Cancel: views.PathAdminSites,
	}))
}

// rotateSite replaces the push token once the question was answered
// (confirmed=yes) and shows the new one once; a post without the answer
// is sent to the question.
func (s *Server) rotateSite(c echo.Context) error {
	site, err := s.visibleSite(c)
	if err != nil {
		return err
	}
	if c.FormValue("confirmed") != "yes" {
		return c.Redirect(http.StatusSeeOther, views.SiteRotatePath(site.Name))
	}
	raw, site, err := s.auth.RotateSiteToken(c.Request().Context(), site.Name)
	if _, msg := siteRefusal(err); msg != "" {
		return s.redirectWithFlash(c, views.PathAdminSites, flash{Values: map[string]string{"refusal": msg}})
	}
	if err != nil {
		return err
	}
	return s.redirectWithFlash(c, views.PathAdminSites, flash{Notice: "Push token of " + site.Name + " replaced: the old one no longer works.",
		Values: map[string]string{"token": raw, "site": site.Name}})
}

// removeSitePage asks before a registered site is removed.
func (s *Server) removeSitePage(c echo.Context) error {
	site, err := s.visibleSite(c)
	if err != nil {
		return err
	}
	if site.Local() {
		return s.redirectWithFlash(c, views.PathAdminSites, flash{Values: map[string]string{"refusal": siteLocalText}})
	}
	return renderOK(c, views.Confirm(views.ConfirmProps{
		Layout: layout(c), Nav: views.NavSites,
		Title: "Remove the site " + site.Name + "?",
		Question: "Its installed tree, its history and its findings are deleted, and its push token stops working. " +
			"This cannot be undone: registering it again starts with nothing.",
		Action: views.SiteRemovePath(site.Name), Button: "Remove the site", Cancel: views.PathAdminSites,
	}))
}

// removeSite removes a registered site once the question was answered.
func (s *Server) removeSite(c echo.Context) error {
	site, err := s.visibleSite(c)
	if err != nil {
		return err
	}
	if c.FormValue("confirmed") != "yes" {
		return c.Redirect(http.StatusSeeOther, views.SiteRemovePath(site.Name))
	}
	site, err = s.auth.RemoveSite(c.Request().Context(), site.Name)
	if _, msg := siteRefusal(err); msg != "" {
		return s.redirectWithFlash(c, views.PathAdminSites, flash{Values: map[string]string{"refusal": msg}})
	}
	if err != nil {
		return err
	}
	return s.redirectWithFlash(c, views.PathAdminSites, flash{Notice: "Site " + site.Name + " removed."})
}
