package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A signed-in user who meets a 404 or a 403 keeps the navigation and the
// account: an unknown plugin, a page that does not exist inside the AdminCP
// or outside it, an action they may not take. Without a session, and while
// the database is down, the bare error page answers.
func TestErrorPageKeepsTheLayout(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin, viewer := b.login("admin@example.test"), b.login("viewer@example.test")
	const nav, user, errorCard = `<nav class="main-nav" aria-label="Main">`, `data-testid="nav-user"`, `data-testid="error-page"`
	inLayout := func(name string, r response, status int, email string) {
		t.Helper()
		wantStatus(t, name, r, status)
		for _, want := range []string{errorCard, nav, user, email, `<main id="main"`} {
			if !strings.Contains(r.body, want) {
				t.Fatalf("%s: the error page lacks %q:\n%s", name, want, r.body)
			}
		}
		if strings.Count(r.body, "<h1") != 1 {
			t.Fatalf("%s: want one h1:\n%s", name, r.body)
		}
	}
	bare := func(name string, r response, status int) {
		t.Helper()
		wantStatus(t, name, r, status)
		if !strings.Contains(r.body, errorCard) || strings.Contains(r.body, nav) || strings.Contains(r.body, user) {
			t.Fatalf("%s: want the bare error page:\n%s", name, r.body)
		}
	}

	unknown := admin.do("GET", "/admin/plugins/nope", "", "", nil)
	inLayout("unknown plugin", unknown, http.StatusNotFound, "admin@example.test")
	if want := "No installed component has the code “nope”."; !strings.Contains(unknown.body, want) {
		t.Fatalf("unknown plugin: the page does not say %q:\n%s", want, unknown.body)
	}
	inLayout("unknown AdminCP page", admin.do("GET", "/admin/nowhere", "", "", nil), http.StatusNotFound, "admin@example.test")
	inLayout("unknown page outside the AdminCP", viewer.do("GET", "/nowhere", "", "", nil), http.StatusNotFound, "viewer@example.test")
	dismiss := url.Values{"csrf_token": {viewer.csrf}}.Encode()
	inLayout("a viewer's dismissal", viewer.do("POST", "/admin/plugins/gallery/advisories/ACME-2026-011/dismiss", dismiss,
		"application/x-www-form-urlencoded", nil), http.StatusForbidden, "viewer@example.test")

	bare("signed out", b.anonymous().do("GET", "/nowhere", "", "", nil), http.StatusNotFound)
	b.db.Pool.Close() // the database is gone from now on
	bare("database down", admin.do("GET", "/admin/plugins/nope", "", "", nil), http.StatusServiceUnavailable)
}
