package web

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// Sites as JSON (docs/design.md "Many sites"): a principal lists the
// sites it may see; an admin registers, rotates and removes them. A push
// token is in the answer that made it, never anywhere else.

// siteJSON is a site as GET /api/admin/sites lists it.
type siteJSON struct {
	Name  string `json:"name"`
	Owner string `json:"owner"`
	// Local: the site upcheck runs beside (no push token, never removed).
	Local       bool       `json:"local"`
	CreatedAt   time.Time  `json:"created_at"`
	TokenMadeAt *time.Time `json:"token_made_at"`
	PushedAt    *time.Time `json:"pushed_at"`
	Stale       bool       `json:"stale"`
	// Push is the site's push in words (readmodel.SitePushText).
	Push string `json:"push"`
}

// siteWithTokenJSON is the answer that made a push token: shown this once.
type siteWithTokenJSON struct {
	siteJSON
	PushToken string `json:"push_token"`
}

// siteRequest is the body of POST /api/admin/sites.
type siteRequest struct {
	Name  string `json:"name"`
	Owner string `json:"owner"`
}

func siteBody(s store.Site, now time.Time) siteJSON {
	push := readmodel.SiteLocalPushText
	if !s.Local() {
		push = readmodel.SitePushText(now, s.PushedAt, s.Stale)
	}
	return siteJSON{Name: s.Name, Owner: s.Owner, Local: s.Local(), CreatedAt: s.CreatedAt, TokenMadeAt: s.TokenMadeAt,
		PushedAt: s.PushedAt, Stale: s.Stale, Push: push}
}

// visibleSites is one page of the sites the request's principal may see
// (fleetScope), as lp asks, the local site first, then by name; total:
// how many the scope and search hold.
func (s *Server) visibleSites(c echo.Context, lp siteList) (sites []store.Site, total int, err error) {
	return s.store.SitePage(c.Request().Context(), store.SiteFilter{Scope: fleetScope(c), Search: lp.Search,
		StaleAfter: s.siteStaleAfter, Offset: lp.Offset, Limit: lp.Limit})
}

// visibleSite is the site of the route's :site when the principal may see
// it; store.ErrNotFound (404) alike when there is none and when it may
// not see it, so that the answer tells nothing of other sites.
func (s *Server) visibleSite(c echo.Context) (store.Site, error) {
	site, err := s.store.SiteByName(c.Request().Context(), c.Param("site"), s.siteStaleAfter)
	if err != nil {
		return store.Site{}, err
	}
	if p, _ := auth.PrincipalFrom(c); !p.MaySee(site.ID) {
		return store.Site{}, store.ErrNotFound
	}
	return site, nil
}

// everySite refuses a principal limited to some sites a registration: it
// would not see the site it made.
func everySite(c echo.Context) error {
	if p, _ := auth.PrincipalFrom(c); p.Sites.Limited() {
		return echo.NewHTTPError(http.StatusForbidden, siteAddLimitedText).WithInternal(auth.ErrForbidden)
	}
	return nil
}

// The refusals of the sites' writes, in words, for the API and the page.
const (
	siteAddLimitedText = "A user or token limited to some sites cannot register a site: ask an admin who sees every site."
	siteLocalText      = "The local site (the one upcheck runs beside) has no push token and cannot be removed."
	siteTakenText      = "A site of that name is registered already."
	siteNameText       = "A site's name is 1 to 63 lower-case letters, digits and hyphens, starting and ending with a letter or digit."
	siteOwnerText      = "A site's owner is at most 200 characters, without control characters."
)

// siteRefusal words why a site write was refused, with its status; 0
// when the error is not the request's fault.
func siteRefusal(err error) (int, string) {
	switch {
	case errors.Is(err, auth.ErrInvalidSiteName):
		return http.StatusUnprocessableEntity, siteNameText
	case errors.Is(err, auth.ErrInvalidSiteOwner):
		return http.StatusUnprocessableEntity, siteOwnerText
	case errors.Is(err, store.ErrConflict):
		return http.StatusConflict, siteTakenText
	case errors.Is(err, auth.ErrLocalSite):
		return http.StatusConflict, siteLocalText
	}
	return 0, ""
}

