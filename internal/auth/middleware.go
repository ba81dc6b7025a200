package auth

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// principalKey is where Middleware leaves the Principal in echo's context.
const principalKey = "upcheck.auth.principal"

// CSRF token carriers: a header for scripts, a form field for HTML forms.
const (
	CSRFHeader    = "X-CSRF-Token"
	CSRFFormField = "csrf_token"
)

// ContentSecurityPolicy is what SecurityHeaders sends: only this origin's
// scripts, styles and connections, no framing, no <base> and no form posts
// elsewhere, so that an injected tag can neither run nor leak.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// PrincipalFrom returns the request's principal, if Middleware found one.
func PrincipalFrom(c echo.Context) (Principal, bool) {
	p, ok := c.Get(principalKey).(Principal)
	return p, ok
}

// SetPrincipal makes p the request's principal. Middleware calls it; tests
// of handlers can call it instead of logging in.
func SetPrincipal(c echo.Context, p Principal) { c.Set(principalKey, p) }

// Middleware finds who a request acts as and leaves it for PrincipalFrom:
// an "Authorization: Bearer" API token when the header is there, the session
// cookie otherwise. A request without valid credentials goes on anonymous;
// the routes' Require decides whether that is enough. A database that does
// not answer stops the request with 503, so that an outage never looks like
// a logout (401 or a redirect to the login page).
//
// cookieName must be Config.CookieName, or empty for it: the cookie helpers
// write that name, and a mismatch would lose every login, so it panics at
// set-up instead.
func (s *Service) Middleware(cookieName string) echo.MiddlewareFunc {
	if cookieName == "" {
		cookieName = s.cfg.CookieName
	}
	if cookieName != s.cfg.CookieName {
		panic(fmt.Sprintf("auth: Middleware cookie %q differs from Config.CookieName %q", cookieName, s.cfg.CookieName))
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ctx := c.Request().Context()
			if raw, ok := bearerToken(c.Request()); ok {
				// A request that names a token is judged by it alone; a
				// cookie it also carries is not a fallback.
				p, err := s.AuthenticateToken(ctx, raw)
				switch {
				case err == nil:
					SetPrincipal(c, p)
				case !errors.Is(err, ErrUnauthenticated):
					return httpError(err)
				}
				return next(c)
			}
			ck, err := c.Cookie(cookieName)
			if err != nil || ck.Value == "" {
				return next(c)
			}
			p, err := s.Authenticate(ctx, ck.Value)
			switch {
			case err == nil:
				SetPrincipal(c, p)
			case errors.Is(err, ErrUnauthenticated):
				// The browser may stop sending a cookie that opens nothing.
				s.ClearSessionCookie(c)
			default:
				return httpError(err)
			}
			return next(c)
		}
	}
}

// httpError turns an authentication failure that is not the client's into
// the answer the web layer should give: 503 while the database is out of
// reach. The error stays inside (errors.Is(err, ErrUnavailable) holds).
func httpError(err error) error {
	if errors.Is(err, ErrUnavailable) {
		return echo.NewHTTPError(http.StatusServiceUnavailable, "service unavailable").WithInternal(err)
	}
	return err
}

// bearerToken returns the token of an "Authorization: Bearer" header.
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get(echo.HeaderAuthorization), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// Require lets a request through only with a principal that has perm.
// Without a principal an /api/ request gets 401 (with WWW-Authenticate) and
// a page is redirected (303) to /login, with next=<path> for GET and HEAD
// (a login cannot replay a POST); with one that lacks perm, 403. The errors
// are *echo.HTTPError wrapping ErrUnauthenticated or ErrForbidden.
func Require(perm string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			p, ok := PrincipalFrom(c)
			if !ok {
				if isAPI(c.Request()) {
					c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="upcheck"`)
					return echo.NewHTTPError(http.StatusUnauthorized, "authentication required").WithInternal(ErrUnauthenticated)
				}
				return c.Redirect(http.StatusSeeOther, loginURL(c.Request()))
			}
			if !p.Can(perm) {
				return echo.NewHTTPError(http.StatusForbidden, "forbidden").
					WithInternal(fmt.Errorf("%w: role %q lacks %s", ErrForbidden, p.Role, perm))
			}
			return next(c)
		}
	}
}

// RequireToken lets a request through only with an API token
// ("Authorization: Bearer upc_…") whose user has perm, whatever else it
// carries: it guards what machines read, such as /metrics for Prometheus,
// and a browser session is not such a reader's credential. Without a valid
// token the answer is 401 with WWW-Authenticate; with one that lacks perm,
// 403; while the database cannot tell, 503, never 401. It needs no
// Middleware before it.
func (s *Service) RequireToken(perm string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			raw, ok := bearerToken(c.Request())
			if !ok {
				return tokenRequired(c, ErrUnauthenticated)
			}
			p, err := s.AuthenticateToken(c.Request().Context(), raw)
			switch {
			case errors.Is(err, ErrUnauthenticated):
				return tokenRequired(c, err)
			case err != nil:
				return httpError(err)
			case !p.Can(perm):
				return echo.NewHTTPError(http.StatusForbidden, "forbidden").
					WithInternal(fmt.Errorf("%w: role %q lacks %s", ErrForbidden, p.Role, perm))
			}
			SetPrincipal(c, p)
			return next(c)
		}
	}
}

func tokenRequired(c echo.Context, err error) error {
	c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="upcheck"`)
	return echo.NewHTTPError(http.StatusUnauthorized, "API token required").WithInternal(err)
}

func isAPI(r *http.Request) bool {
	return r.URL.Path == "/api" || strings.HasPrefix(r.URL.Path, "/api/")
}

func loginURL(r *http.Request) string {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return "/login"
	}
	return "/login?next=" + url.QueryEscape(r.URL.RequestURI())
}

