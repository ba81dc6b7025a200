package app

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/config"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/testkit"
)

// UPCHECK_ADMIN_PASSWORD on a later `serve --demo`: applied to the demo
// admin when it is not its password already (signing the account out),
// left alone when it is, and said plainly not to apply when the demo admin
// is gone; without it the output says how to get back in.
func TestDemoAdminPasswordOnALaterStart(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	ctx := context.Background()
	logger := slog.New(slog.DiscardHandler)
	var out bytes.Buffer
	site, err := startDemo(logger, &out)
	if err != nil {
		t.Fatal(err)
	}
	defer site.close()
	cfg, err := config.FromEnv(func(k string) string { return map[string]string{"UPCHECK_DATABASE_URL": d.URL}[k] })
	if err != nil {
		t.Fatal(err)
	}
	a, err := Open(ctx, cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// Cheap hashing: this test is about what is applied, not its cost.
	if a.Auth, err = auth.New(a.Store, auth.Config{Hasher: auth.Hasher(testkit.Hasher())}, logger); err != nil {
		t.Fatal(err)
	}

	start := func(password string) string {
		t.Helper()
		out.Reset()
		a.Config.AdminPassword = password
		if err := site.install(ctx, a); err != nil {
			t.Fatalf("install with %q: %v", password, err)
		}
		return out.String()
	}
	passwordIs := func(email, password string) bool {
		t.Helper()
		ok, err := a.Auth.PasswordIs(ctx, email, password)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	sessions := func() int {
		t.Helper()
		var n int
		d.QueryRow(t, "SELECT count(*) FROM sessions").Scan(&n)
		return n
	}
	signIn := func() {
		d.MustExec(t, `INSERT INTO sessions (id, user_id, csrf_token, expires_at)
			SELECT sha256(gen_random_uuid()::text::bytea), id, 'x', clock_timestamp() + interval '1 hour' FROM users WHERE email = $1`, DemoAdminEmail)
	}

	const first, second = "the first demo password", "the second demo password"
	if got := start(first); !strings.Contains(got, "password: "+first) {
		t.Fatalf("first start printed %q, want the password", got)
	}
	signIn()
	if got := start(""); !strings.Contains(got, "bin/upcheck user passwd --email "+DemoAdminEmail) || !strings.Contains(got, "UPCHECK_ADMIN_PASSWORD") {
		t.Fatalf("a later start without the variable printed %q, want how to change the password", got)
	}
	if got := start(first); !strings.Contains(got, "(unchanged)") || sessions() != 1 {
		t.Fatalf("the same password again: %q, %d sessions; want nothing changed", got, sessions())
	}
	if got := start(second); !strings.Contains(got, "UPCHECK_ADMIN_PASSWORD applied") || !strings.Contains(got, "1 session(s) signed out") {
		t.Fatalf("a new password printed %q, want it applied", got)
	}
	if !passwordIs(DemoAdminEmail, second) || passwordIs(DemoAdminEmail, first) || sessions() != 0 {
		t.Fatalf("after applying: second %v, first %v, %d sessions", passwordIs(DemoAdminEmail, second), passwordIs(DemoAdminEmail, first), sessions())
	}

	out.Reset()
	a.Config.AdminPassword = "short"
	if err := site.install(ctx, a); err == nil || !strings.Contains(err.Error(), "UPCHECK_ADMIN_PASSWORD") {
		t.Fatalf("a password the rule refuses: %v, want the start to fail naming the variable", err)
	}
	if !passwordIs(DemoAdminEmail, second) {
		t.Fatal("a refused password changed the admin's")
	}

	// The operator renamed the demo admin: nothing is applied to anyone.
	d.MustExec(t, "UPDATE users SET email = 'ops@example.test'")
	if got := start("a third demo password"); !strings.Contains(got, "was NOT applied") || !strings.Contains(got, "bin/upcheck user passwd") {
		t.Fatalf("no demo admin: printed %q, want it said that nothing was applied", got)
	}
	if !passwordIs("ops@example.test", second) {
		t.Fatal("the password was applied to another account")
	}
}
