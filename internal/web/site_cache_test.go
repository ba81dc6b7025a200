package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
)

// The switcher's sites are cached (catalog.Reads.SiteChoices), yet a
// site registered or removed from this instance's pages or API is named,
// or no longer named, on the very next page: the write drops the cache
// (readsChanged), and the page after it is not served the list read
// before.
func TestSiteSwitcherFollowsThisInstancesSiteWrites(t *testing.T) {
	t.Parallel()
	b := sitePagesBundle(t)
	admin := b.login("admin@example.test")
	const formType = "application/x-www-form-urlencoded"
	form := func(v url.Values) string { v.Set("csrf_token", admin.csrf); return v.Encode() }

	if got := switchLinks(admin.do("GET", "/admin/packages", "", "", nil).body); len(got) != 3 || got["zeta"] != "" {
		t.Fatalf("before: switcher %v", got)
	}
	wantStatus(t, "add", admin.do("POST", "/admin/sites", form(url.Values{"name": {"zeta"}, "owner": {"Zeta"}}), formType, nil), http.StatusSeeOther)
	if got := switchLinks(admin.do("GET", "/admin/packages", "", "", nil).body); got["zeta"] != "/sites/zeta/packages" {
		t.Fatalf("after the form registered zeta: switcher %v", got)
	}
	token, err := b.auth.CreateToken(context.Background(), "admin@example.test", "sites")
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "remove", b.anonymous().do("DELETE", "/api/admin/sites/zeta", "", "", map[string]string{"Authorization": "Bearer " + token}), http.StatusOK)
	if got := switchLinks(admin.do("GET", "/admin/packages", "", "", nil).body); got["zeta"] != "" {
		t.Fatalf("after the API removed zeta: switcher %v", got)
	}
}

// The fleet's reads are cached (catalog.Reads.Fleet, FleetSummary,
// FleetImpact), yet a push to this instance is on the Fleet's next
// answer: the push drops the cache.
func TestTheFleetFollowsThisInstancesPushes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	token, _, err := b.auth.AddSite(context.Background(), "acme", "Acme Ltd")
	if err != nil {
		t.Fatal(err)
	}
	viewer := b.login("viewer@example.test")
	row := func() map[string]any {
		t.Helper()
		var a struct{ Sites []map[string]any }
		viewer.fleetJSON(t, "/api/admin/fleet?sort=name", &a)
		for _, s := range a.Sites {
			if s["site"] == "acme" {
				return s
			}
		}
		t.Fatalf("acme is not on the Fleet: %v", a.Sites)
		return nil
	}
	var totals map[string]any
	viewer.fleetJSON(t, "/api/admin/fleet/summary", &totals)
	if before := row(); before["pushed_at"] != nil {
		t.Fatalf("acme before its push: %v", before)
	}
	push := b.anonymous().do("PUT", "/api/sites/acme/lockfile?name=package-lock.json", sitePagesLock, "application/octet-stream",
		map[string]string{"Authorization": "Bearer " + token})
	wantStatus(t, "acme's push", push, http.StatusOK)
	if after := row(); after["pushed_at"] == nil {
		t.Errorf("acme after its push, on the Fleet's next answer: %v", after)
	}
	var again map[string]any
	viewer.fleetJSON(t, "/api/admin/fleet/summary", &again)
	if fmt.Sprint(again) == fmt.Sprint(totals) {
		t.Errorf("the fleet's totals after a push are those before it: %v", again)
	}
}
