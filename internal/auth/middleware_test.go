package auth

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
)

// webBundle is a service behind a small echo app laid out like
// internal/web: session and token middleware first, then per-group
// permissions and CSRF.
type webBundle struct {
	*bundle
	e *echo.Echo
}

func setupWeb(t *testing.T) *webBundle {
	t.Helper()
	b := setup(t, Config{})
	e := echo.New()
	e.Use(SecurityHeaders(), b.svc.Middleware(""), CSRF())
	ok := func(c echo.Context) error { return c.String(http.StatusOK, "ok") }
	e.GET("/healthz", ok)
	e.POST("/login", ok) // anonymous: only the origin checks apply

	view := e.Group("", Require(PermView))
	view.GET("/dashboard", ok)
	view.GET("/api/admin/plugins/updates/summary", ok)
	manage := e.Group("", Require(PermManage))
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
		req.AddCookie(&http.Cookie{Name: DefaultCookieName, Value: r.session})
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
	if c := rec.Result().Cookies(); len(c) != 1 || c[0].Name != DefaultCookieName || c[0].MaxAge >= 0 {
		t.Fatalf("stale cookie not cleared: %v", rec.Header().Values("Set-Cookie"))
	}

	// The errors handed to echo's error handler say why.
	c := w.e.NewContext(httptest.NewRequest(http.MethodGet, "/api/x", nil), httptest.NewRecorder())
	err := Require(PermView)(func(echo.Context) error { return nil })(c)
	var he *echo.HTTPError
	if !errors.As(err, &he) || he.Code != http.StatusUnauthorized || !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("Require without principal on /api/: %v", err)
	}
	c = w.e.NewContext(httptest.NewRequest(http.MethodGet, "/api/x", nil), httptest.NewRecorder())
	SetPrincipal(c, Principal{UserID: 1, Role: RoleViewer})
	err = Require(PermManage)(func(echo.Context) error { return nil })(c)
	if !errors.As(err, &he) || he.Code != http.StatusForbidden || !errors.Is(err, ErrForbidden) {
		t.Fatalf("Require without permission: %v", err)
	}
}

func TestRequirePermissions(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	ctx := context.Background()
	viewer, viewerCSRF := w.session(t, "viewer@example.org", RoleViewer)
	admin, adminCSRF := w.session(t, "admin@example.org", RoleAdmin)
	viewerToken, err := w.svc.CreateToken(ctx, "viewer@example.org", "ci")
	if err != nil {
		t.Fatal(err)
	}

	wantStatus(t, "viewer reads", w.do(request{method: http.MethodGet, path: "/dashboard", session: viewer}), http.StatusOK)
	wantStatus(t, "viewer token reads", w.do(request{method: http.MethodGet, path: "/api/admin/plugins/updates/summary", bearer: viewerToken}), http.StatusOK)
	wantStatus(t, "viewer manages", w.do(request{
		method: http.MethodPost, path: "/api/admin/plugins/updates/check", session: viewer, header: map[string]string{CSRFHeader: viewerCSRF},
	}), http.StatusForbidden)
	wantStatus(t, "viewer token manages", w.do(request{method: http.MethodPost, path: "/api/admin/plugins/updates/check", bearer: viewerToken}), http.StatusForbidden)
	wantStatus(t, "admin manages", w.do(request{
		method: http.MethodPost, path: "/api/admin/plugins/updates/check", session: admin, header: map[string]string{CSRFHeader: adminCSRF},
	}), http.StatusOK)
}

