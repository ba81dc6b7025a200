package web_test

import (
	"crypto/sha256"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/metrics"
)

var tokenSecret = regexp.MustCompile(`upc_[A-Za-z0-9_-]{43}`)

// postForm posts a form as a browser does, with the session's CSRF token
// unless withCSRF is false.
func postForm(c *client, path string, v url.Values, withCSRF bool) response {
	if withCSRF {
		v.Set("csrf_token", c.csrf)
	}
	return c.do("POST", path, v.Encode(), "application/x-www-form-urlencoded", nil)
}

// postRedirected posts a form and follows its answer, which must be a 303
// to want, as a browser does; it returns the page.
func postRedirected(t *testing.T, c *client, path string, v url.Values, want string) response {
	t.Helper()
	r := postForm(c, path, v, true)
	if r.status != http.StatusSeeOther || r.header.Get("Location") != want {
		t.Fatalf("POST %s: %d to %q, want 303 to %q; body %s", path, r.status, r.header.Get("Location"), want, r.body)
	}
	return c.do("GET", want, "", "", nil)
}

// An admin creates a token for another account in the AdminCP: the post
// redirects, the secret is shown once on the page it leads to (not cached,
// gone on reload), only its hash is stored, the
// token acts with the owner's role, its use is listed, and the admin
// revokes it; every change needs the CSRF token.
func TestTokensSectionForAdmins(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")

	if !strings.Contains(admin.do("GET", "/admin", "", "", nil).body, `href="/admin/tokens"`) {
		t.Fatal("the admin's navigation has no link to the API tokens")
	}
	page := admin.do("GET", "/admin/tokens", "", "", nil)
	wantStatus(t, "tokens page", page, 200)
	if !strings.Contains(page.body, `data-testid="tokens-empty"`) || !strings.Contains(page.body, `<option value="viewer@example.test">`) {
		t.Fatalf("empty tokens page: %s", page.body)
	}

	wantStatus(t, "create without CSRF", postForm(admin, "/admin/tokens", url.Values{"name": {"prometheus"}, "owner": {"viewer@example.test"}}, false), 403)
	var n int
	b.db.QueryRow(t, "SELECT count(*) FROM api_tokens").Scan(&n)
	if n != 0 {
		t.Fatal("a token was created without the CSRF token")
	}
	r := postRedirected(t, admin, "/admin/tokens", url.Values{"name": {"bad\x07name"}, "owner": {"viewer@example.test"}}, "/admin/tokens")
	if !strings.Contains(r.body, "The token was not created: the name must be at most 100 characters") {
		t.Fatalf("bad name answer: %s", r.body)
	}
	r = postRedirected(t, admin, "/admin/tokens", url.Values{"name": {"x"}, "owner": {"nobody@example.test"}}, "/admin/tokens")
	if !strings.Contains(r.body, "that account does not exist") {
		t.Fatalf("create for an unknown account: %s", r.body)
	}

	r = postRedirected(t, admin, "/admin/tokens", url.Values{"name": {"prometheus"}, "owner": {"viewer@example.test"}}, "/admin/tokens")
	secret := tokenSecret.FindString(r.body)
	if secret == "" || !strings.Contains(r.body, `data-testid="token-secret"`) || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create answer: no secret shown once (Cache-Control %q)", r.header.Get("Cache-Control"))
	}
	var stored []byte
	b.db.QueryRow(t, "SELECT token_hash FROM api_tokens WHERE name = 'prometheus'").Scan(&stored)
	if sum := sha256.Sum256([]byte(secret)); string(stored) != string(sum[:]) {
		t.Fatal("api_tokens does not hold the SHA-256 of the secret")
	}
	var plain int
	b.db.QueryRow(t, `SELECT (SELECT count(*) FROM api_tokens WHERE position(convert_to($1, 'UTF8') in token_hash) > 0 OR name LIKE '%upc_%')
		+ (SELECT count(*) FROM audit_log WHERE detail::text LIKE '%' || $1 || '%')`, secret).Scan(&plain)
	if plain != 0 {
		t.Fatal("the secret is stored in plain text")
	}
	var actor string
	b.db.QueryRow(t, "SELECT u.email FROM audit_log a JOIN users u ON u.id = a.user_id WHERE a.action = 'token.create'").Scan(&actor)
	if actor != "admin@example.test" {
		t.Fatalf("token.create audited as %q, want the admin who acted", actor)
	}
	if again := admin.do("GET", "/admin/tokens", "", "", nil); strings.Contains(again.body, secret) || tokenSecret.MatchString(again.body) {
		t.Fatal("the secret is shown again")
	}

	// It acts as the viewer: reads, but no tokens section and no changes.
	bearer := map[string]string{"Authorization": "Bearer " + secret}
	wantStatus(t, "token reads the summary", b.anonymous().do("GET", "/api/admin/plugins/updates/summary", "", "", bearer), 200)
	wantStatus(t, "viewer's token on the tokens section", b.anonymous().do("GET", "/admin/tokens", "", "", bearer), 403)
	row := tokenRow(t, admin.do("GET", "/admin/tokens", "", "", nil).body, "prometheus")
	if !strings.Contains(row, "viewer@example.test") || !strings.Contains(row, "just now") || !strings.Contains(row, "Active") {
		t.Fatalf("the token's row after a use: %s", row)
	}
	id := regexp.MustCompile(`data-id="(\d+)"`).FindStringSubmatch(row)[1]

	wantStatus(t, "revoke without CSRF", postForm(admin, "/admin/tokens/"+id+"/revoke", url.Values{"confirmed": {"yes"}}, false), 403)
	wantStatus(t, "token after a forged revoke", b.anonymous().do("GET", "/api/admin/plugins/updates/summary", "", "", bearer), 200)

	// Revoking asks first, without JavaScript too: a post without the
	// answer is sent to the question, and revokes nothing.
	r = postForm(admin, "/admin/tokens/"+id+"/revoke", url.Values{}, true)
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/admin/tokens/"+id+"/revoke" {
		t.Fatalf("revoke without confirmed=yes: %d to %q, want 303 to the question", r.status, r.header.Get("Location"))
	}
	wantStatus(t, "token after an unconfirmed revoke", b.anonymous().do("GET", "/api/admin/plugins/updates/summary", "", "", bearer), 200)
	question := admin.do("GET", "/admin/tokens/"+id+"/revoke", "", "", nil)
	wantStatus(t, "the question", question, 200)
	if !strings.Contains(question.body, `data-testid="confirm"`) || !strings.Contains(question.body, "Revoke the token prometheus of viewer@example.test?") ||
		!strings.Contains(question.body, `action="/admin/tokens/`+id+`/revoke"`) || !strings.Contains(question.body, `name="confirmed" value="yes"`) ||
		!strings.Contains(question.body, `href="/admin/tokens"`) || !strings.Contains(question.body, "It was last used at ") {
		t.Fatalf("the revoke question: %s", question.body)
	}
	page = postRedirected(t, admin, "/admin/tokens/"+id+"/revoke", url.Values{"confirmed": {"yes"}}, "/admin/tokens")
	wantStatus(t, "revoked token", b.anonymous().do("GET", "/api/admin/plugins/updates/summary", "", "", bearer), 401)
	if row := tokenRow(t, page.body, "prometheus"); !strings.Contains(row, "Revoked") || strings.Contains(row, "token-revoke") ||
		!strings.Contains(page.body, "Token prometheus of viewer@example.test revoked") {
		t.Fatalf("after revoking: %s", row)
	}
	// A token that no longer works needs no question.
	if r := postRedirected(t, admin, "/admin/tokens/"+id+"/revoke", url.Values{}, "/admin/tokens/"+id+"/revoke"); r.status != http.StatusSeeOther ||
		r.header.Get("Location") != "/admin/tokens" {
		t.Fatalf("the question for a revoked token: %d to %q, want 303 to the list", r.status, r.header.Get("Location"))
	}
	wantStatus(t, "revoke an unknown token", postForm(admin, "/admin/tokens/999999/revoke", url.Values{"confirmed": {"yes"}}, true), 404)
	wantStatus(t, "ask about an unknown token", admin.do("GET", "/admin/tokens/999999/revoke", "", "", nil), 404)
	wantStatus(t, "ask about a token that is not a number", admin.do("GET", "/admin/tokens/abc/revoke", "", "", nil), 400)
}