// apiSites is GET /api/admin/sites: one page of the sites the principal
// may see whose name or owner holds q, the local one first, then by name,
// per_page (1–500, default 100) and page (from 1), as the Fleet API
// pages; more: a next page exists; total: how many sites in all. Never a
// push token: only their hashes are stored.
func (s *Server) apiSites(c echo.Context) error {
	lp, err := siteListQuery(c, 100, maxPageSize)
	if err != nil {
		return err
	}
	sites, total, err := s.visibleSites(c, lp)
	if err != nil {
		return err
	}
	now := time.Now()
	out := make([]siteJSON, len(sites))
	for i, site := range sites {
		out[i] = siteBody(site, now)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, map[string]any{"sites": out, "page": lp.Page, "per_page": lp.Limit,
		"more": lp.Offset+len(sites) < total, "total": total, "stale_after_seconds": int64(s.siteStaleAfter / time.Second)})
}

// apiAddSite is POST /api/admin/sites: 201 with the site and its push
// token, shown this once.
func (s *Server) apiAddSite(c echo.Context) error {
	if err := everySite(c); err != nil {
		return err
	}
	var req siteRequest
	if err := decodeJSONBody(c, &req); err != nil {
		return err
	}
	raw, site, err := s.auth.AddSite(c.Request().Context(), req.Name, req.Owner)
	if status, msg := siteRefusal(err); status != 0 {
		return echo.NewHTTPError(status, msg).WithInternal(err)
	}
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusCreated, siteWithTokenJSON{siteJSON: siteBody(site, time.Now()), PushToken: raw})
}

// apiRotateSite is POST /api/admin/sites/{site}/rotate: 200 with the site
// and its new push token, shown this once; the old one no longer works.
func (s *Server) apiRotateSite(c echo.Context) error {
	site, err := s.visibleSite(c)
	if err != nil {
		return err
	}
	raw, site, err := s.auth.RotateSiteToken(c.Request().Context(), site.Name)
	if status, msg := siteRefusal(err); status != 0 {
		return echo.NewHTTPError(status, msg).WithInternal(err)
	}
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, siteWithTokenJSON{siteJSON: siteBody(site, time.Now()), PushToken: raw})
}

// apiRemoveSite is DELETE /api/admin/sites/{site}: 200 with the site
// removed (its installed tree and history went with it); 409 for the
// local site.
func (s *Server) apiRemoveSite(c echo.Context) error {
	site, err := s.visibleSite(c)
	if err != nil {
		return err
	}
	site, err = s.auth.RemoveSite(c.Request().Context(), site.Name)
	if status, msg := siteRefusal(err); status != 0 {
		return echo.NewHTTPError(status, msg).WithInternal(err)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"removed": siteBody(site, time.Now())})
}

// userSitesJSON is a user's sites as GET and PUT
// /api/admin/users/{email}/sites answer: limited, and the names of its
// sites ([] when it sees every site).
type userSitesJSON struct {
	Email   string   `json:"email"`
	Limited bool     `json:"limited"`
	Sites   []string `json:"sites"`
}

// userSitesRequest is the body of PUT /api/admin/users/{email}/sites:
// the sites the user may see, or all.
type userSitesRequest struct {
	Sites []string `json:"sites"`
	All   bool     `json:"all"`
}

func userSitesBody(us auth.UserSites) userSitesJSON {
	sites := us.Sites
	if sites == nil {
		sites = []string{}
	}
	return userSitesJSON{Email: us.User.Email, Limited: us.Limited, Sites: sites}
}

// apiUserSites is GET /api/admin/users/{email}/sites: which sites a user
// may see. For an admin who sees every site (who sees what is every
// site's concern).
func (s *Server) apiUserSites(c echo.Context) error {
	if err := everySite(c); err != nil {
		return err
	}
	us, err := s.auth.UserSiteLimit(c.Request().Context(), c.Param("email"))
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, userSitesBody(us))
}

// apiSetUserSites is PUT /api/admin/users/{email}/sites: limit a user to
// some sites, or let them see every site again (all); audited as
// user.sites. 422 for an unknown site, an empty list, or both.
func (s *Server) apiSetUserSites(c echo.Context) error {
	if err := everySite(c); err != nil {
		return err
	}
	var req userSitesRequest
	if err := decodeJSONBody(c, &req); err != nil {
		return err
	}
	if req.All && len(req.Sites) > 0 {
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "Give sites or all, not both.")
	}
	us, err := s.auth.SetUserSites(c.Request().Context(), c.Param("email"), req.All, req.Sites)
	switch {
	case errors.Is(err, auth.ErrUnknownSite):
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "No site has one of the names in sites.").WithInternal(err)
	case errors.Is(err, auth.ErrNoSites):
		return echo.NewHTTPError(http.StatusUnprocessableEntity, "Name at least one site, or give all: true.").WithInternal(err)
	case err != nil:
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, userSitesBody(us))
}