func TestCSRF(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	admin, csrf := w.session(t, "admin@example.org", RoleAdmin)
	token, err := w.svc.CreateToken(context.Background(), "admin@example.org", "ci")
	if err != nil {
		t.Fatal(err)
	}
	_, otherCSRF := w.session(t, "other@example.org", RoleAdmin)
	const api = "/api/admin/plugins/updates/check"

	for _, c := range []struct {
		name string
		req  request
		want int
	}{
		{"cookie post without token", request{method: http.MethodPost, path: api, session: admin}, http.StatusForbidden},
		{"cookie delete without token", request{method: http.MethodDelete, path: api, session: admin}, http.StatusForbidden},
		{"cookie post with wrong token", request{method: http.MethodPost, path: api, session: admin, header: map[string]string{CSRFHeader: csrf + "x"}}, http.StatusForbidden},
		{"cookie post with another session's token", request{method: http.MethodPost, path: api, session: admin, header: map[string]string{CSRFHeader: otherCSRF}}, http.StatusForbidden},
		{"cookie post with header token", request{method: http.MethodPost, path: api, session: admin, header: map[string]string{CSRFHeader: csrf}}, http.StatusOK},
		{"cookie form with field token", request{method: http.MethodPost, path: "/plugins/blog/dismiss", session: admin, body: "csrf_token=" + url.QueryEscape(csrf)}, http.StatusOK},
		{"cookie form with empty field", request{method: http.MethodPost, path: "/plugins/blog/dismiss", session: admin, body: "csrf_token="}, http.StatusForbidden},
		{"bearer post without token", request{method: http.MethodPost, path: api, bearer: token}, http.StatusOK},
		{"bearer post with a cross-site origin", request{method: http.MethodPost, path: api, bearer: token, header: map[string]string{"Origin": "https://evil.example"}}, http.StatusOK},
		{"cross-site origin with token", request{method: http.MethodPost, path: api, session: admin, header: map[string]string{CSRFHeader: csrf, "Origin": "https://evil.example"}}, http.StatusForbidden},
		{"null origin with token", request{method: http.MethodPost, path: api, session: admin, header: map[string]string{CSRFHeader: csrf, "Origin": "null"}}, http.StatusForbidden},
		{"sec-fetch-site cross-site", request{method: http.MethodPost, path: api, session: admin, header: map[string]string{CSRFHeader: csrf, "Sec-Fetch-Site": "cross-site"}}, http.StatusForbidden},
		{"sec-fetch-site same-site", request{method: http.MethodPost, path: api, session: admin, header: map[string]string{CSRFHeader: csrf, "Sec-Fetch-Site": "same-site"}}, http.StatusForbidden},
		{"same origin with token", request{method: http.MethodPost, path: api, session: admin, header: map[string]string{
			CSRFHeader: csrf, "Origin": "https://UPCHECK.example", "Sec-Fetch-Site": "same-origin"}}, http.StatusOK},
		{"proxied origin with token", request{method: http.MethodPost, path: api, session: admin, header: map[string]string{
			CSRFHeader: csrf, "Origin": "https://admin.example.org", "X-Forwarded-Host": "admin.example.org"}}, http.StatusOK},
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
	b := setup(t, Config{})
	e := echo.New()
	b.user(t, "ada@example.org", RoleViewer)
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
		b.svc.SetSessionCookie(e.NewContext(req, rec), token, sess.ExpiresAt)
		cookies := rec.Result().Cookies()
		if len(cookies) != 1 {
			t.Fatalf("%s: cookies %v", c.name, cookies)
		}
		ck := cookies[0]
		if ck.Name != DefaultCookieName || ck.Value != token || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode ||
			ck.Path != "/" || ck.Secure != c.secure || !ck.Expires.Equal(sess.ExpiresAt.Truncate(1e9)) {
			t.Fatalf("%s: cookie %+v", c.name, ck)
		}
	}

	secure, err := New(b.st, Config{Hasher: cheapHasher(), SecureCookie: true, CookieName: "sid"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	secure.ClearSessionCookie(e.NewContext(httptest.NewRequest(http.MethodPost, "/logout", nil), rec))
	if ck := rec.Result().Cookies(); len(ck) != 1 || ck[0].Name != "sid" || !ck[0].Secure || ck[0].MaxAge >= 0 || ck[0].Value != "" {
		t.Fatalf("cleared cookie %+v", ck)
	}

	defer func() {
		if recover() == nil {
			t.Fatal("Middleware accepted a cookie name other than Config.CookieName")
		}
	}()
	secure.Middleware("upcheck_session")
}

// While the database is down, a request with a session or token gets 503,
// never 401 or the login page.
func TestMiddlewareDatabaseDown(t *testing.T) {
	t.Parallel()
	w := setupWeb(t)
	session, _ := w.session(t, "ada@example.org", RoleAdmin)
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

func TestSafeNext(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/dashboard":             "/dashboard",
		"/plugins?tab=security":  "/plugins?tab=security",
		"":                       "/",
		"dashboard":              "/",
		"//evil.example/x":       "/",
		`/\evil.example`:         "/",
		"/a\\b":                  "/",
		"https://evil.example/":  "/",
		"/\r\nSet-Cookie: x=1":   "/",
		"javascript:alert(1)":    "/",
		"/%2F%2Fevil.example":    "/%2F%2Fevil.example",
		"/login?next=//evil.com": "/login?next=//evil.com",
	} {
		if got := SafeNext(in); got != want {
			t.Errorf("SafeNext(%q) = %q, want %q", in, got, want)
		}
	}
}
