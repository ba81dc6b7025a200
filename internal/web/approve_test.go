package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/testing/npmreg"
	"github.com/upcheck/upcheck/internal/updatecheck"
	"github.com/upcheck/upcheck/internal/web"
)

// approvalBundle is a site whose hulud 1.0.0 is offered 1.0.1, which adds
// a postinstall, under the policy {"approve": "scripts"}: held, checked.
func approvalBundle(t *testing.T) *bundle {
	t.Helper()
	r := npmreg.New(t)
	day := func(n int) time.Time { return time.Date(2026, 1, n, 12, 0, 0, 0, time.UTC) }
	r.Publish("@acme/core", "2.0.0", map[string]npmreg.Version{"2.0.0": {Published: day(1)}})
	r.Publish("@acme/hulud", "1.0.1", map[string]npmreg.Version{
		"1.0.0": {Published: day(2)},
		"1.0.1": {Published: day(3), Scripts: map[string]string{"postinstall": "node <bundle>.js"}}})
	u, err := npm.ParseRegistryURL(r.URL)
	if err != nil {
		t.Fatal(err)
	}
	f := fetch.New(fetch.Config{AllowPrivate: true}, nil)
	t.Cleanup(f.Close)
	b := setup(t, func(b *bundle, _ *web.Deps) {
		b.checker.UseNpm(&npm.Client{Fetcher: f, Registries: npm.Registries{Default: u}, MaxDocument: 1 << 20})
	})
	ctx := context.Background()
	if _, err := updatecheck.NewSyncer(b.checker).Sync(ctx, &manifest.Manifest{Components: []manifest.Component{
		{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"},
		{Code: "hulud", Name: "Hulud", Version: "1.0.0", Source: "npm:@acme/hulud", Policy: release.Policy{Approve: release.ApproveScripts}},
	}}); err != nil {
		t.Fatal(err)
	}
	if res, err := b.checker.RunLockedUpdateCheck(ctx, lease.Operator, "test"); err != nil || res.Status != updatecheck.Completed {
		t.Fatalf("check: %+v, %v", res, err)
	}
	return b
}

// The page says what awaits an approval and offers the form to admins
// only; a form without a reason is refused beside it; an approval from
// the page (CSRF-checked) redirects, offers 1.0.1 at once and lists the
// approval; the API approves the same way and refuses a viewer.
func TestApproveFromThePageAndTheAPI(t *testing.T) {
	t.Parallel()
	b := approvalBundle(t)
	admin, viewer := b.login("admin@example.test"), b.login("viewer@example.test")

	page := admin.do("GET", "/admin/plugins/hulud", "", "", nil)
	wantStatus(t, "hulud's page", page, 200)
	if !strings.Contains(page.body, "install scripts and outside sources await approval") {
		t.Error("the page does not say the policy's approve")
	}
	if got := testidText(page.body, "approval-ask"); got != "1.0.1 is held until an admin approves what it brings:" {
		t.Errorf("what awaits approval: %q", got)
	}
	if got := testidText(page.body, "approval-line"); !strings.HasPrefix(got, "postinstall script sha256:") {
		t.Errorf("the line: %q", got)
	}
	if !strings.Contains(page.body, `data-testid="approval-form"`) {
		t.Fatal("no approval form for an admin")
	}
	if v := viewer.do("GET", "/admin/plugins/hulud", "", "", nil); strings.Contains(v.body, `data-testid="approval-form"`) ||
		!strings.Contains(v.body, `data-testid="approval-ask"`) {
		t.Error("a viewer is shown the approval form, or not what awaits approval")
	}
	wantStatus(t, "a viewer's approval", viewer.postForm("/admin/plugins/hulud/approve", url.Values{"version": {"1.0.1"}, "reason": {"ok"}}),
		http.StatusForbidden)
	wantStatus(t, "an approval without CSRF", admin.do("POST", "/admin/plugins/hulud/approve",
		url.Values{"version": {"1.0.1"}, "reason": {"ok"}}.Encode(), formType, nil), http.StatusForbidden)

	r := admin.postForm("/admin/plugins/hulud/approve", url.Values{"version": {"1.0.1"}, "reason": {" "}})
	wantStatus(t, "an approval without a reason", r, http.StatusUnprocessableEntity)
	if got := testidText(r.body, "approval-error"); !strings.Contains(got, "Give a reason") {
		t.Errorf("the refusal beside the form: %q", got)
	}
	var n int
	b.db.QueryRow(t, `SELECT count(*) FROM component_approvals`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d approvals after a refusal", n)
	}

	r = admin.postForm("/admin/plugins/hulud/approve", url.Values{"version": {"1.0.1"}, "reason": {"bundle.js reviewed"}})
	wantStatus(t, "approve", r, http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != "/admin/plugins/hulud" {
		t.Errorf("the approval redirects to %q", loc)
	}
	page = admin.do("GET", "/admin/plugins/hulud", "", "", nil)
	if strings.Contains(page.body, `data-testid="approval-ask"`) || !strings.Contains(testidText(page.body, "approval"), "1.0.1 approved by admin@example.test") {
		t.Errorf("after the approval the page still asks, or lists no approval")
	}
	detail := decodeJSON[struct {
		UpdateVersion *string `json:"update_version"`
		Policy        struct {
			Approve *string `json:"approve"`
		} `json:"policy"`
	}](t, viewer.do("GET", "/api/admin/plugins/hulud", "", "", nil))
	if detail.UpdateVersion == nil || *detail.UpdateVersion != "1.0.1" {
		t.Errorf("after the approval the update is %v, want 1.0.1", detail.UpdateVersion)
	}
	if a := detail.Policy.Approve; a == nil || *a != "scripts" {
		t.Errorf("the API's policy approve %v, want scripts", a)
	}

	// The API: a viewer is refused; an admin's approval is answered with it.
	wantStatus(t, "a viewer's API approval", viewer.sendJSON("POST", "/api/admin/plugins/hulud/approve",
		map[string]string{"version": "1.0.1", "reason": "ok"}, true, nil), http.StatusForbidden)
	wantError(t, "an API approval without a reason", admin.sendJSON("POST", "/api/admin/plugins/hulud/approve",
		map[string]string{"version": "1.0.1", "reason": ""}, true, nil), http.StatusUnprocessableEntity, "Give a reason")
	wantError(t, "an API approval of what brings nothing", admin.sendJSON("POST", "/api/admin/plugins/hulud/approve",
		map[string]string{"version": "1.0.0", "reason": "ok"}, true, nil), http.StatusUnprocessableEntity, "nothing to approve")
	a := decodeJSON[struct {
		Version, Digest string
		By              *string
	}](t, admin.sendJSON("POST", "/api/admin/plugins/hulud/approve", map[string]string{"version": "1.0.1", "reason": "again"}, true, nil))
	if a.Version != "1.0.1" || len(a.Digest) != 64 || a.By == nil || *a.By != "admin@example.test" {
		t.Errorf("the API's approval %+v", a)
	}
}
