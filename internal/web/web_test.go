package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/dev/demo"
	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/testkit"
	"github.com/upcheck/upcheck/internal/updatecheck"
	"github.com/upcheck/upcheck/internal/web"
)

const testPassword = "correct horse battery staple"

// bundle is one test's server: a database with the demo site installed
// (publisher on loopback), an admin and a viewer.
type bundle struct {
	t         *testing.T
	db        *pgtest.DB
	store     *store.Store
	checker   *updatecheck.Checker
	auth      *auth.Service
	handler   http.Handler // web.New's, an *echo.Echo
	server    *httptest.Server
	publisher *publisher.Publisher
	notify    *notify.Service

	reads      *catalog.Reads
	dismissals *catalog.Dismissals
}

// setup builds the bundle; opts may change the server's Deps before it
// starts (metrics, trusted proxies).
func setup(t *testing.T, opts ...func(*bundle, *web.Deps)) *bundle {
	t.Helper()
	d := pgtest.New(t)
	b := &bundle{t: t, db: d, store: store.New(d.Pool)}
	lm, err := lease.New(b.store, lease.Timings{Lease: 3 * time.Second, Heartbeat: 500 * time.Millisecond, Cooldown: 2 * time.Minute, Period: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	f := fetch.New(fetch.Config{AllowPrivate: true}, nil)
	t.Cleanup(f.Close)
	b.checker = updatecheck.New(b.store, lm, f, slog.Default())
	// Notifications are queued, never delivered, in these tests (River is
	// not started).
	if b.notify, err = notify.New(d.Pool, b.store, f, notify.DefaultTimings(), slog.Default()); err != nil {
		t.Fatal(err)
	}
	b.checker.NotifyWith(b.notify)
	b.reads = catalog.New(b.store)
	b.checker.TellReads(b.reads)
	b.dismissals = catalog.NewDismissals(b.store, b.reads)
	b.auth, err = auth.New(b.store, auth.Config{Hasher: auth.Hasher(testkit.Hasher())}, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	p, err := demo.NewPublisher(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b.publisher = publisher.New(t, publisher.Fallback(p))
	if _, err := updatecheck.NewSyncer(b.checker).Sync(context.Background(), p.Manifest(b.publisher.URL)); err != nil {
		t.Fatal(err)
	}
	for _, u := range []struct{ email, role string }{{"admin@example.test", "admin"}, {"viewer@example.test", "viewer"}} {
		if _, err := b.auth.CreateUser(context.Background(), u.email, u.role, testPassword); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	deps := web.Deps{Store: b.store, Checker: b.checker, Auth: b.auth, Notify: b.notify, Logger: slog.Default(), Context: ctx,
		Importer: updatecheck.NewImporter(b.checker), Reads: b.reads, Dismissals: b.dismissals}
	for _, o := range opts {
		o(b, &deps)
	}
	b.handler = web.New(deps)
	b.server = httptest.NewServer(b.handler)
	t.Cleanup(b.server.Close)
	return b
}

// client is a browser-like client: cookies, no automatic redirects.
type client struct {
	b    *bundle
	http *http.Client
	csrf string
}

func (b *bundle) anonymous() *client {
	jar, _ := cookiejar.New(nil)
	return &client{b: b, http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)"`)

// login signs in through the form and picks up the CSRF token from a page.
func (b *bundle) login(email string) *client {
	b.t.Helper()
	c := b.anonymous()
	resp := c.do("POST", "/login", url.Values{"email": {email}, "password": {testPassword}, "next": {"/admin"}}.Encode(), "application/x-www-form-urlencoded", nil)
	if resp.status != http.StatusSeeOther || resp.header.Get("Location") != "/admin" {
		b.t.Fatalf("login %s: %d %s", email, resp.status, resp.body)
	}
	page := c.do("GET", "/admin", "", "", nil)
	m := csrfMeta.FindStringSubmatch(page.body)
	if page.status != 200 || m == nil {
		b.t.Fatalf("dashboard after login: %d, csrf %v", page.status, m)
	}
	c.csrf = m[1]
	return c
}

type response struct {
	status int
	header http.Header
	body   string
}

func (c *client) do(method, path, body, contentType string, header map[string]string) response {
	c.b.t.Helper()
	req, err := http.NewRequest(method, c.b.server.URL+path, strings.NewReader(body))
	if err != nil {
		c.b.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.b.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if described(req.URL.Path) {
		checkContract(c.b.t, req, resp.StatusCode, resp.Header, b) // api_openapi_test.go
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func (c *client) postCheck(withCSRF bool) response {
	h := map[string]string{}
	if withCSRF {
		h["X-CSRF-Token"] = c.csrf
	}
	return c.do("POST", "/api/admin/plugins/updates/check", "", "", h)
}

func wantStatus(t *testing.T, what string, r response, want int) {
	t.Helper()
	if r.status != want {
		t.Fatalf("%s: status %d, want %d; body %s", what, r.status, want, r.body)
	}
}

// The check endpoint: CSRF required with a session, 200 completed with
// counts, 429 cooldown with Retry-After, 409 busy; an API token needs no
// CSRF token.
func TestCheckEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	wantStatus(t, "check without CSRF", admin.postCheck(false), 403)

	r := admin.postCheck(true)
	wantStatus(t, "check", r, 200)
	var res map[string]any
	json.Unmarshal([]byte(r.body), &res)
	// The demo's Shop source fails: completed with failures, still a 200.
	if res["status"] != "completed_with_failures" || res["fetched"] != float64(3) || res["failed"] != float64(1) {
		t.Fatalf("check body = %s", r.body)
	}
	// The answer carries the dashboard's own words for it, which the
	// page's script shows as they are.
	if want := "Check completed with failures: 3 sources fetched, 0 unchanged, 1 failed. Source health says why."; res["message"] != want {
		t.Errorf("message %q, want %q", res["message"], want)
	}
	r = admin.postCheck(true)
	wantStatus(t, "second check", r, 429)
	if r.header.Get("Retry-After") == "" || !strings.Contains(r.body, `"status":"cooldown"`) || !strings.Contains(r.body, `"retry_after":`) ||
		!strings.Contains(r.body, `You can check again in `) {
		t.Fatalf("cooldown answer: %v %s", r.header, r.body)
	}

	token, err := b.auth.CreateToken(context.Background(), "admin@example.test", "test")
	if err != nil {
		t.Fatal(err)
	}
	bearer := b.anonymous()
	r = bearer.do("POST", "/api/admin/plugins/updates/check", "", "", map[string]string{"Authorization": "Bearer " + token})
	wantStatus(t, "token check (in cooldown)", r, 429)

	// Another instance holds the lease: busy.
	b.db.MustExec(t, "UPDATE core_update_lock SET last_manual_at = NULL, owner = gen_random_uuid(), expires_at = clock_timestamp() + interval '1 minute'")
	r = admin.postCheck(true)
	wantStatus(t, "check while busy", r, 409)
	if !strings.Contains(r.body, `"status":"busy"`) || !strings.Contains(r.body, `"message":"A check is already running. Try again in a few minutes."`) {
		t.Fatalf("busy body = %s", r.body)
	}
}

// A check that loses its lease answers 409 interrupted.
func TestCheckInterrupted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	// Every publisher hangs; meanwhile another instance takes the lease over.
	asked := make(chan struct{}, 1) // a publisher was asked: the check holds the lease
	hang := publisher.New(t)
	hang.Hold("/x.json")
	hang.OnRequest(func(*http.Request) {
		select {
		case asked <- struct{}{}:
		default:
		}
	})
	b.db.MustExec(t, "UPDATE components SET source_url = $1 || '/x.json' WHERE source_url IS NOT NULL", hang.URL)
	go func() {
		<-asked
		if _, err := b.db.Pool.Exec(context.Background(), "UPDATE core_update_lock SET owner = gen_random_uuid(), epoch = epoch + 1, expires_at = clock_timestamp() + interval '1 minute'"); err != nil {
			t.Error(err) // not the test's goroutine: no Fatal
		}
	}()
	r := admin.postCheck(true)
	wantStatus(t, "interrupted check", r, 409)
	if !strings.Contains(r.body, `"status":"interrupted"`) {
		t.Fatalf("body = %s", r.body)
	}
}

// While the database is down, requests that need it answer 503, never 401,
// and the session survives the outage.
func TestDatabaseDownAnswers503(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	adminConn, err := pgx.Connect(context.Background(), b.db.URLFor("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer adminConn.Close(context.Background())
	ident := pgx.Identifier{b.db.Name}.Sanitize()
	exec := func(sql string) {
		if _, err := adminConn.Exec(context.Background(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec("ALTER DATABASE " + ident + " ALLOW_CONNECTIONS false")
	exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + b.db.Name + "'")
	for _, path := range []string{"/api/admin/plugins/updates/summary", "/admin"} {
		r := admin.do("GET", path, "", "", nil)
		wantStatus(t, "GET "+path+" while the database is down", r, 503)
	}
	wantStatus(t, "check while the database is down", admin.postCheck(true), 503)
	exec("ALTER DATABASE " + ident + " ALLOW_CONNECTIONS true")
	wantStatus(t, "summary after recovery (same session)", admin.do("GET", "/api/admin/plugins/updates/summary", "", "", nil), 200)
}

// Security headers and CSRF on the forms.
func TestSecurityHeadersAndForms(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	r := admin.do("GET", "/admin", "", "", nil)
	for k, want := range map[string]string{
		"Content-Security-Policy": "frame-ancestors 'none'",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "",
	} {
		if v := r.header.Get(k); v == "" || !strings.Contains(v, want) {
			t.Errorf("header %s = %q", k, v)
		}
	}
	if strings.Contains(r.body, "<script>") || regexp.MustCompile(`\son[a-z]+=`).MatchString(r.body) {
		t.Error("inline script on the dashboard")
	}
	// The no-JavaScript form: post and redirect with the outcome.
	form := admin.do("POST", "/admin/plugins/updates/check", "csrf_token="+url.QueryEscape(admin.csrf), "application/x-www-form-urlencoded", nil)
	if form.status != http.StatusSeeOther || !strings.Contains(form.header.Get("Location"), "check=completed") {
		t.Fatalf("form check: %d %s", form.status, form.header.Get("Location"))
	}
	if page := admin.do("GET", form.header.Get("Location"), "", "", nil); !strings.Contains(page.body, "Check completed with failures: 3 sources fetched") {
		t.Error("the dashboard does not word the form check's outcome")
	}
	if page := admin.do("GET", "/admin?check=Pay+now&outcome=Pay+now", "", "", nil); strings.Contains(page.body, "Pay now") {
		t.Error("a crafted link puts its own words on the dashboard")
	}
	wantStatus(t, "form without CSRF", admin.do("POST", "/admin/plugins/updates/check", "", "application/x-www-form-urlencoded", nil), 403)
	// Logout ends the session.
	out := admin.do("POST", "/logout", "csrf_token="+url.QueryEscape(admin.csrf), "application/x-www-form-urlencoded", nil)
	wantStatus(t, "logout", out, http.StatusSeeOther)
	wantStatus(t, "API after logout", admin.do("GET", "/api/admin/plugins/updates/summary", "", "", nil), 401)
}

// Wrong passwords: 401 with a form, then throttled.
func TestLoginFailuresAreThrottled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.anonymous()
	var last response
	for range 8 {
		last = c.do("POST", "/login", "email=admin%40example.test&password=wrong-password-here", "application/x-www-form-urlencoded", nil)
		if last.status == http.StatusTooManyRequests {
			break
		}
		wantStatus(t, "wrong password", last, 401)
	}
	wantStatus(t, "after many failures", last, 429)
	// Even the right password is refused while locked.
	r := c.do("POST", "/login", "email=admin%40example.test&password="+url.QueryEscape(testPassword), "application/x-www-form-urlencoded", nil)
	wantStatus(t, "right password while locked", r, 429)
}

// Per-address throttling counts the peer's address: a forged
// X-Forwarded-For on every attempt does not reset it.
func TestLoginThrottleIgnoresForwardedFor(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.anonymous()
	var last response
	for i := range 30 {
		// A new (unknown) account each time, so only the address limit applies.
		last = c.do("POST", "/login", fmt.Sprintf("email=nobody%d%%40example.test&password=wrong-password-here", i),
			"application/x-www-form-urlencoded", map[string]string{"X-Forwarded-For": fmt.Sprintf("203.0.113.%d", i), "X-Real-IP": fmt.Sprintf("198.51.100.%d", i)})
		if last.status == http.StatusTooManyRequests {
			break
		}
	}
	wantStatus(t, "30 failures from one peer with forged forwarding headers", last, 429)
}

// Dismissing an advisory re-evaluates at once (the summary follows) and is
// audited; restoring it brings it back.
func TestDismissAdvisory(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	vulnerable := func() float64 {
		var s map[string]any
		json.Unmarshal([]byte(admin.do("GET", "/api/admin/plugins/updates/summary", "", "", nil).body), &s)
		return s["vulnerable"].(float64)
	}
	before := vulnerable()
	r := admin.do("POST", "/admin/plugins/gallery/advisories/ACME-2026-011/dismiss", "reason=test&csrf_token="+url.QueryEscape(admin.csrf), "application/x-www-form-urlencoded", nil)
	wantStatus(t, "dismiss", r, http.StatusSeeOther)
	if got := vulnerable(); got != before-1 {
		t.Fatalf("vulnerable after dismiss = %v, want %v", got, before-1)
	}
	var audits int
	b.db.QueryRow(t, "SELECT count(*) FROM audit_log").Scan(&audits)
	if audits == 0 {
		t.Fatal("dismissal not audited")
	}
	admin.do("POST", "/admin/plugins/gallery/advisories/ACME-2026-011/undismiss", "csrf_token="+url.QueryEscape(admin.csrf), "application/x-www-form-urlencoded", nil)
	if got := vulnerable(); got != before {
		t.Fatalf("vulnerable after undismiss = %v, want %v", got, before)
	}
}

// Source health judges staleness by the database clock: a source whose
// last success is three days old is marked stale, a fresh one is not.
func TestSourceHealthStale(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	if body := admin.do("GET", "/admin/sources", "", "", nil).body; strings.Contains(body, ">Stale<") {
		t.Fatal("a source checked just now is marked stale")
	}
	b.db.MustExec(t, "UPDATE sources SET last_success_at = clock_timestamp() - interval '3 days' WHERE url LIKE '%core.json'")
	if body := admin.do("GET", "/admin/sources", "", "", nil).body; !strings.Contains(body, ">Stale<") {
		t.Fatal("a source without a success for three days is not marked stale")
	}
}

// The catalog API pages and filters.
func TestCatalogAPI(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	var page struct {
		Components []map[string]any `json:"components"`
		Total      int              `json:"total"`
	}
	if err := json.Unmarshal([]byte(admin.do("GET", "/api/admin/plugins/updates?per_page=3&page=1", "", "", nil).body), &page); err != nil {
		t.Fatal(err)
	}
	if page.Total != 7 || len(page.Components) != 3 {
		t.Fatalf("page 1: total %d, %d entries", page.Total, len(page.Components))
	}
	first := page.Components[0]
	for _, k := range []string{"code", "name", "installed", "evaluated", "latest", "update_available", "security", "advisories", "source_url", "last_success_at", "last_error"} {
		if _, ok := first[k]; !ok {
			t.Errorf("catalog entry lacks %q: %v", k, first)
		}
	}
	if first["code"] != "blog" || first["security"] != true {
		t.Errorf("first entry = %v, want the security update first", first)
	}
	page.Components, page.Total = nil, 0
	json.Unmarshal([]byte(admin.do("GET", "/api/admin/plugins/updates?per_page=3&page=10", "", "", nil).body), &page)
	if page.Total != 7 || len(page.Components) != 0 {
		t.Fatalf("past the last page: total %d, %d entries; want 7 and none", page.Total, len(page.Components))
	}
	json.Unmarshal([]byte(admin.do("GET", "/api/admin/plugins/updates?status=failing", "", "", nil).body), &page)
	if page.Total != 1 || page.Components[0]["code"] != "shop" {
		t.Fatalf("failing filter: %+v", page)
	}
	if kind := page.Components[0]["last_error_kind"]; kind != "http_status" {
		t.Errorf("shop's last_error_kind = %v, want http_status (its source answers 503)", kind)
	}
	if body := admin.do("GET", "/admin/plugins?status=security", "", "", nil).body; !strings.Contains(body, `data-code="blog"`) || strings.Contains(body, `data-code="forms"`) {
		t.Error("the catalog page's security filter does not filter")
	}
}
