package web

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/views"
)

// The middleware below applies internal/auth's decisions to echo's
// requests: auth says who a request acts as and whether it may go on, this
// file turns that into the principal in the request's context and into
// status codes, redirects and headers.

// contentSecurityPolicy is what securityHeaders sends: only this origin's
// scripts, styles and connections, no framing, no <base> and no form posts
// elsewhere, so that an injected tag can neither run nor leak.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// setPrincipal makes p the request's principal (auth.PrincipalFrom reads
// it). authenticate calls it; tests of handlers can call it instead of
// logging in.
func setPrincipal(c echo.Context, p auth.Principal) {
	r := c.Request()
	c.SetRequest(r.WithContext(auth.WithPrincipal(r.Context(), p)))
}

// authenticate finds who a request acts as and leaves it for
// auth.PrincipalFrom: an "Authorization: Bearer" API token when the header
// is there, the session cookie (auth.Config.CookieName) otherwise. A request
// without valid credentials goes on anonymous; the routes' require decides
// whether that is enough. A database that does not answer stops the request
// with 503, so that an outage never looks like a logout (401 or a redirect
// to the login page).
func authenticate(svc *auth.Service) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ctx := c.Request().Context()
			if raw, ok := auth.BearerToken(c.Request()); ok {
				// A request that names a token is judged by it alone; a
				// cookie it also carries is not a fallback.
				p, err := svc.AuthenticateToken(ctx, raw)
				switch {
				case err == nil:
					setPrincipal(c, p)
				case errors.Is(err, auth.ErrTokenExpired):
					// Said at once, so that its owner learns why it stopped.
					return tokenRequired(c, err)
				case !errors.Is(err, auth.ErrUnauthenticated):
					return httpError(err)
				}
				return next(c)
			}
			token := svc.SessionToken(c.Request())
			if token == "" {
				return next(c)
			}
			p, err := svc.Authenticate(ctx, token)
			switch {
			case err == nil:
				setPrincipal(c, p)
			case errors.Is(err, auth.ErrUnauthenticated):
				// The browser may stop sending a cookie that opens nothing.
				clearSessionCookie(c, svc)
			default:
				return httpError(err)
			}
			return next(c)
		}
	}
}

// httpError turns an authentication failure that is not the client's into
// the answer the web layer should give: 503 while the database is out of
// reach. The error stays inside (errors.Is(err, auth.ErrUnavailable) holds).
func httpError(err error) error {
	if errors.Is(err, auth.ErrUnavailable) {
		return echo.NewHTTPError(http.StatusServiceUnavailable, "service unavailable").WithInternal(err)
	}
	return err
}