// SafeNext returns next if it is a path on this site, and "/" otherwise, so
// that the login page's ?next= cannot send a user to another site
// ("//evil.example", "/\evil.example", "https://…").
func SafeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, `/\`) ||
		strings.ContainsFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "/"
	}
	return next
}

// CSRF refuses forged state changes. Safe methods (GET, HEAD, OPTIONS,
// TRACE) pass. Any other method:
//   - with an API token passes: a browser never attaches one by itself, so
//     a token request cannot be forged from another site;
//   - is refused when Sec-Fetch-Site says it comes from another site, or its
//     Origin is not this host (defence in depth; SameOrigin alone);
//   - with a session must carry the session's CSRF token in the X-CSRF-Token
//     header or the csrf_token form field, compared in constant time.
//
// Every refusal is a 403 *echo.HTTPError wrapping ErrForbidden. Place it
// after Middleware.
func CSRF() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if safeMethod(r.Method) {
				return next(c)
			}
			p, ok := PrincipalFrom(c)
			if ok && p.ViaToken {
				return next(c)
			}
			if err := refuseCrossSite(r); err != nil {
				return err
			}
			if !ok {
				return next(c)
			}
			sent := r.Header.Get(CSRFHeader)
			if sent == "" {
				sent = c.FormValue(CSRFFormField)
			}
			if p.CSRFToken == "" || subtle.ConstantTimeCompare([]byte(sent), []byte(p.CSRFToken)) != 1 {
				return echo.NewHTTPError(http.StatusForbidden, "missing or invalid CSRF token").
					WithInternal(fmt.Errorf("%w: csrf token mismatch", ErrForbidden))
			}
			return next(c)
		}
	}
}

// SameOrigin refuses a state change that the browser says comes from
// another site, by the same judgement as CSRF, for routes that have no
// session to carry a CSRF token yet. The login form needs it: a forged
// cross-site login would sign the victim into the attacker's account (login
// CSRF), and SameSite cookies do not stop a post that sets a cookie. Clients
// that send neither Sec-Fetch-Site nor Origin (scripts, older browsers)
// pass, as they do in CSRF.
func SameOrigin() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if r := c.Request(); !safeMethod(r.Method) {
				if err := refuseCrossSite(r); err != nil {
					return err
				}
			}
			return next(c)
		}
	}
}

func safeMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// refuseCrossSite is the 403 of CSRF and SameOrigin for a request
// checkOrigin refuses, nil otherwise.
func refuseCrossSite(r *http.Request) error {
	if err := checkOrigin(r); err != nil {
		return echo.NewHTTPError(http.StatusForbidden, "cross-site request refused").
			WithInternal(fmt.Errorf("%w: %w", ErrForbidden, err))
	}
	return nil
}

// checkOrigin refuses what the browser says is cross-site. Requests without
// these headers (older browsers, scripts) are left to the token check.
func checkOrigin(r *http.Request) error {
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
	default: // "cross-site", and "same-site": a sibling subdomain is not us
		return fmt.Errorf("sec-fetch-site %q", site)
	}
	origin := r.Header.Get(echo.HeaderOrigin)
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if origin == "null" || err != nil || u.Host == "" {
		return fmt.Errorf("origin %q", origin)
	}
	// Behind a proxy the Host may be rewritten; X-Forwarded-Host then names
	// the public one. A browser cannot add that header to a cross-site
	// request without a CORS preflight, which this server never grants.
	forwarded, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Host"), ",")
	if strings.EqualFold(u.Host, r.Host) || strings.EqualFold(u.Host, strings.TrimSpace(forwarded)) {
		return nil
	}
	return fmt.Errorf("origin %q is not host %q", origin, r.Host)
}

// SetSessionCookie sends the session token (from Login) as the session
// cookie: HttpOnly so scripts cannot read it, SameSite=Lax so other sites'
// posts do not carry it, Secure on TLS or when Config.SecureCookie, and
// expiring with the session's absolute expiry.
func (s *Service) SetSessionCookie(c echo.Context, token string, expires time.Time) {
	c.SetCookie(s.cookie(c, token, expires))
}

// ClearSessionCookie tells the browser to drop the session cookie.
func (s *Service) ClearSessionCookie(c echo.Context) {
	ck := s.cookie(c, "", time.Unix(0, 0))
	ck.MaxAge = -1
	c.SetCookie(ck)
}

func (s *Service) cookie(c echo.Context, value string, expires time.Time) *http.Cookie {
	return &http.Cookie{
		Name: s.cfg.CookieName, Value: value, Path: "/", Expires: expires,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.cfg.SecureCookie || c.IsTLS(),
	}
}

// SecurityHeaders sets the browser protections every response carries:
// ContentSecurityPolicy, no MIME sniffing, no framing, no referrer leaving
// the site, and a browsing context of its own.
func SecurityHeaders() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Response().Header()
			h.Set(echo.HeaderContentSecurityPolicy, ContentSecurityPolicy)
			h.Set(echo.HeaderXContentTypeOptions, "nosniff")
			h.Set(echo.HeaderXFrameOptions, "DENY")
			h.Set(echo.HeaderReferrerPolicy, "same-origin")
			h.Set("Cross-Origin-Opener-Policy", "same-origin")
			return next(c)
		}
	}
}
