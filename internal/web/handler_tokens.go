package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
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
	p.Layout = layout(c)
	for _, t := range tokens {
		p.Tokens = append(p.Tokens, views.TokenRow{ID: t.ID, Name: t.Name, OwnerEmail: t.OwnerEmail,
			CreatedAt: t.CreatedAt, LastUsedAt: t.LastUsedAt, Revoked: t.Revoked, Expired: t.Expired})
	}
	for _, u := range users {
		if !u.Disabled {
			p.Owners = append(p.Owners, views.TokenOwner{Email: u.Email, Role: u.Role})
		}
	}
	return render(c, status, views.Tokens(p))
}

// createToken creates a token for the chosen account and redirects to the
// tokens page, which shows the secret once (a flash: never in a URL, gone
// on reload).
func (s *Server) createToken(c echo.Context) error {
	owner := c.FormValue("owner")
	raw, err := s.auth.CreateToken(c.Request().Context(), owner, c.FormValue("name"))
	if msg := createTokenRefusal(err); msg != "" {
		return s.redirectWithFlash(c, views.PathTokens, flash{Error: msg})
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
	case errors.Is(err, store.ErrNotFound):
		return "The token was not created: that account does not exist (any more)."
	case errors.Is(err, auth.ErrDisabled):
		return "The token was not created: that account is disabled."
	}
	return ""
}

func (s *Server) revokeToken(c echo.Context) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "token id must be a number")
	}
	if err := s.auth.RevokeToken(c.Request().Context(), id); err != nil {
		return err
	}
	return s.redirectWithFlash(c, views.PathTokens, flash{Notice: "Token revoked: it no longer works."})
}
