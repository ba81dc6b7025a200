package web_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/metrics"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/web"
)

// withMetrics makes *m the server's metrics, as app does: its request
// counter around everything, plus a middleware inside it that fails /boom
// with an error nobody maps. public opens /metrics.
func withMetrics(m **metrics.Metrics, public bool) func(*bundle, *web.Deps) {
	return func(b *bundle, d *web.Deps) {
		*m = metrics.New(b.store.SummaryReader(store.LocalSite, readmodel.DevSeparate))
		boom := func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c echo.Context) error {
				if c.Request().URL.Path == "/boom" {
					return errors.New("boom")
				}
				return next(c)
			}
		}
		d.Metrics, d.MetricsPublic = (*m).Handler(), public
		d.Middleware = []echo.MiddlewareFunc{(*m).HTTP(), boom}
	}
}

// requests reads upcheck_http_requests_total{route, status} from m.
func requests(t *testing.T, m *metrics.Metrics, route string, status int) int {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	prefix := fmt.Sprintf("upcheck_http_requests_total{route=%q,status=%q} ", route, strconv.Itoa(status))
	for line := range strings.Lines(rec.Body.String()) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return n
		}
	}
	return 0
}

// The request counter records the status the client received, as the one
// error handler decided it: a route miss is a 404, a database outage a 503,
// an error nobody maps a 500. Counting 503s and 404s as 500 would page
// someone for every outage and every mistyped URL.
func TestMetricsCountTheStatusSent(t *testing.T) {
	t.Parallel()
	var m *metrics.Metrics
	b := setup(t, withMetrics(&m, false))
	c, admin := b.anonymous(), b.login("admin@example.test")

	wantStatus(t, "unknown route", c.do("GET", "/no/such/page", "", "", nil), 404)
	wantStatus(t, "unknown component", admin.do("GET", "/admin/plugins/nope", "", "", nil), 404)
	wantStatus(t, "unmapped error", c.do("GET", "/boom", "", "", nil), 500)
	b.db.Pool.Close() // the database is gone from now on
	wantStatus(t, "login while the database is down", c.do("POST", "/login", "email=admin%40example.test&password=x", "application/x-www-form-urlencoded", nil), 503)

	for _, w := range []struct {
		route  string
		status int
		want   int
	}{
		{"/*", 404, 1}, {"/admin/plugins/:code", 404, 1}, {"/*", 500, 1}, {"/login", 503, 1},
		{"/admin/plugins/:code", 500, 0}, {"/login", 500, 0},
	} {
		if got := requests(t, m, w.route, w.status); got != w.want {
			t.Errorf("requests{route=%q,status=\"%d\"} = %d, want %d", w.route, w.status, got, w.want)
		}
	}
}

// /metrics tells how many logins failed and what is installed: it wants an
// API token of a user who may view (Prometheus' authorization setting), and
// a database outage is a 503 there as everywhere, never a 401. A browser
// session is not a scraper's credential. UPCHECK_METRICS_PUBLIC opens it.
func TestMetricsNeedAToken(t *testing.T) {
	t.Parallel()
	var m *metrics.Metrics
	b := setup(t, withMetrics(&m, false))
	ctx := context.Background()
	token := func(email string) string {
		t.Helper()
		tok, err := b.auth.CreateToken(ctx, email, "prometheus")
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	scrape := func(bearer string) response {
		t.Helper()
		h := map[string]string{}
		if bearer != "" {
			h["Authorization"] = "Bearer " + bearer
		}
		return b.anonymous().do("GET", "/metrics", "", "", h)
	}
	viewer, admin, revoked := token("viewer@example.test"), token("admin@example.test"), token("viewer@example.test")
	tokens, err := b.auth.Tokens(ctx, "viewer@example.test")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.auth.RevokeToken(ctx, tokens[len(tokens)-1].ID); err != nil { // the newest: revoked
		t.Fatal(err)
	}

	r := scrape("")
	wantStatus(t, "no token", r, 401)
	if strings.Contains(r.body, "upcheck_") || r.header.Get("WWW-Authenticate") == "" {
		t.Fatalf("no token: %v %s", r.header, r.body)
	}
	wantStatus(t, "garbage token", scrape("upc_not-a-token"), 401)
	wantStatus(t, "revoked token", scrape(revoked), 401)
	wantStatus(t, "session cookie", b.login("admin@example.test").do("GET", "/metrics", "", "", nil), 401)
	for name, tok := range map[string]string{"viewer": viewer, "admin": admin} {
		r := scrape(tok)
		wantStatus(t, name+" token", r, 200)
		if !strings.Contains(r.body, "# TYPE upcheck_lease_held gauge") || !strings.Contains(r.body, "upcheck_database_up 1") {
			t.Fatalf("%s token: no metrics in\n%s", name, r.body)
		}
	}
	b.db.Pool.Close()
	wantStatus(t, "viewer token while the database is down", scrape(viewer), 503)
}

// UPCHECK_METRICS_PUBLIC=1: anyone may scrape.
func TestMetricsPublic(t *testing.T) {
	t.Parallel()
	var m *metrics.Metrics
	b := setup(t, withMetrics(&m, true))
	r := b.anonymous().do("GET", "/metrics", "", "", nil)
	wantStatus(t, "public metrics without a token", r, 200)
	if !strings.Contains(r.body, "upcheck_database_up 1") {
		t.Fatalf("public metrics:\n%s", r.body)
	}
}
