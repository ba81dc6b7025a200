package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/treekit"
)

// A tree's dismissal is its site's, from the package's page (a form,
// CSRF, 303 back to the page with a notice) and the API, on the local
// site's routes and a registered site's twins: the local site and
// acme-shop install lodash 4.17.20 with one advisory; dismissed on
// acme-shop it still counts on the local site, and the other way round.
// A user limited to another site gets the 404 of an unknown path there,
// a viewer 403.
func TestTreeDismissOnASite(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	_, acme, err := b.auth.AddSite(ctx, "acme-shop", "Acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.auth.AddSite(ctx, "globex-blog", "Globex"); err != nil {
		t.Fatal(err)
	}
	treekit.Write(t, b.store, "package-lock.json", treekit.Tree(t, "node_modules/lodash 4.17.20"), nil)
	treekit.WriteSite(t, b.store, acme.ID, "package-lock.json", treekit.Tree(t, "node_modules/lodash 4.17.20"), nil)
	const adv = "GHSA-TREE-0000-0001"
	treekit.WriteFindings(t, b.store, []store.TreeFinding{treeFinding(t, "lodash", "4.17.20", adv, false, false)}, nil)

	admin := b.login("admin@example.test")
	counted := func(page string) string {
		t.Helper()
		r := admin.do("GET", page, "", "", nil)
		wantStatus(t, page, r, http.StatusOK)
		_, rest, ok := strings.Cut(r.body, `data-advisory="`+adv+`" data-counted="`)
		if !ok {
			t.Fatalf("%s lists no finding of %s", page, adv)
		}
		return rest[:strings.IndexByte(rest, '"')]
	}
	const local, site = "/admin/packages/lodash", "/sites/acme-shop/packages/lodash"
	if page := admin.do("GET", site, "", "", nil); !strings.Contains(page.body, `action="/sites/acme-shop/packages/lodash/advisories/`+adv+`/dismiss"`) {
		t.Errorf("acme-shop's package page offers the admin no dismiss form")
	}
	if page := b.login("viewer@example.test").do("GET", site, "", "", nil); strings.Contains(page.body, "tree-dismiss") {
		t.Errorf("a viewer is offered the dismiss form")
	}
	r := admin.postForm(site+"/advisories/"+adv+"/dismiss", url.Values{"reason": {"not reachable"}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != site {
		t.Fatalf("the dismiss form on acme-shop: %d %s", r.status, r.header.Get("Location"))
	}
	if page := admin.do("GET", site, "", "", nil); !strings.Contains(page.body, adv+" is dismissed on lodash.") {
		t.Errorf("acme-shop's package page says no notice of the dismissal")
	}
	if a, l := counted(site), counted(local); a != "false" || l != "true" {
		t.Errorf("dismissed on acme-shop: counted there %s, on the local site %s; want false, true", a, l)
	}
	if r := admin.postForm(site+"/advisories/"+adv+"/dismiss", url.Values{"reason": {""}}); r.status != http.StatusSeeOther {
		t.Fatalf("the form without a reason: %d", r.status)
	}
	if page := admin.do("GET", site, "", "", nil); !strings.Contains(page.body, "Give a reason") {
		t.Errorf("the refused form's words are not on the page")
	}
	if r := admin.postForm(site+"/advisories/"+adv+"/undismiss", url.Values{}); r.status != http.StatusSeeOther {
		t.Fatalf("undismiss on acme-shop: %d", r.status)
	}
	if a := counted(site); a != "true" {
		t.Errorf("undone on acme-shop: counted %s", a)
	}

	// The API: the local site's, then acme-shop's twin.
	api := "/api/admin/packages/lodash/advisories/" + adv + "/dismissal"
	wantStatus(t, "the local site's API dismissal", admin.sendJSON("POST", api, map[string]any{"reason": "accepted"}, true, nil), http.StatusCreated)
	if a, l := counted(site), counted(local); a != "true" || l != "false" {
		t.Errorf("dismissed on the local site: counted on acme-shop %s, there %s; want true, false", a, l)
	}
	siteAPI := "/api/sites/acme-shop/packages/lodash/advisories/" + adv + "/dismissal"
	wantStatus(t, "acme-shop's undismissed", admin.sendJSON("DELETE", siteAPI, nil, true, nil), http.StatusNotFound)
	wantStatus(t, "acme-shop's API dismissal", admin.sendJSON("POST", siteAPI, map[string]any{"reason": "accepted"}, true, nil), http.StatusCreated)
	wantStatus(t, "the local site's undone", admin.sendJSON("DELETE", api, nil, true, nil), http.StatusNoContent)
	if a, l := counted(site), counted(local); a != "false" || l != "true" {
		t.Errorf("after the API: counted on acme-shop %s, on the local site %s; want false, true", a, l)
	}
	wantStatus(t, "an advisory acme-shop's lodash does not have",
		admin.sendJSON("POST", "/api/sites/acme-shop/packages/lodash/advisories/GHSA-NONE/dismissal", map[string]any{"reason": "r"}, true, nil),
		http.StatusNotFound)

	// Who may: a user limited to globex-blog is told acme-shop's routes
	// do not exist; a viewer may not; a post without the CSRF token is
	// refused.
	limited := b.limitedUser("globex-admin@example.test", auth.RoleAdmin, "globex-blog")
	wantStatus(t, "globex's admin on acme-shop", b.anonymous().sendJSON("DELETE", siteAPI, nil, false, limited), http.StatusNotFound)
	viewer := b.login("viewer@example.test")
	if r := viewer.postForm(site+"/advisories/"+adv+"/undismiss", url.Values{}); r.status != http.StatusForbidden {
		t.Errorf("a viewer's undismiss: %d, want 403", r.status)
	}
	if r := admin.do("POST", site+"/advisories/"+adv+"/undismiss", "", formType, nil); r.status != http.StatusForbidden {
		t.Errorf("a post without the CSRF token: %d, want 403", r.status)
	}
	if a := counted(site); a != "false" {
		t.Errorf("after the refusals acme-shop's dismissal is gone")
	}
}
