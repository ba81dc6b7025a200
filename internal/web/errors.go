package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/static"
	"github.com/upcheck/upcheck/views"
)

// handleError is echo's single error handler: it maps an error to a status,
// and answers in JSON under /api/ (and for operations endpoints) or with an
// error page elsewhere. Users never see internal error text.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, message := classify(err)
	if status >= 500 {
		s.logger.ErrorContext(c.Request().Context(), "request failed", "method", c.Request().Method,
			"path", c.Path(), "status", status, "error", err)
	}
	if status == http.StatusServiceUnavailable {
		c.Response().Header().Set("Retry-After", "5")
	}
	var werr error
	switch {
	case c.Request().Method == http.MethodHead:
		werr = c.NoContent(status)
	case isAPI(c.Request()):
		werr = c.JSON(status, map[string]string{"error": message})
	default:
		werr = render(c, status, s.errorPage(c, status, message))
	}
	if werr != nil {
		s.logger.WarnContext(c.Request().Context(), "write error response", "error", werr)
	}
}

// errorPage is the page for an error. A signed-in user sees it inside the
// layout, navigation and account included, so a wrong link in the AdminCP
// (an unknown plugin, a page they may not see) leaves them where they were.
// Without a principal, on 503, or when the summary the layout reads cannot
// be had, it is the bare page, which needs neither session nor database.
func (s *Server) errorPage(c echo.Context, status int, message string) templ.Component {
	e := views.ErrorProps{Status: status, Message: message, Asset: static.Path}
	p, ok := auth.PrincipalFrom(c)
	if !ok || !p.Can(auth.PermView) || status == http.StatusServiceUnavailable {
		return views.ErrorPage(e)
	}
	if _, ok := c.Get(summaryKey).(readmodel.Summary); !ok && p.MaySee(store.LocalSite) {
		sum, err := s.reads.Summary(c.Request().Context())
		if err != nil {
			s.logger.WarnContext(c.Request().Context(), "error page without layout: summary unavailable", "error", err)
			return views.ErrorPage(e)
		}
		c.Set(summaryKey, sum)
	}
	return views.ErrorInLayout(layout(c), e)
}

// classify maps an error to a status and words safe to show.
func classify(err error) (int, string) {
	var he *echo.HTTPError
	var throttled *auth.ThrottledError
	switch {
	case errors.As(err, &he):
		if m, ok := he.Message.(string); ok {
			return he.Code, m
		}
		return he.Code, http.StatusText(he.Code)
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, auth.ErrUnavailable):
		// Never 401: a database outage must not look like a sign-out.
		return http.StatusServiceUnavailable, "The database is unavailable. Try again in a moment."
	case errors.As(err, &throttled):
		return http.StatusTooManyRequests, "Too many attempts. Try again in " + strconv.Itoa(int(throttled.RetryAfter.Seconds())) + " seconds."
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound, "Not found."
	case errors.Is(err, auth.ErrUnauthenticated):
		return http.StatusUnauthorized, "Sign in to continue."
	case errors.Is(err, auth.ErrForbidden):
		return http.StatusForbidden, "You do not have permission to do this."
	}
	return http.StatusInternalServerError, "Something went wrong on our side."
}

// isAPI reports whether r is answered in JSON, errors included: the API
// under /api/ and the operations endpoints, which scripts read.
func isAPI(r *http.Request) bool {
	p := r.URL.Path
	return strings.HasPrefix(p, "/api/") || p == pathHealthz || p == pathReadyz || p == pathMetrics
}