// require lets a request through only with a principal that has perm.
// Without a principal an API request (isAPI) gets 401 (with
// WWW-Authenticate) and a page is redirected (303) to the login page, with
// next=<path> for GET and HEAD (a login cannot replay a POST); with one
// that lacks perm, 403. The errors are *echo.HTTPError wrapping
// auth.ErrUnauthenticated or auth.ErrForbidden.
func require(perm string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			p, ok := auth.PrincipalFrom(c)
			if !ok {
				if isAPI(c.Request()) {
					c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="upcheck"`)
					return echo.NewHTTPError(http.StatusUnauthorized, "authentication required").WithInternal(auth.ErrUnauthenticated)
				}
				return c.Redirect(http.StatusSeeOther, loginURL(c.Request()))
			}
			if !p.Can(perm) {
				return forbidden(p, perm)
			}
			return next(c)
		}
	}
}

// requireToken lets a request through only with an API token
// ("Authorization: Bearer upc_…") whose user has perm, whatever else it
// carries: it guards what machines read, such as /metrics for Prometheus,
// and a browser session is not such a reader's credential. Without a valid
// token the answer is 401 with WWW-Authenticate; with one that lacks perm,
// 403; while the database cannot tell, 503, never 401. It needs no
// authenticate before it.
func requireToken(svc *auth.Service, perm string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			raw, ok := auth.BearerToken(c.Request())
			if !ok {
				return tokenRequired(c, auth.ErrUnauthenticated)
			}
			p, err := svc.AuthenticateToken(c.Request().Context(), raw)
			switch {
			case errors.Is(err, auth.ErrUnauthenticated):
				return tokenRequired(c, err)
			case err != nil:
				return httpError(err)
			case !p.Can(perm):
				return forbidden(p, perm)
			}
			setPrincipal(c, p)
			return next(c)
		}
	}
}

// tokenRequired is the 401 of a request without a usable API token; for an
// expired one it says so (and RFC 6750's invalid_token).
func tokenRequired(c echo.Context, err error) error {
	if errors.Is(err, auth.ErrTokenExpired) {
		c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="upcheck", error="invalid_token", error_description="the token expired"`)
		return echo.NewHTTPError(http.StatusUnauthorized, "This API token expired: an admin can create a new one.").WithInternal(err)
	}
	c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="upcheck"`)
	return echo.NewHTTPError(http.StatusUnauthorized, "API token required").WithInternal(err)
}

func forbidden(p auth.Principal, perm string) error {
	message := "forbidden"
	if p.ReadOnlyRefuses(perm) {
		message = "This API token is read-only: it can read, not change anything."
	}
	return echo.NewHTTPError(http.StatusForbidden, message).
		WithInternal(fmt.Errorf("%w: role %q lacks %s (read-only token: %v)", auth.ErrForbidden, p.Role, perm, p.ReadOnly))
}

func loginURL(r *http.Request) string {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return views.PathLogin
	}
	return views.PathLogin + "?next=" + url.QueryEscape(r.URL.RequestURI())
}

// csrf refuses forged state changes as auth.CheckCSRF decides: a request
// from another site, or a session's without its CSRF token. Every refusal
// is a 403 *echo.HTTPError wrapping auth.ErrForbidden. Place it after
// authenticate.
func csrf() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := readForm(c); err != nil {
				return err
			}
			if err := auth.CheckCSRF(c.Request()); err != nil {
				return forgery(err)
			}
			return next(c)
		}
	}
}

// sameOrigin refuses a state change from another site, as
// auth.CheckSameOrigin decides, for routes that have no session to carry a
// CSRF token yet: the login form.
func sameOrigin() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := auth.CheckSameOrigin(c.Request()); err != nil {
				return forgery(err)
			}
			if err := readForm(c); err != nil {
				return err
			}
			return next(c)
		}
	}
}

// forgery is the 403 of csrf and sameOrigin.
func forgery(err error) error {
	message := "missing or invalid CSRF token"
	switch {
	case errors.Is(err, auth.ErrCrossSite):
		message = "cross-site request refused"
	case errors.Is(err, auth.ErrReadOnly):
		message = "This API token is read-only: it can read, not change anything."
	}
	return echo.NewHTTPError(http.StatusForbidden, message).WithInternal(err)
}

// setSessionCookie sends the session token (from Login) as svc's session
// cookie (auth.Service.SessionCookie).
func setSessionCookie(c echo.Context, svc *auth.Service, token string, expires time.Time) {
	c.SetCookie(svc.SessionCookie(token, expires, c.IsTLS()))
}

// clearSessionCookie tells the browser to drop the session cookie.
func clearSessionCookie(c echo.Context, svc *auth.Service) {
	c.SetCookie(svc.ExpiredSessionCookie(c.IsTLS()))
}

// securityHeaders sets the browser protections every response carries:
// contentSecurityPolicy, no MIME sniffing, no framing, no referrer leaving
// the site, and a browsing context of its own.
func securityHeaders() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Response().Header()
			h.Set(echo.HeaderContentSecurityPolicy, contentSecurityPolicy)
			h.Set(echo.HeaderXContentTypeOptions, "nosniff")
			h.Set(echo.HeaderXFrameOptions, "DENY")
			h.Set(echo.HeaderReferrerPolicy, "same-origin")
			h.Set("Cross-Origin-Opener-Policy", "same-origin")
			return next(c)
		}
	}
}

// bodyLimit caps every request body at limit bytes, or at the limit of its
// route ("METHOD path" in routes, an upload), and answers 413 in words when
// a body is larger: at once when it announces so (Content-Length), and
// when a read finds out, which a chunked body leaves to the reader.
//
// A form (urlencoded or multipart) is read whole by readForm, which csrf
// and sameOrigin call first: after the request's principal and
// permission were judged, so nobody's form is parsed before they are
// known to be allowed to send it. Any other body (JSON) is read by its
// handler: when that read hit the limit the handler's error becomes the
// 413.
func bodyLimit(limit int64, routes map[string]int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			n := limit
			if l, ok := routes[r.Method+" "+c.Path()]; ok {
				n = l
			}
			if r.ContentLength > n {
				return tooLarge(n, nil)
			}
			body := &limitedBody{ReadCloser: http.MaxBytesReader(c.Response(), r.Body, n), limit: n}
			r.Body = body
			err := next(c)
			if err != nil && body.exceeded {
				return tooLarge(n, err)
			}
			return err
		}
	}
}

// tooLarge is bodyLimit's 413 for a body over n bytes.
func tooLarge(n int64, err error) error {
	return echo.NewHTTPError(http.StatusRequestEntityTooLarge,
		"The upload is larger than upcheck accepts ("+strconv.FormatInt(n>>10, 10)+" KiB at most).").WithInternal(err)
}

// limitedBody remembers whether a read of its http.MaxBytesReader went
// past the limit, whoever read it and whatever they did with the error.
type limitedBody struct {
	io.ReadCloser
	limit    int64
	exceeded bool
}

// readForm reads a form (urlencoded or multipart) whole, or answers 413:
// net/http's FormValue, which the CSRF check and the handlers call, drops
// the error of a read cut off at the limit and answers as if the fields
// were missing, which would turn an oversized form into a 403 or a 400,
// or let a handler act on an empty form. The parse costs no more than the
// limit of its route (bodyLimit).
func readForm(c echo.Context) error {
	r := c.Request()
	err := parseForm(r)
	if b, ok := r.Body.(*limitedBody); ok && b.exceeded {
		return tooLarge(b.limit, err)
	}
	return nil
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		b.exceeded = true
	}
	return n, err
}

// formMemory is how much of a multipart form stays in memory (the rest goes
// to temporary files): net/http's own default, which FormValue uses.
const formMemory = 32 << 20

// parseForm reads the body of a form posted to r, as FormValue would. Its
// errors are the handlers' to see (they find the fields missing), except
// the limit's, which limitedBody records.
func parseForm(r *http.Request) error {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		return nil
	}
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType))
	switch mediaType {
	case echo.MIMEApplicationForm:
		return r.ParseForm()
	case echo.MIMEMultipartForm:
		return r.ParseMultipartForm(formMemory)
	}
	return nil
}

// localSite lets a request about the site upcheck runs beside through only
// for a principal that may see it (auth.Principal.MaySee of
// store.LocalSite): every page and API route outside the sites' own
// (/admin/sites, /api/admin/sites, /sites/…, /api/sites/…). Any other
// principal gets the 404 of an unknown path, not a 403: a principal
// limited to other sites learns nothing of the local site, not even that
// its pages are there (docs/design.md "Who sees what"). A request without
// a principal goes on, to the 401 or the login page of require after it.
// The request is then about the local site (siteOf).
func localSite() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if p, ok := auth.PrincipalFrom(c); ok && !p.MaySee(store.LocalSite) {
				return echo.ErrNotFound
			}
			c.Set(siteKey, localSiteRef)
			return next(c)
		}
	}
}
