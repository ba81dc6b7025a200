package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/views"
)

// requireSession lets only a browser session through: an API token cannot
// list, create or revoke API tokens, so a leaked token can neither mint its
// own successor nor revoke the others. Place it after require.
func requireSession() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if p, _ := auth.PrincipalFrom(c); p.ViaToken {
				return echo.NewHTTPError(http.StatusForbidden, "API tokens are managed from a signed-in browser session, not with an API token").
					WithInternal(auth.ErrForbidden)
			}
			return next(c)
		}
	}
}

func (s *Server) tokensPage(c echo.Context) error {
	p := views.TokensProps{}
	if f, ok := s.takeFlash(c, views.PathTokens); ok {
		p.Notice, p.FormError = f.Notice, f.Error
		p.NewToken, p.NewTokenOwner = f.Values["token"], f.Values["owner"]
		if f.Error != "" {
			p.Form = views.TokenForm{Name: f.Values["name"], Owner: f.Values["owner"],
				ReadOnly: f.Values["read_only"] == "yes", Expires: f.Values["expires"], Sites: f.Values["sites"]}
		}
	}
	return s.renderTokens(c, http.StatusOK, p)
}

// renderTokens renders the section with what p already says (a new
// secret, a form error).
func (s *Server) renderTokens(c echo.Context, status int, p views.TokensProps) error {
	ctx := c.Request().Context()
	tokens, err := s.auth.Tokens(ctx, "")
	if err != nil {
		return err
	}
	users, err := s.store.Users(ctx)
	if err != nil {
		return err
	}
	sites, err := s.auth.TokenSites(ctx)
	if err != nil {
		return err
	}
	p.Layout = layout(c)
	for _, t := range tokens {
		p.Tokens = append(p.Tokens, views.TokenRow{ID: t.ID, Name: t.Name, OwnerEmail: t.OwnerEmail,
			CreatedAt: t.CreatedAt, LastUsedAt: t.LastUsedAt, ExpiresAt: t.ExpiresAt, ReadOnly: t.ReadOnly,
			Revoked: t.Revoked, Expired: t.Expired, SitesLimited: t.SitesLimited, Sites: sites[t.ID]})
	}
	for _, u := range users {
		if !u.Disabled {
			p.Owners = append(p.Owners, views.TokenOwner{Email: u.Email, Role: u.Role})
		}
	}
	return render(c, status, views.Tokens(p))
}

// createToken creates a token for the chosen account, with the chosen
// scope (read_only=yes) and expiry (expires: a views.TokenLifetimes value,
// read by auth.ParseTokenLifetime), and redirects to the tokens page, which
// shows the secret once (a flash: never in a URL, gone on reload). A
// refusal redirects there too, with the form refilled.
func (s *Server) createToken(c echo.Context) error {
	owner, name, readOnly, expires, sites := c.FormValue("owner"), c.FormValue("name"), c.FormValue("read_only"), c.FormValue("expires"), c.FormValue("sites")
	refused := func(msg string) error {
		return s.redirectWithFlash(c, views.PathTokens, flash{Error: msg,
			Values: map[string]string{"name": name, "owner": owner, "read_only": readOnly, "expires": expires, "sites": sites}})
	}
	if expires == "" {
		// A form without the field (an older page) gets what the form preselects.
		expires = views.DefaultTokenLifetime
	}
	lifetime, err := auth.ParseTokenLifetime(expires)
	if err != nil {
		return refused(createTokenRefusal(err))
	}
	raw, _, err := s.auth.CreateTokenFor(c.Request().Context(), auth.TokenRequest{
		Email: owner, Name: name, ReadOnly: readOnly == "yes", Expires: lifetime, Sites: siteNames(sites),
	})
	if msg := createTokenRefusal(err); msg != "" {
		return refused(msg)
	}
	if err != nil {
		return err
	}
	return s.redirectWithFlash(c, views.PathTokens, flash{Values: map[string]string{"token": raw, "owner": owner}})
}

// createTokenRefusal words why a token was not created, or "" when the
// error is not the form's fault.
func createTokenRefusal(err error) string {
	switch {
	case errors.Is(err, auth.ErrInvalidTokenName):
		return "The token was not created: the name must be at most 100 characters, without control characters."
	case errors.Is(err, auth.ErrInvalidTokenLifetime):
		return "The token was not created: choose when it expires from the list."
	case errors.Is(err, store.ErrNotFound):
		return "The token was not created: that account does not exist (any more)."
	case errors.Is(err, auth.ErrDisabled):
		return "The token was not created: that account is disabled."
	case errors.Is(err, auth.ErrUnknownSite):
		return "The token was not created: no site has one of the names under Sites."
	case errors.Is(err, auth.ErrSitesBeyondOwner):
		return "The token was not created: it can be limited only to sites its account may see."
	}
	return ""
}

// siteNames reads a comma-separated list of site names; nil for none.
func siteNames(list string) []string {
	var names []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	return names
}

// tokenID reads the :id of a token route.
func tokenID(c echo.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return 0, echo.NewHTTPError(http.StatusBadRequest, "The token id must be a number.")
	}
	return id, nil
}

// revokeTokenPage asks before a token is revoked: the question names the
// token, its owner and what stops working; its form posts the revocation
// with confirmed=yes. A token that no longer works needs no question.
func (s *Server) revokeTokenPage(c echo.Context) error {
	id, err := tokenID(c)
	if err != nil {
		return err
	}
	t, err := s.auth.Token(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if t.Revoked || t.Expired {
		state := "revoked"
		if !t.Revoked {
			state = "expired"
		}
		return s.redirectWithFlash(c, views.PathTokens, flash{Notice: "The token " + t.Name + " of " + t.OwnerEmail + " is " + state + " already: it does not work."})
	}
	used := "It has never been used."
	if t.LastUsedAt != nil {
		used = "It was last used at " + readmodel.TimeText(*t.LastUsedAt) + "."
	}
	return renderOK(c, views.Confirm(views.ConfirmProps{
		Layout: layout(c), Nav: views.NavTokens,
		Title: "Revoke the token " + t.Name + " of " + t.OwnerEmail + "?",
		Question: used + " Whatever uses it is refused from its next request on (within a second on other instances). " +
			"A revoked token cannot be brought back: its user would need a new one.",
		Action: views.TokenRevokePath(id), Button: "Revoke the token", Cancel: views.PathTokens,
	}))
}

// revokeToken revokes a token once the question was answered
// (confirmed=yes); a post without the answer is sent to the question.
func (s *Server) revokeToken(c echo.Context) error {
	id, err := tokenID(c)
	if err != nil {
		return err
	}
	if c.FormValue("confirmed") != "yes" {
		return c.Redirect(http.StatusSeeOther, views.TokenRevokePath(id))
	}
	ctx := c.Request().Context()
	t, err := s.auth.Token(ctx, id)
	if err != nil {
		return err
	}
	if err := s.auth.RevokeToken(ctx, id); err != nil {
		return err
	}
	return s.redirectWithFlash(c, views.PathTokens, flash{Notice: "Token " + t.Name + " of " + t.OwnerEmail + " revoked: it no longer works."})
}
