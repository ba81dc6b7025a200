package web_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/auth"
)

// storedPolicies are acme's stored policy and its components' distinct
// ones, "" the default.
func (b *bundle) storedPolicies(site string) (string, string) {
	b.t.Helper()
	var sp, cp string
	b.db.QueryRow(b.t, `SELECT s.policy, coalesce(string_agg(DISTINCT coalesce(c.policy, ''), ','), '')
		FROM sites s LEFT JOIN components c ON c.site_id = s.id WHERE s.name = $1 GROUP BY s.policy`, site).Scan(&sp, &cp)
	return sp, cp
}

// sitePolicyAnswer is GET and PUT /api/admin/sites/{site}/policy's answer.
type sitePolicyAnswer struct {
	Site       string            `json:"site"`
	Policy     map[string]string `json:"policy"`
	Default    bool              `json:"default"`
	Text       string            `json:"text"`
	Components *int              `json:"components"`
}

// The site policy API: an admin reads and sets a registered site's policy
// (its components written under it, audited once), a policy the
// manifest's parser refuses is 422 in its words and writes nothing, the
// local site's is 409, a viewer is refused (403), and an admin limited to
// another site gets the 404 an unknown site gets.
func TestSitePolicyAPI(t *testing.T) {
	t.Parallel()
	b := sitePagesBundle(t)
	ctx := context.Background()
	bearer := func(email string) map[string]string {
		raw, err := b.auth.CreateToken(ctx, email, "policy")
		if err != nil {
			t.Fatal(err)
		}
		return map[string]string{"Authorization": "Bearer " + raw}
	}
	admin, viewer := bearer("admin@example.test"), bearer("viewer@example.test")
	c := b.anonymous()
	const path = "/api/admin/sites/acme/policy"
	answer := func(r response) sitePolicyAnswer {
		t.Helper()
		var a sitePolicyAnswer
		if err := json.Unmarshal([]byte(r.body), &a); err != nil {
			t.Fatalf("%s: %v", r.body, err)
		}
		return a
	}

	got := c.do("GET", path, "", "", admin)
	wantStatus(t, "get", got, http.StatusOK)
	if a := answer(got); a.Site != "acme" || !a.Default || len(a.Policy) != 0 || a.Text != "every update, as soon as it is published" {
		t.Errorf("acme's policy at first: %s", got.body)
	}
	set := c.do("PUT", path, `{"offer": "patch", "soak": "3d"}`, "application/json", admin)
	wantStatus(t, "put", set, http.StatusOK)
	if a := answer(set); a.Default || a.Policy["offer"] != "patch" || a.Text != "takes patch updates only · soak 3 days" ||
		a.Components == nil || *a.Components != 2 {
		t.Errorf("put: %s", set.body)
	}
	const want = `{"offer":"patch","soak":"3d"}`
	if sp, cp := b.storedPolicies("acme"); sp != want || cp != want {
		t.Errorf("stored: site %q, components %q", sp, cp)
	}
	if a := answer(c.do("GET", path, "", "", admin)); a.Text != "takes patch updates only · soak 3 days" {
		t.Errorf("get after put: %+v", a)
	}

	bad := c.do("PUT", path, `{"offer": "weekly"}`, "application/json", admin)
	wantStatus(t, "a malformed policy", bad, http.StatusUnprocessableEntity)
	if !strings.Contains(bad.body, `offer \"weekly\" is not one of all, minor, patch, security`) {
		t.Errorf("a malformed policy's answer: %s", bad.body)
	}
	wantStatus(t, "an unknown member", c.do("PUT", path, `{"hodl": "<2"}`, "application/json", admin), http.StatusUnprocessableEntity)
	wantStatus(t, "not JSON", c.do("PUT", path, `{"offer": "patch"}`, "text/plain", admin), http.StatusUnsupportedMediaType)
	if sp, cp := b.storedPolicies("acme"); sp != want || cp != want {
		t.Errorf("stored after the refusals: site %q, components %q", sp, cp)
	}
	var audited int
	b.db.QueryRow(t, `SELECT count(*) FROM audit_log WHERE action = 'site.policy'`).Scan(&audited)
	if audited != 1 {
		t.Errorf("%d site.policy audit rows, want 1", audited)
	}

	local := c.do("PUT", "/api/admin/sites/local/policy", `{"offer": "patch"}`, "application/json", admin)
	wantStatus(t, "the local site", local, http.StatusConflict)
	if !strings.Contains(local.body, "manifest") {
		t.Errorf("the local site's refusal: %s", local.body)
	}
	wantStatus(t, "get local", c.do("GET", "/api/admin/sites/local/policy", "", "", admin), http.StatusConflict)
	wantStatus(t, "viewer gets", c.do("GET", path, "", "", viewer), http.StatusForbidden)
	wantStatus(t, "viewer puts", c.do("PUT", path, `{}`, "application/json", viewer), http.StatusForbidden)

	limited := b.limitedUser("globex-admin@example.test", auth.RoleAdmin, "globex")
	for _, m := range []string{"GET", "PUT"} {
		unknown := c.do(m, "/api/admin/sites/nope/policy", `{}`, "application/json", limited)
		hidden := c.do(m, path, `{}`, "application/json", limited)
		if hidden.status != http.StatusNotFound || hidden.body != unknown.body {
			t.Errorf("%s of a hidden site's policy: %d %s; want what an unknown site gets, %d %s", m, hidden.status, hidden.body,
				unknown.status, unknown.body)
		}
	}
	wantStatus(t, "limited admin on its own site", c.do("PUT", "/api/admin/sites/globex/policy", `{"offer": "minor"}`, "application/json", limited),
		http.StatusOK)
	if sp, cp := b.storedPolicies("acme"); sp != want || cp != want {
		t.Errorf("stored after the hidden attempts: site %q, components %q", sp, cp)
	}

	if a := answer(c.do("PUT", path, `{}`, "application/json", admin)); !a.Default || a.Text != "every update, as soon as it is published" {
		t.Errorf("back to the default: %+v", a)
	}
	if sp, cp := b.storedPolicies("acme"); sp != "" || cp != "" {
		t.Errorf("stored after the default: site %q, components %q", sp, cp)
	}
}

