package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/testkit"
)

const goodPassword = "correct horse battery staple"

// bundle is one test's database and auth service.
type bundle struct {
	db  *pgtest.DB
	st  *store.Store
	svc *auth.Service
}

func setup(t *testing.T) *bundle {
	t.Helper()
	d := pgtest.New(t)
	st := store.New(d.Pool)
	svc, err := auth.New(st, auth.Config{Hasher: auth.Hasher(testkit.Hasher())}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{db: d, st: st, svc: svc}
}

func (b *bundle) user(t *testing.T, email, role string) {
	t.Helper()
	if _, err := b.svc.CreateUser(context.Background(), email, role, goodPassword); err != nil {
		t.Fatal(err)
	}
}

func (b *bundle) login(t *testing.T, email string) (string, store.Session) {
	t.Helper()
	token, sess, err := b.svc.Login(context.Background(), email, goodPassword, "192.0.2.1", "test-agent")
	if err != nil {
		t.Fatalf("login %s: %v", email, err)
	}
	return token, sess
}

// webBundle is a service behind a small echo app laid out like routes.go:
// session and token middleware first, then per-group permissions and CSRF.
type webBundle struct {
	*bundle
	e *echo.Echo
}

func setupWeb(t *testing.T) *webBundle {
	t.Helper()
	b := setup(t)
	e := echo.New()
	e.Use(securityHeaders(), authenticate(b.svc), csrf())
	ok := func(c echo.Context) error { return c.String(http.StatusOK, "ok") }
	e.GET("/healthz", ok)
	e.POST("/login", ok) // anonymous: only the origin checks apply

	view := e.Group("", require(auth.PermView))
	view.GET("/dashboard", ok)
	view.GET("/api/admin/plugins/updates/summary", ok)
	manage := e.Group("", require(auth.PermManage))
	manage.POST("/api/admin/plugins/updates/check", ok)
	manage.POST("/plugins/:code/dismiss", ok)
	return &webBundle{bundle: b, e: e}
}

type request struct {
	method, path string
	body         string
	header       map[string]string
	session      string // cookie value
	bearer       string
}

func (w *webBundle) do(r request) *httptest.ResponseRecorder {
	req := httptest.NewRequest(r.method, r.path, strings.NewReader(r.body))
	req.Host = "upcheck.example"
	if r.body != "" {
		req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	if r.session != "" {
		req.AddCookie(&http.Cookie{Name: auth.DefaultCookieName, Value: r.session})
	}
	if r.bearer != "" {
		req.Header.Set(echo.HeaderAuthorization, "Bearer "+r.bearer)
	}
	rec := httptest.NewRecorder()
	w.e.ServeHTTP(rec, req)
	return rec
}

func wantStatus(t *testing.T, name string, rec *httptest.ResponseRecorder, want int) {
	t.Helper()
	if rec.Code != want {
		t.Fatalf("%s: status %d (%s), want %d", name, rec.Code, strings.TrimSpace(rec.Body.String()), want)
	}
}

// user logs in a fresh user and returns its session token and CSRF token.
func (w *webBundle) session(t *testing.T, email, role string) (token, csrf string) {
	t.Helper()
	w.user(t, email, role)
	token, sess := w.login(t, email)
	return token, sess.CSRFToken
}

func TestRequireWithoutPrincipal(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)

	rec := w.do(request{method: http.MethodGet, path: "/api/admin/plugins/updates/summary"})
	wantStatus(t, "api without credentials", rec, http.StatusUnauthorized)
	if !strings.HasPrefix(rec.Header().Get(echo.HeaderWWWAuthenticate), "Bearer") {
		t.Fatalf("401 without WWW-Authenticate: %v", rec.Header())
	}
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("401 body %q is not JSON: %v", rec.Body.String(), err)
	}

	rec = w.do(request{method: http.MethodGet, path: "/dashboard?tab=security"})
	wantStatus(t, "page without credentials", rec, http.StatusSeeOther)
	if got, want := rec.Header().Get(echo.HeaderLocation), "/login?next="+url.QueryEscape("/dashboard?tab=security"); got != want {
		t.Fatalf("redirect to %q, want %q", got, want)
	}

	// An unknown or malformed credential is no credential.
	rec = w.do(request{method: http.MethodGet, path: "/api/admin/plugins/updates/summary", bearer: "upc_nope"})
	wantStatus(t, "api with a bad token", rec, http.StatusUnauthorized)
	rec = w.do(request{method: http.MethodGet, path: "/dashboard", session: strings.Repeat("A", 43)})
	wantStatus(t, "page with a stale cookie", rec, http.StatusSeeOther)
	if c := rec.Result().Cookies(); len(c) != 1 || c[0].Name != auth.DefaultCookieName || c[0].MaxAge >= 0 {
		t.Fatalf("stale cookie not cleared: %v", rec.Header().Values("Set-Cookie"))
	}

	// The errors handed to echo's error handler say why.
	c := w.e.NewContext(httptest.NewRequest(http.MethodGet, "/api/x", nil), httptest.NewRecorder())
	err := require(auth.PermView)(func(echo.Context) error { return nil })(c)
	var he *echo.HTTPError
	if !errors.As(err, &he) || he.Code != http.StatusUnauthorized || !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("Require without principal on /api/: %v", err)
	}
	c = w.e.NewContext(httptest.NewRequest(http.MethodGet, "/api/x", nil), httptest.NewRecorder())
	setPrincipal(c, auth.Principal{UserID: 1, Role: auth.RoleViewer})
	err = require(auth.PermManage)(func(echo.Context) error { return nil })(c)
	if !errors.As(err, &he) || he.Code != http.StatusForbidden || !errors.Is(err, auth.ErrForbidden) {
		t.Fatalf("Require without permission: %v", err)
	}
}