// The AdminCP creates a read-only token with an expiry: the list shows
// its id, scope and expiry date; it reads what its owner reads (an
// admin's: the audit log too) and gets 403 on every change, the check
// included, while a full token of the same admin runs the check; the
// token.create audit row says its scope and expiry in words. Once past
// its expiry it answers 401 saying it expired, and the list says Expired.
// A lifetime the form does not offer is refused with the form refilled.
func TestTokenScopeAndExpiryInTheAdminCP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")

	page := postRedirected(t, admin, "/admin/tokens", url.Values{"name": {"grafana"}, "owner": {"admin@example.test"},
		"read_only": {"yes"}, "expires": {"30d"}}, "/admin/tokens")
	secret := tokenSecret.FindString(page.body)
	if secret == "" || page.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("no secret shown once (Cache-Control %q)", page.header.Get("Cache-Control"))
	}
	var id, expiresDay string
	b.db.QueryRow(t, "SELECT id::text, to_char(expires_at AT TIME ZONE 'UTC', 'FMDD Mon YYYY') FROM api_tokens WHERE name = 'grafana' AND read_only AND expires_at BETWEEN now() + interval '29 days 23 hours' AND now() + interval '30 days 1 hour'").Scan(&id, &expiresDay)
	row := tokenRow(t, page.body, "grafana")
	for _, want := range []string{`data-testid="token-id">` + id + `<`, `data-testid="token-scope">Read-only<`, ">" + expiresDay + "</time>", "Active"} {
		if !strings.Contains(row, want) {
			t.Fatalf("the read-only token's row has no %q: %s", want, row)
		}
	}
	var scope, expires string
	b.db.QueryRow(t, "SELECT detail->>'scope', detail->>'expires_at' FROM audit_log WHERE action = 'token.create' AND detail->>'token_id' = $1", id).Scan(&scope, &expires)
	if scope != "read-only" || !strings.HasPrefix(expires, "20") {
		t.Fatalf("token.create audit: scope %q, expires %q", scope, expires)
	}
	audit := admin.do("GET", "/admin/audit", "", "", nil)
	if !strings.Contains(audit.body, "scope: read-only") || !strings.Contains(audit.body, "expires at: "+expires) {
		t.Fatalf("the audit page does not word the token's scope and expiry: %s", audit.body)
	}
	csv := admin.do("GET", "/admin/audit.csv", "", "", nil)
	if !strings.Contains(csv.body, `""scope"": ""read-only""`) || !strings.Contains(csv.body, `""expires_at"": ""`+expires+`""`) {
		t.Fatalf("the audit CSV does not hold the token's scope and expiry: %s", csv.body)
	}

	ro := map[string]string{"Authorization": "Bearer " + secret}
	anon := b.anonymous()
	wantStatus(t, "read-only token reads the summary", anon.do("GET", "/api/admin/plugins/updates/summary", "", "", ro), 200)
	wantStatus(t, "read-only admin token reads the audit log", anon.do("GET", "/admin/audit", "", "", ro), 200)
	r := anon.do("POST", "/api/admin/plugins/updates/check", "", "", ro)
	wantStatus(t, "read-only token runs a check", r, 403)
	if !strings.Contains(r.body, "read-only") {
		t.Fatalf("the 403 does not say the token is read-only: %s", r.body)
	}
	wantStatus(t, "read-only token checks from the dashboard", anon.do("POST", "/admin/check", "", "", ro), 403)
	wantStatus(t, "read-only token dismisses", anon.do("POST", "/admin/plugins/gallery/advisories/ACME-2026-011/dismiss",
		"reason=because", "application/x-www-form-urlencoded", ro), 403)
	wantStatus(t, "read-only token logs out", anon.do("POST", "/logout", "", "", ro), 403)
	var runs, dismissals int
	b.db.QueryRow(t, "SELECT (SELECT count(*) FROM check_runs), (SELECT count(*) FROM advisory_dismissals)").Scan(&runs, &dismissals)
	if runs != 0 || dismissals != 0 {
		t.Fatalf("a read-only token changed something: %d runs, %d dismissals", runs, dismissals)
	}
	full, err := b.auth.CreateToken(t.Context(), "admin@example.test", "full")
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "the same admin's full token runs a check", anon.do("POST", "/api/admin/plugins/updates/check", "", "",
		map[string]string{"Authorization": "Bearer " + full}), 200)

	b.db.MustExec(t, "UPDATE api_tokens SET expires_at = clock_timestamp() - interval '1 second' WHERE id = $1::bigint", id)
	r = anon.do("GET", "/api/admin/plugins/updates/summary", "", "", ro)
	wantStatus(t, "expired token", r, 401)
	if !strings.Contains(r.body, "expired") || !strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("the 401 of an expired token does not say it expired: %q, %s", r.header.Get("WWW-Authenticate"), r.body)
	}
	if row := tokenRow(t, admin.do("GET", "/admin/tokens", "", "", nil).body, "grafana"); !strings.Contains(row, "Expired") || strings.Contains(row, "token-revoke") {
		t.Fatalf("the expired token's row: %s", row)
	}

	page = postRedirected(t, admin, "/admin/tokens", url.Values{"name": {"ci"}, "owner": {"viewer@example.test"},
		"read_only": {"yes"}, "expires": {"soon"}}, "/admin/tokens")
	if !strings.Contains(page.body, "choose when it expires") || !strings.Contains(page.body, `value="ci"`) ||
		!regexp.MustCompile(`id="token-read-only"[^>]*checked`).MatchString(page.body) ||
		!strings.Contains(page.body, `<option value="viewer@example.test" selected>`) {
		t.Fatalf("a refused lifetime: %s", page.body)
	}
	var n int
	b.db.QueryRow(t, "SELECT count(*) FROM api_tokens WHERE name = 'ci'").Scan(&n)
	if n != 0 {
		t.Fatal("a token was created with a lifetime the form does not offer")
	}
}

