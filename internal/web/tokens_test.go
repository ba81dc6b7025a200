package web_test

import (
	"crypto/sha256"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
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

	wantStatus(t, "revoke without CSRF", postForm(admin, "/admin/tokens/"+id+"/revoke", url.Values{}, false), 403)
	wantStatus(t, "token after a forged revoke", b.anonymous().do("GET", "/api/admin/plugins/updates/summary", "", "", bearer), 200)
	page = postRedirected(t, admin, "/admin/tokens/"+id+"/revoke", url.Values{}, "/admin/tokens")
	wantStatus(t, "revoked token", b.anonymous().do("GET", "/api/admin/plugins/updates/summary", "", "", bearer), 401)
	if row := tokenRow(t, page.body, "prometheus"); !strings.Contains(row, "Revoked") || strings.Contains(row, "token-revoke") ||
		!strings.Contains(page.body, "Token revoked") {
		t.Fatalf("after revoking: %s", row)
	}
	wantStatus(t, "revoke an unknown token", postForm(admin, "/admin/tokens/999999/revoke", url.Values{}, true), 404)
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