func TestRequirePermissions(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	ctx := context.Background()
	viewer, viewerCSRF := w.session(t, "viewer@example.org", auth.RoleViewer)
	admin, adminCSRF := w.session(t, "admin@example.org", auth.RoleAdmin)
	viewerToken, err := w.svc.CreateToken(ctx, "viewer@example.org", "ci")
	if err != nil {
		t.Fatal(err)
	}

	wantStatus(t, "viewer reads", w.do(request{method: http.MethodGet, path: "/dashboard", session: viewer}), http.StatusOK)
	wantStatus(t, "viewer token reads", w.do(request{method: http.MethodGet, path: "/api/admin/plugins/updates/summary", bearer: viewerToken}), http.StatusOK)
	wantStatus(t, "viewer manages", w.do(request{
		method: http.MethodPost, path: "/api/admin/plugins/updates/check", session: viewer, header: map[string]string{auth.CSRFHeader: viewerCSRF},
	}), http.StatusForbidden)
	wantStatus(t, "viewer token manages", w.do(request{method: http.MethodPost, path: "/api/admin/plugins/updates/check", bearer: viewerToken}), http.StatusForbidden)
	wantStatus(t, "admin manages", w.do(request{
		method: http.MethodPost, path: "/api/admin/plugins/updates/check", session: admin, header: map[string]string{auth.CSRFHeader: adminCSRF},
	}), http.StatusOK)
}

func TestCSRF(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	admin, csrf := w.session(t, "admin@example.org", auth.RoleAdmin)
	token, err := w.svc.CreateToken(context.Background(), "admin@example.org", "ci")
	if err != nil {
		t.Fatal(err)
	}
	_, otherCSRF := w.session(t, "other@example.org", auth.RoleAdmin)
	const api = "/api/admin/plugins/updates/check"

	for _, c := range []struct {
		name string
		req  request
		want int
	}{
		{"cookie post without token", request{method: http.MethodPost, path: api, session: admin}, http.StatusForbidden},
		{"cookie delete without token", request{method: http.MethodDelete, path: api, session: admin}, http.StatusForbidden},
		{"cookie post with wrong token", request{method: http.MethodPost, path: api, session: admin, header: map[string]string{auth.CSRFHeader: csrf + "x"}}, http.StatusForbidden},
		{"cookie post with another session's token", request{method: http.MethodPost, path: api, session: admin, header: map[string]string{auth.CSRFHeader: otherCSRF}}, http.StatusForbidden},
		{"cookie post with header token", request{method: http.MethodPost, path: api, session: admin, header: map[string]string{auth.CSRFHeader: csrf}}, http.StatusOK},
		{"cookie form with field token", request{method: http.MethodPost, path: "/plugins/blog/dismiss", session: admin, body: "csrf_token=" + url.QueryEscape(csrf)}, http.StatusOK},
		{"cookie form with empty field", request{method: http.MethodPost, path: "/plugins/blog/dismiss", session: admin, body: "csrf_token="}, http.StatusForbidden},
		{"bearer post without token", request{method: http.MethodPost, path: api, bearer: token}, http.StatusOK},
		{"bearer post with a cross-site origin", request{method: http.MethodPost, path: api, bearer: token, header: map[string]string{"Origin": "https://evil.example"}}, http.StatusOK},
		{"cross-site origin with token", request{method: http.MethodPost, path: api, session: admin, header: map[string]string{auth.CSRFHeader: csrf, "Origin": "https://evil.example"}}, http.StatusForbidden},
		{"null origin with token", request{method: http.MethodPost, path: api, session: admin, header: map[string]string{auth.CSRFHeader: csrf, "Origin": "null"}}, http.StatusForbidden},
		{"sec-fetch-site cross-site", request{method: http.MethodPost, path: api, session: admin, header: map[string]string{auth.CSRFHeader: csrf, "Sec-Fetch-Site": "cross-site"}}, http.StatusForbidden},
		{"sec-fetch-site same-site", request{method: http.MethodPost, path: api, session: admin, header: map[string]string{auth.CSRFHeader: csrf, "Sec-Fetch-Site": "same-site"}}, http.StatusForbidden},
		{"same origin with token", request{method: http.MethodPost, path: api, session: admin, header: map[string]string{
			auth.CSRFHeader: csrf, "Origin": "https://UPCHECK.example", "Sec-Fetch-Site": "same-origin"}}, http.StatusOK},
		{"proxied origin with token", request{method: http.MethodPost, path: api, session: admin, header: map[string]string{
			auth.CSRFHeader: csrf, "Origin": "https://admin.example.org", "X-Forwarded-Host": "admin.example.org"}}, http.StatusOK},
		{"anonymous cross-site login", request{method: http.MethodPost, path: "/login", header: map[string]string{"Origin": "https://evil.example"}}, http.StatusForbidden},
		{"anonymous same-origin login", request{method: http.MethodPost, path: "/login", header: map[string]string{"Origin": "http://upcheck.example"}}, http.StatusOK},
		{"get needs no token", request{method: http.MethodGet, path: "/dashboard", session: admin, header: map[string]string{"Sec-Fetch-Site": "cross-site"}}, http.StatusOK},
	} {
		wantStatus(t, c.name, w.do(c.req), c.want)
	}
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	for _, path := range []string{"/healthz", "/dashboard", "/no-such-page"} {
		rec := w.do(request{method: http.MethodGet, path: path})
		for k, v := range map[string]string{
			"Content-Security-Policy":    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
			"X-Content-Type-Options":     "nosniff",
			"X-Frame-Options":            "DENY",
			"Referrer-Policy":            "same-origin",
			"Cross-Origin-Opener-Policy": "same-origin",
		} {
			if got := rec.Header().Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", path, k, got, v)
			}
		}
	}
}

