package web_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
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
