package web

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// pathPush is where a registered site's deploy step pushes its lockfile
// (docs/design.md "Many sites"); outside /api/admin: no session and no API
// token is asked, only the site's push token.
const pathPush = "/api/sites/:site/lockfile"

// Words of a refused push.
const (
	pushNoTokenText    = "Push with the site's push token: Authorization: Bearer ups_…."
	pushOtherSiteText  = "This push token is another site's."
	pushNameText       = "Say the lockfile's name with ?name=: package-lock.json, npm-shrinkwrap.json or pnpm-lock.yaml."
	pushUnreadableText = "The push's body could not be read."
)

// apiPush is PUT /api/sites/{site}/lockfile: the site's push token
// (Authorization: Bearer) authenticates it, the body is the lockfile, its
// kind said by ?name= (updatecheck.PushFiles). The lockfile is read whole
// before anything is written: a malformed one is refused with 422, the
// site's stored tree stays as it was (updatecheck.Checker.Push) and the
// refusal stands on the site's pages until a push is accepted
// (store.Executor.PushRefused).
func (s *Server) apiPush(c echo.Context) error {
	ctx := c.Request().Context()
	raw, ok := strings.CutPrefix(c.Request().Header.Get(echo.HeaderAuthorization), "Bearer ")
	if !ok {
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="upcheck push"`)
		return echo.NewHTTPError(http.StatusUnauthorized, pushNoTokenText)
	}
	site, err := s.auth.AuthenticatePush(ctx, strings.TrimSpace(raw))
	if errors.Is(err, auth.ErrUnauthenticated) {
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="upcheck push"`)
		return echo.NewHTTPError(http.StatusUnauthorized, pushNoTokenText).WithInternal(err)
	}
	if err != nil {
		return err
	}
	if site.Name != c.Param("site") {
		return echo.NewHTTPError(http.StatusForbidden, pushOtherSiteText)
	}
	name := c.QueryParam("name")
	if !validPushFile(name) {
		return echo.NewHTTPError(http.StatusBadRequest, pushNameText)
	}
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, pushUnreadableText).WithInternal(err)
	}
	rep, err := s.checker.Push(ctx, site, name, body)
	switch {
	case errors.Is(err, updatecheck.ErrPushInvalid):
		// The site's refused push, in the answer's words, until its next
		// push is accepted (one row per site however often it is refused).
		text := refusedLockfileText(err)
		if rerr := s.store.PushRefused(ctx, site.ID, site.PushedAt, name, text); rerr != nil {
			return rerr
		}
		return echo.NewHTTPError(http.StatusUnprocessableEntity, text).WithInternal(err)
	case errors.Is(err, updatecheck.ErrPushName):
		return echo.NewHTTPError(http.StatusBadRequest, pushNameText).WithInternal(err)
	case err != nil:
		return err
	}
	return c.JSON(http.StatusOK, rep)
}

// refusedLockfileText is why a pushed lockfile was refused, as the
// lockfile's reader says it (its line and field), at most 500 characters.
func refusedLockfileText(err error) string {
	if r := []rune(err.Error()); len(r) > 500 {
		return string(r[:499]) + "…"
	}
	return err.Error()
}

func validPushFile(name string) bool {
	for _, f := range updatecheck.PushFiles {
		if f == name {
			return true
		}
	}
	return false
}
