package web_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

const galleryDismissal = "/api/admin/plugins/gallery/advisories/ACME-2026-011/dismissal"

// Dismissing and restoring an advisory through the API: the page's
// service (the summary follows at once, the audit log records it), the
// page's permissions (viewers 403, a session needs its CSRF token, a token
// does not), the page's refusals in words (422), 404 for what does not
// exist, and JSON or nothing as the body.
func TestAPIDismissal(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin, viewer := b.login("admin@example.test"), b.login("viewer@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	vulnerable := func() float64 {
		return decodeJSON[map[string]any](t, admin.do("GET", "/api/admin/plugins/updates/summary", "", "", nil))["vulnerable"].(float64)
	}
	audits := func() (n int) {
		b.db.QueryRow(t, "SELECT count(*) FROM audit_log WHERE action LIKE 'advisory.%'").Scan(&n)
		return n
	}
	before := vulnerable()
	body := map[string]string{"reason": "no images are public", "expires": "2099-12-31"}

	wantError(t, "anonymous", b.anonymous().sendJSON("POST", galleryDismissal, body, false, nil), 401, "authentication required")
	wantStatus(t, "viewer session", viewer.sendJSON("POST", galleryDismissal, body, true, nil), 403)
	wantStatus(t, "viewer token", b.anonymous().sendJSON("POST", galleryDismissal, body, false, b.bearer("viewer@example.test")), 403)
	wantStatus(t, "admin session without its CSRF token", admin.sendJSON("POST", galleryDismissal, body, false, nil), 403)
	wantStatus(t, "viewer DELETE", viewer.sendJSON("DELETE", galleryDismissal, nil, true, nil), 403)
	if got := vulnerable(); got != before || audits() != 0 {
		t.Fatalf("a refused dismissal changed something: vulnerable %v (was %v), %d audit rows", got, before, audits())
	}

	// What the database or the audit log's JSON cannot keep is refused in
	// words, not answered 500.
	for name, refused := range map[string]map[string]string{
		"expiry too far":    {"reason": "x", "expires": "9999-12-31"},
		"NUL in the reason": {"reason": "x\x00y"},
	} {
		wantStatus(t, name, admin.sendJSON("POST", galleryDismissal, refused, true, nil), 422)
	}
	r := admin.sendJSON("POST", galleryDismissal, body, true, nil)
	wantStatus(t, "admin session with CSRF", r, 201)
	d := decodeJSON[map[string]any](t, r)
	if d["reason"] != "no images are public" || d["by"] != "admin@example.test" || d["expires_at"] != "2100-01-01T00:00:00Z" || d["in_force"] != true {
		t.Errorf("dismissal = %s; the expiry holds to the end of its day, UTC", r.body)
	}
	if got := vulnerable(); got != before-1 {
		t.Errorf("vulnerable after the dismissal = %v, want %v", got, before-1)
	}
	// A token needs no CSRF token; a dismissal replaces the standing one.
	r = b.anonymous().sendJSON("POST", galleryDismissal, map[string]string{"reason": "  replaced  "}, false, b.bearer("admin@example.test"))
	wantStatus(t, "admin token", r, 201)
	if d := decodeJSON[map[string]any](t, r); d["reason"] != "replaced" || d["expires_at"] != nil {
		t.Errorf("replacing dismissal = %s; want the trimmed reason and no expiry", r.body)
	}
	if n := audits(); n != 2 {
		t.Errorf("%d audit rows after two dismissals, want 2", n)
	}

	for _, tc := range []struct {
		name, body string
		status     int
		words      string
	}{
		{"no reason", `{"reason": "  "}`, 422, "Give a reason"},
		{"a reason too long", `{"reason": "` + strings.Repeat("x", 501) + `"}`, 422, "too long: keep it to 500 characters"},
		{"an expiry that is not a date", `{"reason": "r", "expires": "31/12/2099"}`, 422, "is not a date"},
		{"an expiry passed", `{"reason": "r", "expires": "2020-01-01"}`, 422, "has passed"},
		{"an unknown member", `{"reason": "r", "until": "2099-01-01"}`, 422, "“until”"},
		{"a member of the wrong type", `{"reason": 5}`, 422, "“reason” must be a string"},
		{"not JSON", `{"reason": `, 400, "not one JSON object"},
		{"two values", `{"reason": "r"} {}`, 400, "not one JSON object"},
		{"a body past 64 KiB", `{"reason": "` + strings.Repeat("x", 70<<10) + `"}`, 413, "64 KiB at most"},
	} {
		wantError(t, tc.name, admin.sendJSON("POST", galleryDismissal, tc.body, true, nil), tc.status, tc.words)
	}
	wantError(t, "a form body", admin.do("POST", galleryDismissal, "reason=r", "application/x-www-form-urlencoded",
		map[string]string{"X-CSRF-Token": admin.csrf}), 415, "application/json")
	wantError(t, "unknown component", admin.sendJSON("POST", "/api/admin/plugins/nope/advisories/ACME-2026-011/dismissal", body, true, nil),
		404, "No installed component has the code “nope”.")
	wantError(t, "unknown advisory", admin.sendJSON("POST", "/api/admin/plugins/gallery/advisories/ACME-0000-1/dismissal", body, true, nil),
		404, "No advisory “ACME-0000-1” affects the installed version of “gallery”")
	wantError(t, "advisory id too long", admin.sendJSON("POST", "/api/admin/plugins/gallery/advisories/"+strings.Repeat("A", 201)+"/dismissal", body, true, nil),
		400, "at most 200 bytes")
	if n := audits(); n != 2 {
		t.Errorf("%d audit rows after refused dismissals, want still 2", n)
	}

	wantStatus(t, "restore without CSRF", admin.sendJSON("DELETE", galleryDismissal, nil, false, nil), 403)
	r = admin.sendJSON("DELETE", galleryDismissal, nil, true, nil)
	wantStatus(t, "restore", r, 204)
	if got := vulnerable(); got != before {
		t.Errorf("vulnerable after the restore = %v, want %v", got, before)
	}
	if n := audits(); n != 3 {
		t.Errorf("%d audit rows after the restore, want 3", n)
	}
	wantError(t, "restore again", admin.sendJSON("DELETE", galleryDismissal, nil, true, nil), 404, "has no standing dismissal")
	wantError(t, "restore on an unknown component", admin.sendJSON("DELETE", "/api/admin/plugins/nope/advisories/X/dismissal", nil, true, nil),
		404, "No installed component")
}

