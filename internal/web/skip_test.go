package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// The demo's core (1.9.0) is offered 1.10.0, a plain release; the blog's
// offered 2.4.0 is a security release.
const (
	coreSkipPath   = "/admin/plugins/core/skip"
	coreUnskipPath = "/admin/plugins/core/unskip"
	apiCoreSkip    = "/api/admin/plugins/core/skip"
)

// updatesAvailable is the summary's count of offered updates.
func (c *client) updatesAvailable() float64 {
	c.b.t.Helper()
	return decodeJSON[map[string]any](c.b.t, c.do("GET", "/api/admin/plugins/updates/summary", "", "", nil))["updates_available"].(float64)
}

// skipAudits counts the audit rows of skips and their ends.
func (b *bundle) skipAudits() (n int) {
	b.t.Helper()
	b.db.QueryRow(b.t, "SELECT count(*) FROM audit_log WHERE action IN ('component.skip', 'component.unskip')").Scan(&n)
	return n
}

// testidText is the text of the element data-testid="id" (its first text
// node).
func testidText(body, id string) string {
	m := regexp.MustCompile(`data-testid="` + id + `"[^>]*>([^<]*)<`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}

// Skipping from the detail page: the form presets the offered plain
// update, the post redirects to the page, which says what was skipped and
// by whom, and the summary no longer counts the update, at once; the
// unskip brings it back; both are audited. A security release is not
// offered for skipping, and a forged skip of one comes back refused (422)
// in words with the form open and refilled.
func TestSkipFromTheDetailPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin, viewer := b.login("admin@example.test"), b.login("viewer@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	before := admin.updatesAvailable()

	page := admin.do("GET", "/admin/plugins/core", "", "", nil)
	if !strings.Contains(page.body, `data-testid="skip-form"`) || !strings.Contains(page.body, `data-testid="skip-version" value="1.10.0"`) {
		t.Fatalf("core's page has no skip form preset to 1.10.0:\n%s", page.body)
	}
	if v := viewer.do("GET", "/admin/plugins/core", "", "", nil); strings.Contains(v.body, `data-testid="skip-form"`) {
		t.Error("a viewer is shown the skip form")
	}
	blog := admin.do("GET", "/admin/plugins/blog", "", "", nil)
	if strings.Contains(blog.body, `data-testid="skip-form"`) || !strings.Contains(testidText(blog.body, "skip-security"), "security release, which cannot be skipped") {
		t.Errorf("blog's page (offered the security release 2.4.0) offers to skip it, or does not say why not")
	}

	r := admin.postForm("/admin/plugins/blog/skip", url.Values{"version": {"2.4.0"}, "reason": {"breaks our theme"}})
	wantStatus(t, "skip a security release", r, http.StatusUnprocessableEntity)
	if got := testidText(r.body, "skip-error"); !strings.Contains(got, "security release for this site, which cannot be skipped") {
		t.Errorf("the refusal beside the form = %q", got)
	}
	if !strings.Contains(r.body, `data-testid="skip" open`) || !strings.Contains(r.body, ">breaks our theme</textarea>") {
		t.Error("the refused form is not open and refilled")
	}
	r = admin.postForm(coreSkipPath, url.Values{"version": {"1.10.0"}, "reason": {" \n"}})
	wantStatus(t, "skip without a reason", r, http.StatusUnprocessableEntity)
	if got := testidText(r.body, "skip-error"); !strings.Contains(got, "Give a reason") {
		t.Errorf("the refusal of no reason = %q", got)
	}
	if n := b.skipAudits(); n != 0 {
		t.Fatalf("%d audit rows after refused skips", n)
	}

	r = admin.postForm(coreSkipPath, url.Values{"version": {"1.10.0"}, "reason": {"we wait for the theme's update"}})
	wantStatus(t, "skip", r, http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != "/admin/plugins/core" {
		t.Errorf("the skip redirects to %q", loc)
	}
	page = admin.do("GET", "/admin/plugins/core", "", "", nil)
	if got := testidText(page.body, "skip-notice"); got != "Skipped 1.10.0." {
		t.Errorf("the page's notice after the skip = %q", got)
	}
	if got := testidText(page.body, "skip-by"); got != "admin@example.test" {
		t.Errorf("skipped by %q", got)
	}
	if got := testidText(page.body, "skip-why"); got != "we wait for the theme&#39;s update" && got != "we wait for the theme's update" {
		t.Errorf("the skip's reason on the page = %q", got)
	}
	if !strings.Contains(page.body, `data-testid="skip-undo"`) {
		t.Error("no unskip button beside the skip")
	}
	if got := admin.updatesAvailable(); got != before-1 {
		t.Errorf("updates available after the skip = %v, want %v", got, before-1)
	}
	if again := admin.do("GET", "/admin/plugins/core", "", "", nil); strings.Contains(again.body, `data-testid="skip-notice"`) {
		t.Error("the notice is shown again on the next visit")
	}

	wantStatus(t, "unskip", admin.postForm(coreUnskipPath, url.Values{}), http.StatusSeeOther)
	page = admin.do("GET", "/admin/plugins/core", "", "", nil)
	if got := testidText(page.body, "skip-notice"); !strings.HasPrefix(got, "1.10.0 is no longer skipped") {
		t.Errorf("the page's notice after the unskip = %q", got)
	}
	if strings.Contains(page.body, `data-testid="skip-standing"`) {
		t.Error("the page still shows a skip")
	}
	if got := admin.updatesAvailable(); got != before {
		t.Errorf("updates available after the unskip = %v, want %v", got, before)
	}
	if n := b.skipAudits(); n != 2 {
		t.Errorf("%d audit rows of skips, want the skip and its end", n)
	}
	wantStatus(t, "skip of an unknown component", admin.postForm("/admin/plugins/nope/skip", url.Values{"version": {"1.0.0"}, "reason": {"r"}}), http.StatusNotFound)
	wantStatus(t, "viewer skip", viewer.postForm(coreSkipPath, url.Values{"version": {"1.10.0"}, "reason": {"r"}}), http.StatusForbidden)
}

// The API's skip: the form's service and words, 201 with the skip, 404 for
// what does not exist, 409 for the manifest's skip, 422 for a version that
// cannot be skipped; DELETE ends it (200 with the skip ended), 404 when
// there is none.
func TestAPISkip(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin, viewer := b.login("admin@example.test"), b.login("viewer@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	before := admin.updatesAvailable()
	body := map[string]string{"version": "1.10.0", "reason": "we wait for the theme's update"}

	wantStatus(t, "viewer", viewer.sendJSON("POST", apiCoreSkip, body, true, nil), 403)
	wantStatus(t, "admin session without its CSRF token", admin.sendJSON("POST", apiCoreSkip, body, false, nil), 403)
	for _, tc := range []struct {
		name, path string
		body       any
		status     int
		words      string
	}{
		{"a security release", "/api/admin/plugins/blog/skip", map[string]string{"version": "2.4.0", "reason": "r"}, 422, "cannot be skipped"},
		{"not newer", apiCoreSkip, map[string]string{"version": "1.9.0", "reason": "r"}, 422, "not newer than the installed version"},
		{"not published", apiCoreSkip, map[string]string{"version": "1.11.0", "reason": "r"}, 422, "publishes no release “1.11.0”"},
		{"not a version", apiCoreSkip, map[string]string{"version": "latest", "reason": "r"}, 422, "“latest” is not a version"},
		{"no reason", apiCoreSkip, map[string]string{"version": "1.10.0"}, 422, "Give a reason"},
		{"unknown member", apiCoreSkip, `{"version": "1.10.0", "reason": "r", "until": "2099-01-01"}`, 422, "“until”"},
		{"unknown component", "/api/admin/plugins/nope/skip", body, 404, "“nope”"},
	} {
		wantError(t, tc.name, admin.sendJSON("POST", tc.path, tc.body, true, nil), tc.status, tc.words)
	}
	if n := b.skipAudits(); n != 0 {
		t.Fatalf("%d audit rows after refused skips", n)
	}

	r := b.anonymous().sendJSON("POST", apiCoreSkip, body, false, b.bearer("admin@example.test"))
	wantStatus(t, "skip with a token", r, 201)
	s := decodeJSON[map[string]any](t, r)
	if s["version"] != "1.10.0" || s["reason"] != "we wait for the theme's update" || s["by"] != "admin@example.test" || s["from_manifest"] != false || s["at"] == nil {
		t.Errorf("skip = %s", r.body)
	}
	if got := admin.updatesAvailable(); got != before-1 {
		t.Errorf("updates available after the skip = %v, want %v", got, before-1)
	}
	r = admin.sendJSON("DELETE", apiCoreSkip, nil, true, nil)
	wantStatus(t, "unskip", r, 200)
	if s := decodeJSON[map[string]any](t, r); s["version"] != "1.10.0" {
		t.Errorf("unskip answered %s, want the skip it ended", r.body)
	}
	if got := admin.updatesAvailable(); got != before {
		t.Errorf("updates available after the unskip = %v, want %v", got, before)
	}
	wantError(t, "unskip again", admin.sendJSON("DELETE", apiCoreSkip, nil, true, nil), 404, "skips no version")
	if n := b.skipAudits(); n != 2 {
		t.Errorf("%d audit rows, want the skip and its end", n)
	}

	// The manifest's skip is the manifest's.
	b.db.MustExec(t, `INSERT INTO component_skips (code, version, reason, actor, from_manifest) VALUES ('core', '1.10.0', 'reviewed', 'manifest', true)`)
	wantError(t, "skip over the manifest's", admin.sendJSON("POST", apiCoreSkip, body, true, nil), 409, "manifest")
	wantError(t, "unskip the manifest's", admin.sendJSON("DELETE", apiCoreSkip, nil, true, nil), 409, "manifest")
	page := admin.do("GET", "/admin/plugins/core", "", "", nil)
	if !strings.Contains(page.body, `data-testid="skip-from-manifest"`) || strings.Contains(page.body, `data-testid="skip-undo"`) ||
		strings.Contains(page.body, `data-testid="skip-form"`) {
		t.Error("the page offers to change the manifest's skip, or does not say it is the manifest's")
	}
	if got := testidText(page.body, "skip-by"); got != "the manifest" {
		t.Errorf("the manifest's skip is by %q", got)
	}
	wantStatus(t, "unskip the manifest's from the page", admin.postForm(coreUnskipPath, url.Values{}), http.StatusUnprocessableEntity)
}