// The site's overview says its policy in words to a viewer, without a
// form; an admin's form sets it (303 back with the notice, the words on
// the page), and a policy the parser refuses comes back with its words
// and the form refilled, nothing written; the form needs its CSRF token,
// and a viewer's or a hidden site's post is refused.
func TestSitePolicyForm(t *testing.T) {
	t.Parallel()
	b := sitePagesBundle(t)
	admin := b.login("admin@example.test")

	page := admin.do("GET", "/sites/acme", "", "", nil)
	if page.status != 200 || !strings.Contains(page.body, `data-testid="site-policy-form"`) ||
		!strings.Contains(page.body, "Policy: every update, as soon as it is published.") {
		t.Fatalf("an admin's overview: %d, no form or no policy in words", page.status)
	}
	const action = "/admin/sites/acme/policy"
	after := postRedirected(t, admin, action, url.Values{"offer": {"patch"}, "soak": {"3d"}, "hold": {""}}, "/sites/acme")
	body := html.UnescapeString(after.body)
	if !strings.Contains(body, `data-testid="site-policy-notice"`) || !strings.Contains(body, "Update policy of acme: takes patch updates only · soak 3 days.") ||
		!strings.Contains(body, "Policy: takes patch updates only · soak 3 days.") {
		t.Errorf("the overview after the form: no notice or policy in words")
	}
	const want = `{"offer":"patch","soak":"3d"}`
	if sp, cp := b.storedPolicies("acme"); sp != want || cp != want {
		t.Errorf("stored: site %q, components %q", sp, cp)
	}

	refused := postRedirected(t, admin, action, url.Values{"offer": {"patch"}, "soak": {"2y"}}, "/sites/acme")
	body = html.UnescapeString(refused.body)
	if !strings.Contains(body, `data-testid="site-policy-refusal"`) || !strings.Contains(body, `soak "2y" is not a duration`) ||
		!strings.Contains(body, `value="2y"`) {
		t.Errorf("the overview after a refused policy: no refusal in the parser's words, or the form not refilled")
	}
	if sp, cp := b.storedPolicies("acme"); sp != want || cp != want {
		t.Errorf("stored after the refusal: site %q, components %q", sp, cp)
	}
	wantStatus(t, "no CSRF token", postForm(admin, action, url.Values{"offer": {"all"}}, false), http.StatusForbidden)

	viewer := b.login("viewer@example.test")
	vp := viewer.do("GET", "/sites/acme", "", "", nil)
	if vp.status != 200 || strings.Contains(vp.body, `data-testid="site-policy-form"`) ||
		!strings.Contains(html.UnescapeString(vp.body), "Policy: takes patch updates only · soak 3 days.") {
		t.Errorf("a viewer's overview: %d, a form shown or no policy in words", vp.status)
	}
	wantStatus(t, "a viewer posts", postForm(viewer, action, url.Values{"offer": {"all"}}, true), http.StatusForbidden)

	// The form's "every update" with nothing else set is the default, not
	// a policy of its own.
	all := postRedirected(t, admin, action, url.Values{"offer": {"all"}, "soak": {""}, "hold": {""}}, "/sites/acme")
	if !strings.Contains(html.UnescapeString(all.body), "Policy: every update, as soon as it is published.") {
		t.Errorf("the overview after every update: the default not said")
	}
	if sp, cp := b.storedPolicies("acme"); sp != "" || cp != "" {
		t.Errorf("stored after every update: site %q, components %q, want the default", sp, cp)
	}
	postRedirected(t, admin, action, url.Values{"offer": {"patch"}, "soak": {"3d"}}, "/sites/acme")

	b.limitedUser("globex-admin@example.test", auth.RoleAdmin, "globex")
	limited := b.loginLimited("globex-admin@example.test")
	wantStatus(t, "a hidden site's form", postForm(limited, action, url.Values{"offer": {"all"}}, true), http.StatusNotFound)
	if sp, cp := b.storedPolicies("acme"); sp != want || cp != want {
		t.Errorf("stored after the refused posts: site %q, components %q", sp, cp)
	}
}