// An advisory id with a slash or a percent sign, path-escaped, is
// dismissed, shown and restored through the API under its own name.
func TestAPIDismissalEscapedIDs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	for _, id := range []string{"GHSA/2026/1", "ACME%2026"} {
		b.db.MustExec(t, `UPDATE component_results SET advisories = jsonb_set(advisories, '{0,id}', to_jsonb($1::text)),
			evaluation = jsonb_set(evaluation, '{advisories,0,id}', to_jsonb($1::text)) WHERE code = 'gallery'`, id)
		path := "/api/admin/plugins/gallery/advisories/" + url.PathEscape(id) + "/dismissal"
		wantStatus(t, "dismiss "+id, admin.sendJSON("POST", path, map[string]string{"reason": "accepted"}, true, nil), 201)
		g := decodeJSON[detail](t, admin.do("GET", "/api/admin/plugins/gallery", "", "", nil))
		if len(g.Advisories) != 1 || g.Advisories[0].ID != id || !g.Advisories[0].Dismissed {
			t.Fatalf("gallery after dismissing %q: %+v", id, g.Advisories)
		}
		wantStatus(t, "restore "+id, admin.sendJSON("DELETE", path, nil, true, nil), 204)
		if n := b.standing(); n != 0 {
			t.Fatalf("%d dismissals stand after restoring %q", n, id)
		}
	}
}

// A JSON body past the limit sent chunked (no Content-Length for the
// limit to refuse at once) is 413 in words too, not a 400.
func TestAPIChunkedBodyTooLarge(t *testing.T) {
	t.Parallel()
	b := setup(t)
	body := io.MultiReader(strings.NewReader(`{"reason": "`), strings.NewReader(strings.Repeat("x", 70<<10)), strings.NewReader(`"}`))
	req, err := http.NewRequest("POST", b.server.URL+galleryDismissal, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range b.bearer("admin@example.test") {
		req.Header.Set(k, v)
	}
	resp, err := b.server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	if req.ContentLength != 0 {
		t.Fatalf("the request had a length (%d): it was not sent chunked", req.ContentLength)
	}
	checkContract(t, req, resp.StatusCode, resp.Header, text)
	wantError(t, "chunked body past the limit", response{status: resp.StatusCode, header: resp.Header, body: string(text)}, 413, "64 KiB at most")
}