func TestSessionCookie(t *testing.T) {
	t.Parallel()
	b := setup(t)
	e := echo.New()
	b.user(t, "ada@example.org", auth.RoleViewer)
	token, sess := b.login(t, "ada@example.org")

	for _, c := range []struct {
		name   string
		tls    bool
		secure bool
	}{{"plain", false, false}, {"tls", true, true}} {
		req := httptest.NewRequest(http.MethodPost, "/login", nil)
		if c.tls {
			req = httptest.NewRequest(http.MethodPost, "https://upcheck.example/login", nil)
		}
		rec := httptest.NewRecorder()
		setSessionCookie(e.NewContext(req, rec), b.svc, token, sess.ExpiresAt)
		cookies := rec.Result().Cookies()
		if len(cookies) != 1 {
			t.Fatalf("%s: cookies %v", c.name, cookies)
		}
		ck := cookies[0]
		if ck.Name != auth.DefaultCookieName || ck.Value != token || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode ||
			ck.Path != "/" || ck.Secure != c.secure || !ck.Expires.Equal(sess.ExpiresAt.Truncate(1e9)) {
			t.Fatalf("%s: cookie %+v", c.name, ck)
		}
	}

	secure, err := auth.New(b.st, auth.Config{Hasher: auth.Hasher(testkit.Hasher()), SecureCookie: true, CookieName: "sid"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	clearSessionCookie(e.NewContext(httptest.NewRequest(http.MethodPost, "/logout", nil), rec), secure)
	if ck := rec.Result().Cookies(); len(ck) != 1 || ck[0].Name != "sid" || !ck[0].Secure || ck[0].MaxAge >= 0 || ck[0].Value != "" {
		t.Fatalf("cleared cookie %+v", ck)
	}

	// The middleware reads the cookie the service writes: its name is
	// auth.Config.CookieName alone, and nothing else names it.
	for name, want := range map[string]bool{"sid": true, auth.DefaultCookieName: false} {
		req := httptest.NewRequest(http.MethodGet, "/dashboard", nil)
		req.AddCookie(&http.Cookie{Name: name, Value: token})
		var found bool
		err := authenticate(secure)(func(c echo.Context) error {
			_, found = auth.PrincipalFrom(c)
			return nil
		})(e.NewContext(req, httptest.NewRecorder()))
		if err != nil || found != want {
			t.Fatalf("session in cookie %q with CookieName sid: principal %v, err %v; want principal %v", name, found, err, want)
		}
	}
}

// While the database is down, a request with a session or token gets 503,
// never 401 or the login page.
func TestMiddlewareDatabaseDown(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	session, _ := w.session(t, "ada@example.org", auth.RoleAdmin)
	token, err := w.svc.CreateToken(context.Background(), "ada@example.org", "ci")
	if err != nil {
		t.Fatal(err)
	}
	w.db.Pool.Close()
	wantStatus(t, "page", w.do(request{method: http.MethodGet, path: "/dashboard", session: session}), http.StatusServiceUnavailable)
	wantStatus(t, "api", w.do(request{method: http.MethodGet, path: "/api/admin/plugins/updates/summary", bearer: token}), http.StatusServiceUnavailable)
	// Without credentials nothing is asked of the database.
	wantStatus(t, "anonymous", w.do(request{method: http.MethodGet, path: "/healthz"}), http.StatusOK)
}
