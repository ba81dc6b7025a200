package web

import (
	"errors"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/views"
)

// The Users section (docs/design.md "Who sees what"): every account and
// the sites it may see, set by an admin who sees every site with the
// same auth.Service.SetUserSites as PUT /api/admin/users/{email}/sites.

// usersPage lists every account with its sites.
func (s *Server) usersPage(c echo.Context) error {
	if err := everySite(c); err != nil {
		return err
	}
	ctx := c.Request().Context()
	users, err := s.store.Users(ctx)
	if err != nil {
		return err
	}
	props := views.UsersProps{Layout: layout(c)}
	if f, ok := s.takeFlash(c, views.PathUsers); ok {
		props.Notice, props.NoticeError = f.Notice, f.Error
	}
	for _, u := range users {
		us, err := s.auth.UserSiteLimit(ctx, u.Email)
		if err != nil {
			return err
		}
		props.Users = append(props.Users, views.UserRow{Email: u.Email, Role: u.Role, Disabled: u.Disabled, Limited: us.Limited, Sites: us.Sites})
	}
	return renderOK(c, views.Users(props))
}

// userSitesPage is the form that sets a user's sites: every site, or a
// checked list of every registered site and the local one.
func (s *Server) userSitesPage(c echo.Context) error {
	if err := everySite(c); err != nil {
		return err
	}
	email, err := pathParam(c, "email")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	us, err := s.auth.UserSiteLimit(ctx, email)
	if err != nil {
		return err
	}
	sites, err := s.store.Sites(ctx, s.siteStaleAfter)
	if err != nil {
		return err
	}
	props := views.UserSitesProps{Layout: layout(c), User: views.UserRow{Email: us.User.Email, Role: us.User.Role,
		Disabled: us.User.Disabled, Limited: us.Limited, Sites: us.Sites}}
	for _, site := range sites {
		props.Choices = append(props.Choices, views.UserSiteChoice{Name: site.Name, Owner: site.Owner,
			Checked: us.Limited && slices.Contains(us.Sites, site.Name)})
	}
	return renderOK(c, views.UserSites(props))
}

// setUserSites sets a user's sites from the form (scope=all, or
// scope=some with the sites checked) and redirects to the Users section
// with a notice, or a refusal in words; audited as user.sites.
func (s *Server) setUserSites(c echo.Context) error {
	if err := everySite(c); err != nil {
		return err
	}
	email, err := pathParam(c, "email")
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return err
	}
	all := form.Get("scope") == "all"
	var names []string
	if !all {
		names = form["sites"]
	}
	us, err := s.auth.SetUserSites(c.Request().Context(), email, all, names)
	var refusal string
	switch {
	case errors.Is(err, auth.ErrNoSites):
		refusal = "The sites of " + email + " were not changed: check at least one site, or choose every site."
	case errors.Is(err, auth.ErrUnknownSite):
		refusal = "The sites of " + email + " were not changed: one of the sites checked is no longer registered."
	case err != nil:
		return err
	}
	if refusal != "" {
		return s.redirectWithFlash(c, views.PathUsers, flash{Error: refusal})
	}
	notice := us.User.Email + " now sees every site."
	if us.Limited {
		notice = us.User.Email + " now sees only " + strings.Join(us.Sites, ", ") + "."
	}
	return s.redirectWithFlash(c, views.PathUsers, flash{Notice: notice})
}
