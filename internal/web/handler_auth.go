package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/static"
	"github.com/upcheck/upcheck/views"
)

func (s *Server) loginPage(c echo.Context) error {
	if _, ok := auth.PrincipalFrom(c); ok {
		return c.Redirect(http.StatusSeeOther, auth.SafeNext(c.QueryParam("next")))
	}
	return renderOK(c, views.Login(views.LoginProps{Next: auth.SafeNext(c.QueryParam("next")), Asset: static.Path}))
}

// login signs in with a fresh session id (never one from before the login)
// and sends the user where they were going, on this site only.
func (s *Server) login(c echo.Context) error {
	email := strings.TrimSpace(c.FormValue("email"))
	next := auth.SafeNext(c.FormValue("next"))
	if len(email) > 320 || len(c.FormValue("password")) > 1024 {
		return echo.NewHTTPError(http.StatusBadRequest, "email or password too long")
	}
	token, session, err := s.auth.Login(c.Request().Context(), email, c.FormValue("password"), c.RealIP(), c.Request().UserAgent())
	var throttled *auth.ThrottledError
	switch {
	case errors.Is(err, auth.ErrInvalidCredentials):
		return render(c, http.StatusUnauthorized, views.Login(views.LoginProps{
			Error: "Wrong email or password.", Email: email, Next: next, Asset: static.Path}))
	case errors.As(err, &throttled):
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(throttled.RetryAfter.Seconds())))
		return render(c, http.StatusTooManyRequests, views.Login(views.LoginProps{
			Error: "Too many failed attempts. Try again in a few minutes.", Email: email, Next: next, Asset: static.Path}))
	case err != nil:
		return err
	}
	setSessionCookie(c, s.auth, token, session.ExpiresAt)
	return c.Redirect(http.StatusSeeOther, next)
}

func (s *Server) logout(c echo.Context) error {
	p, _ := auth.PrincipalFrom(c)
	if p.SessionID != "" {
		if err := s.auth.Logout(c.Request().Context(), p.SessionID); err != nil {
			return err
		}
	}
	clearSessionCookie(c, s.auth)
	return c.Redirect(http.StatusSeeOther, views.PathLogin)
}
