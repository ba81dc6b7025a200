package app

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/config"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/testkit"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// serve starts Serve on a fresh database, with env on top of the database
// and listen settings, and returns its base URL; the server stops when the
// test ends, and the test fails if it did not stop cleanly.
func serve(t *testing.T, d *pgtest.DB, env map[string]string) string {
	t.Helper()
	vars := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_LISTEN": "127.0.0.1:0"}
	maps.Copy(vars, env)
	cfg, err := config.FromEnv(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), func(a string) { addr <- a })
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(ShutdownTimeout):
			t.Error("serve did not stop")
		}
	})
	select {
	case a := <-addr:
		return "http://" + a
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("serve did not start")
	}
	return ""
}

func status(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// /readyz follows the database: 503 while it refuses connections, 200 again
// once it accepts them, with no restart in between; /healthz stays 200.
func TestReadinessFollowsTheDatabase(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	base := serve(t, d, nil)
	if got := status(t, base+"/healthz"); got != http.StatusOK {
		t.Fatalf("/healthz = %d", got)
	}
	if got := status(t, base+"/readyz"); got != http.StatusOK {
		t.Fatalf("/readyz = %d, want 200", got)
	}

	admin, err := pgx.Connect(context.Background(), d.URLFor("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	ident := pgx.Identifier{d.Name}.Sanitize()
	mustExec := func(sql string) {
		t.Helper()
		if _, err := admin.Exec(context.Background(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	mustExec("ALTER DATABASE " + ident + " ALLOW_CONNECTIONS false")
	mustExec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + d.Name + "'")
	if got := status(t, base+"/readyz"); got != http.StatusServiceUnavailable {
		t.Fatalf("/readyz with the database refusing connections = %d, want 503", got)
	}
	if got := status(t, base+"/healthz"); got != http.StatusOK {
		t.Fatalf("/healthz while the database is down = %d, want 200", got)
	}
	mustExec("ALTER DATABASE " + ident + " ALLOW_CONNECTIONS true")
	if got := status(t, base+"/readyz"); got != http.StatusOK {
		t.Fatalf("/readyz after the database came back = %d, want 200", got)
	}
}

func body(t *testing.T, url string) string {
	t.Helper()
	_, b := get(t, url, "")
	return b
}

// get fetches url, with an "Authorization: Bearer" header when token is set.
func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// /metrics exports the check, lease, fetch, component and HTTP series, and
// database_up follows the database. Public here, so that a scrape does not
// need the database to check a token.
func TestMetrics(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	base := serve(t, d, map[string]string{"UPCHECK_METRICS_PUBLIC": "1"})
	// The catch-up check runs at start (nothing installed: it completes at once).
	wait.True(t, "a completed check in /metrics", wait.Guard, func() bool {
		return strings.Contains(body(t, base+"/metrics"), `upcheck_check_runs_total{status="completed",trigger="scheduled"} 1`)
	})
	status(t, base+"/healthz")
	m := body(t, base+"/metrics")
	for _, want := range []string{
		`upcheck_lease_acquisitions_total{result="acquired"} 1`,
		`upcheck_lease_held 0`,
		`upcheck_database_up 1`,
		`upcheck_components{state="installed"} 0`,
		`upcheck_failing_sources 0`,
		`upcheck_check_duration_seconds_count{trigger="scheduled"} 1`,
		`upcheck_http_requests_total{route="/healthz",status="200"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	admin, err := pgx.Connect(context.Background(), d.URLFor("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	ident := pgx.Identifier{d.Name}.Sanitize()
	mustExec := func(sql string) {
		t.Helper()
		if _, err := admin.Exec(context.Background(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	mustExec("ALTER DATABASE " + ident + " ALLOW_CONNECTIONS false")
	mustExec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + d.Name + "'")
	if m := body(t, base+"/metrics"); !strings.Contains(m, "upcheck_database_up 0") {
		t.Error("database_up is not 0 while the database refuses connections")
	}
	mustExec("ALTER DATABASE " + ident + " ALLOW_CONNECTIONS true")
}

// By default /metrics wants a viewer's API token (Prometheus'
// authorization setting): without one, 401 and nothing else.
func TestMetricsNeedATokenWhenServed(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	base := serve(t, d, nil)
	svc, err := auth.New(store.New(d.Pool), auth.Config{Hasher: auth.Hasher(testkit.Hasher())}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.CreateUser(ctx, "prometheus@example.test", auth.RoleViewer, "a long enough password"); err != nil {
		t.Fatal(err)
	}
	token, err := svc.CreateToken(ctx, "prometheus@example.test", "prometheus")
	if err != nil {
		t.Fatal(err)
	}
	if code, b := get(t, base+"/metrics", ""); code != http.StatusUnauthorized || strings.Contains(b, "upcheck_") {
		t.Fatalf("/metrics without a token: %d\n%s", code, b)
	}
	if code, b := get(t, base+"/metrics", token); code != http.StatusOK || !strings.Contains(b, "upcheck_database_up 1") {
		t.Fatalf("/metrics with a viewer's token: %d\n%s", code, b)
	}
}

// UPCHECK_TRUSTED_PROXIES reaches the login throttle: behind the proxy
// (here the test itself, on loopback), one client locked out by its own
// failures does not lock out another.
func TestTrustedProxiesWhenServed(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	base := serve(t, d, map[string]string{"UPCHECK_TRUSTED_PROXIES": "127.0.0.0/8,::1"})
	svc, err := auth.New(store.New(d.Pool), auth.Config{Hasher: auth.Hasher(testkit.Hasher())}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateUser(context.Background(), "admin@example.test", auth.RoleAdmin, "a long enough password"); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	login := func(password, xff string) int {
		t.Helper()
		form := url.Values{"email": {"admin@example.test"}, "password": {password}}
		req, err := http.NewRequest(http.MethodPost, base+"/login", strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", xff)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for range 5 {
		if got := login("a wrong password", "203.0.113.1"); got != http.StatusUnauthorized {
			t.Fatalf("wrong password: %d, want 401", got)
		}
	}
	if got := login("a long enough password", "203.0.113.1"); got != http.StatusTooManyRequests {
		t.Fatalf("the guessing client: %d, want 429", got)
	}
	if got := login("a long enough password", "203.0.113.2"); got != http.StatusSeeOther {
		t.Fatalf("another client behind the proxy: %d, want 303", got)
	}
}

// A server started before its database waits for it instead of exiting:
// the database's port refuses connections for a second, then a proxy to it
// opens, and the same process serves.
func TestServeWaitsForTheDatabaseAtStart(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	u, err := url.Parse(d.URL)
	if err != nil {
		t.Fatal(err)
	}
	target := net.JoinHostPort("127.0.0.1", u.Query().Get("port"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	proxyAddr := ln.Addr().String()
	ln.Close() // refused until the proxy opens

	dbURL := "postgres://upcheck@" + proxyAddr + "/" + d.Name + "?sslmode=disable"
	cfg, err := config.FromEnv(func(k string) string {
		return map[string]string{"UPCHECK_DATABASE_URL": dbURL, "UPCHECK_LISTEN": "127.0.0.1:0"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan string, 1)
	done := make(chan error, 1)
	var log testkit.Buffer
	go func() {
		done <- Serve(ctx, cfg, slog.New(slog.NewTextHandler(&log, nil)), func(a string) { addr <- a })
	}()
	// Serve says it found the database down and will retry; by then it
	// has neither given up nor listened.
	wait.True(t, "serve finds the database down and retries", wait.Guard, func() bool {
		return strings.Contains(log.String(), "database unavailable at start; retrying")
	})
	select {
	case err := <-done:
		t.Fatalf("serve gave up while the database was down: %v", err)
	case <-addr:
		t.Fatal("serve listened before it could migrate")
	default:
	}

	proxy, err := net.Listen("tcp", proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	go func() {
		for {
			c, err := proxy.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				s, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer s.Close()
				go io.Copy(s, c)
				io.Copy(c, s)
			}()
		}
	}()
	select {
	case a := <-addr:
		if got := status(t, "http://"+a+"/readyz"); got != http.StatusOK {
			t.Fatalf("/readyz = %d", got)
		}
	case err := <-done:
		t.Fatalf("serve exited: %v", err)
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not start once the database was reachable")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