// A viewer neither sees nor changes tokens: no link, 403 on the page and
// on both actions, and nothing changes.
func TestViewerCannotSeeOrRevokeTokens(t *testing.T) {
	t.Parallel()
	b := setup(t)
	viewer := b.login("viewer@example.test")
	secret, err := b.auth.CreateToken(t.Context(), "admin@example.test", "deploy")
	if err != nil {
		t.Fatal(err)
	}
	var id string
	b.db.QueryRow(t, "SELECT id::text FROM api_tokens").Scan(&id)

	if strings.Contains(viewer.do("GET", "/admin", "", "", nil).body, "/admin/tokens") {
		t.Error("a viewer's navigation links to the API tokens")
	}
	r := viewer.do("GET", "/admin/tokens", "", "", nil)
	wantStatus(t, "viewer GET tokens", r, 403)
	if strings.Contains(r.body, "deploy") {
		t.Error("the 403 page shows a token")
	}
	wantStatus(t, "viewer create", postForm(viewer, "/admin/tokens", url.Values{"name": {"mine"}, "owner": {"admin@example.test"}}, true), 403)
	wantStatus(t, "viewer revoke", postForm(viewer, "/admin/tokens/"+id+"/revoke", url.Values{}, true), 403)
	var n int
	var revoked bool
	b.db.QueryRow(t, "SELECT count(*), bool_or(revoked) FROM api_tokens").Scan(&n, &revoked)
	if n != 1 || revoked {
		t.Fatalf("after the viewer's attempts: %d tokens, revoked %v", n, revoked)
	}
	// An admin's API token cannot manage tokens either.
	bearer := map[string]string{"Authorization": "Bearer " + secret}
	wantStatus(t, "admin token lists tokens", b.anonymous().do("GET", "/admin/tokens", "", "", bearer), 403)
	wantStatus(t, "admin token revokes", b.anonymous().do("POST", "/admin/tokens/"+id+"/revoke", "", "", bearer), 403)
}

