package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/web"
)

// sessions counts the stored sessions.
func (b *bundle) sessions() int {
	b.t.Helper()
	var n int
	if err := b.db.Pool.QueryRow(context.Background(), "SELECT count(*) FROM sessions").Scan(&n); err != nil {
		b.t.Fatal(err)
	}
	return n
}

// A login form posted from another site (login CSRF: the victim would act
// in the attacker's account) is refused before the password is checked: 403,
// no session and no cookie. The same post from this site, or from a client
// that sends neither header, signs in.
func TestLoginRefusesCrossSitePosts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	form := url.Values{"email": {"admin@example.test"}, "password": {testPassword}, "next": {"/admin"}}.Encode()
	const formType = "application/x-www-form-urlencoded"

	for name, h := range map[string]map[string]string{
		"cross-site origin and fetch site": {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
		"cross-site origin":                {"Origin": "https://evil.example"},
		"same-site fetch site":             {"Sec-Fetch-Site": "same-site"},
		"null origin":                      {"Origin": "null"},
	} {
		r := b.anonymous().do("POST", "/login", form, formType, h)
		if r.status != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", name, r.status)
		}
		if c := r.header.Values("Set-Cookie"); len(c) != 0 {
			t.Errorf("%s: Set-Cookie %q on a refused login", name, c)
		}
	}
	if n := b.sessions(); n != 0 {
		t.Fatalf("%d sessions after cross-site logins, want 0", n)
	}

	for name, h := range map[string]map[string]string{
		"same origin":   {"Origin": b.server.URL, "Sec-Fetch-Site": "same-origin"},
		"typed address": {"Sec-Fetch-Site": "none"},
		"no headers":    nil,
	} {
		r := b.anonymous().do("POST", "/login", form, formType, h)
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/admin" || len(r.header.Values("Set-Cookie")) != 1 {
			t.Errorf("%s: %d to %q with cookies %q, want 303 to /admin with the session cookie", name, r.status, r.header.Get("Location"), r.header.Values("Set-Cookie"))
		}
	}
	if n := b.sessions(); n != 3 {
		t.Fatalf("%d sessions after three good logins, want 3", n)
	}
}

// loginFrom posts the login form as a client behind a proxy that sent
// X-Forwarded-For xff ("" for none).
func (b *bundle) loginFrom(email, password, xff string) response {
	b.t.Helper()
	h := map[string]string{}
	if xff != "" {
		h["X-Forwarded-For"] = xff
	}
	form := url.Values{"email": {email}, "password": {password}, "next": {"/admin"}}.Encode()
	return b.anonymous().do("POST", "/login", form, "application/x-www-form-urlencoded", h)
}

// attemptKeys lists the login throttling keys counted so far.
func (b *bundle) attemptKeys() []string {
	b.t.Helper()
	rows, err := b.db.Pool.Query(context.Background(), "SELECT key FROM login_attempts ORDER BY key")
	if err != nil {
		b.t.Fatal(err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		b.t.Fatal(err)
	}
	return keys
}

// Behind a trusted reverse proxy every client arrives from the proxy's
// address; the client is the rightmost X-Forwarded-For entry that is not a
// proxy. One client's failures, with made-up emails or with the admin's,
// throttle that client and not the admin signing in from elsewhere; what a
// client writes to the left of the proxy's entry changes nothing.
func TestLoginThrottlePerClientBehindAProxy(t *testing.T) {
	t.Parallel()
	b := setup(t, func(_ *bundle, d *web.Deps) {
		d.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	})
	var last response
	for i := range 21 { // made-up emails, a new forged entry each time, the proxy appends the real one
		last = b.loginFrom(fmt.Sprintf("nobody%d@example.test", i), "wrong password here", fmt.Sprintf("198.51.100.%d, 203.0.113.1", i))
		if i < 20 {
			wantStatus(t, "made-up email", last, 401)
		}
	}
	wantStatus(t, "21st failure from one client", last, 429)
	wantStatus(t, "the admin's password from the throttled client", b.loginFrom("admin@example.test", testPassword, "203.0.113.1"), 429)
	wantStatus(t, "the admin from another client", b.loginFrom("admin@example.test", testPassword, "203.0.113.2"), 303)

	for range 5 {
		wantStatus(t, "wrong password for the admin", b.loginFrom("admin@example.test", "wrong password here", "203.0.113.3"), 401)
	}
	wantStatus(t, "the guessing client", b.loginFrom("admin@example.test", testPassword, "203.0.113.3"), 429)
	wantStatus(t, "the admin from a client never seen", b.loginFrom("admin@example.test", testPassword, "203.0.113.4"), 303)

	keys := b.attemptKeys()
	for _, want := range []string{"ip:203.0.113.1", "ip:203.0.113.2", "ip:203.0.113.3", "ip:203.0.113.4"} {
		if !slices.Contains(keys, want) {
			t.Errorf("no throttling key %s in %q", want, keys)
		}
	}
	for _, k := range keys {
		if strings.Contains(k, "127.0.0.1") || strings.Contains(k, "198.51.100.") {
			t.Errorf("throttling key %s: the proxy's address or a forged entry was counted", k)
		}
	}
}

// From a peer that is not a trusted proxy, X-Forwarded-For is the client's
// own words and is ignored: a new forged address on every attempt does not
// escape the per-address lock.
func TestLoginThrottleIgnoresForwardedForFromUntrustedPeers(t *testing.T) {
	t.Parallel()
	b := setup(t, func(_ *bundle, d *web.Deps) { d.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")} })
	var last response
	for i := range 21 {
		last = b.loginFrom(fmt.Sprintf("nobody%d@example.test", i), "wrong password here", fmt.Sprintf("203.0.113.%d", i))
	}
	wantStatus(t, "21st failure from one peer with forged forwarding headers", last, 429)
	if keys := b.attemptKeys(); !slices.Contains(keys, "ip:127.0.0.1") || slices.ContainsFunc(keys, func(k string) bool { return strings.Contains(k, "203.0.113.") }) {
		t.Fatalf("throttling keys %q: want the peer's address only", keys)
	}
}