// tokenRow is the table row of the token named name on the tokens page.
func tokenRow(t *testing.T, page, name string) string {
	t.Helper()
	for _, row := range strings.Split(page, "<tr ")[1:] {
		row, _, _ = strings.Cut(row, "</tr>")
		if strings.Contains(row, `<th scope="row">`+name+`</th>`) {
			return row
		}
	}
	t.Fatalf("no row for token %q", name)
	return ""
}

// A login lockout is in the audit log once, however many attempts it
// refuses, in words: what was locked, which account from which address,
// for how long, by nobody but the login throttle; the CSV holds it too.
func TestLoginLockoutInTheAuditLog(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.anonymous()
	refused := 0
	for range 9 {
		r := c.do("POST", "/login", "email=viewer%40example.test&password=wrong-password-here", "application/x-www-form-urlencoded", nil)
		if r.status == http.StatusTooManyRequests {
			refused++
		}
	}
	if refused < 3 {
		t.Fatalf("%d attempts refused, want the ones after the fifth failure", refused)
	}
	admin := b.login("admin@example.test")
	page := admin.do("GET", "/admin/audit?kind=account", "", "", nil)
	wantStatus(t, "audit log", page, 200)
	if n := strings.Count(page.body, "Sign-ins locked after too many failed attempts"); n != 1 {
		t.Fatalf("%d lockout entries on the audit page, want 1: %s", n, page.body)
	}
	for _, want := range []string{"upcheck’s login throttle", "locked: one account from one address", "email: viewer@example.test",
		"address: 127.0.0.1", "lockout: 15 minutes", "attempts: 6", "failures allowed: 5"} {
		if !strings.Contains(page.body, want) {
			t.Fatalf("the lockout entry does not say %q: %s", want, page.body)
		}
	}
	csv := admin.do("GET", "/admin/audit.csv?kind=account", "", "", nil)
	if n := strings.Count(csv.body, ",user.lockout,"); n != 1 || !strings.Contains(csv.body, `""locked"": ""one account from one address""`) {
		t.Fatalf("the CSV has %d lockout rows, want 1 saying what was locked: %s", n, csv.body)
	}
}

// Prometheus' token may be read-only: /metrics is a read. Once it expires
// the scrape is 401 saying so, as on every other route.
func TestReadOnlyAndExpiredTokensOnMetrics(t *testing.T) {
	t.Parallel()
	var m *metrics.Metrics
	b := setup(t, withMetrics(&m, false))
	secret, tk, err := b.auth.CreateTokenFor(t.Context(), auth.TokenRequest{Email: "viewer@example.test", Name: "prometheus",
		ReadOnly: true, Expires: 30 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	bearer := map[string]string{"Authorization": "Bearer " + secret}
	wantStatus(t, "read-only token scrapes", b.anonymous().do("GET", "/metrics", "", "", bearer), 200)
	b.db.MustExec(t, "UPDATE api_tokens SET expires_at = clock_timestamp() - interval '1 second' WHERE id = $1", tk.ID)
	r := b.anonymous().do("GET", "/metrics", "", "", bearer)
	wantStatus(t, "expired token scrapes", r, 401)
	if !strings.Contains(r.body, "expired") || !strings.Contains(r.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Fatalf("the 401 of an expired scrape token: %q, %s", r.header.Get("WWW-Authenticate"), r.body)
	}
}
