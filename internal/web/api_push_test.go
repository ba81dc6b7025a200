package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
)

// pushedLock is a package-lock.json as npm writes it: one package.
const pushedLock = `{"name":"shop","lockfileVersion":3,"requires":true,"packages":{` +
	`"":{"name":"shop","dependencies":{"left-pad":"^1.3.0"}},` +
	`"node_modules/left-pad":{"version":"1.3.0","resolved":"http://127.0.0.1/left-pad/-/left-pad-1.3.0.tgz"}}}`

// PUT /api/sites/{site}/lockfile over real HTTP: a site's push token
// pushes that site's lockfile and nothing else: refused on another site
// (403), refused on every other route (401: it is no API token), and an
// API token cannot push (401). A malformed lockfile is refused (422) and
// the site's tree stays; a lockfile of no name the push knows is 400.
func TestAPushTokenPushesItsSiteOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	shopToken, shopSite, err := b.auth.AddSite(ctx, "shop", "Acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.auth.AddSite(ctx, "blog", "Acme"); err != nil {
		t.Fatal(err)
	}
	adminToken, err := b.auth.CreateToken(ctx, "admin@example.test", "push")
	if err != nil {
		t.Fatal(err)
	}
	shop := map[string]string{"Authorization": "Bearer " + shopToken}
	admin := map[string]string{"Authorization": "Bearer " + adminToken}
	c := b.anonymous()
	const ct = "application/octet-stream"

	ok := c.do("PUT", "/api/sites/shop/lockfile?name=package-lock.json", pushedLock, ct, shop)
	wantStatus(t, "shop's push", ok, http.StatusOK)
	var rep struct {
		Site      string `json:"site"`
		Packages  int    `json:"packages"`
		Unchanged bool   `json:"unchanged"`
	}
	if err := json.Unmarshal([]byte(ok.body), &rep); err != nil || rep.Site != "shop" || rep.Packages != 1 || rep.Unchanged {
		t.Fatalf("shop's push answered %s (%v)", ok.body, err)
	}
	wantStatus(t, "shop's token on blog", c.do("PUT", "/api/sites/blog/lockfile?name=package-lock.json", pushedLock, ct, shop),
		http.StatusForbidden)
	wantStatus(t, "no token", c.do("PUT", "/api/sites/shop/lockfile?name=package-lock.json", pushedLock, ct, nil),
		http.StatusUnauthorized)
	wantStatus(t, "an API token", c.do("PUT", "/api/sites/shop/lockfile?name=package-lock.json", pushedLock, ct, admin),
		http.StatusUnauthorized)
	for _, route := range []struct{ method, path string }{
		{"GET", "/api/admin/summary"}, {"GET", "/api/admin/sites"}, {"GET", "/api/admin/packages"},
		{"POST", "/api/admin/sites/shop/rotate"},
	} {
		wantStatus(t, "shop's push token on "+route.path, c.do(route.method, route.path, "", "", shop), http.StatusUnauthorized)
	}
	wantStatus(t, "no name", c.do("PUT", "/api/sites/shop/lockfile", pushedLock, ct, shop), http.StatusBadRequest)

	before, _, err := b.store.TreeState(ctx, shopSite.ID)
	if err != nil {
		t.Fatal(err)
	}
	bad := c.do("PUT", "/api/sites/shop/lockfile?name=package-lock.json", `{"lockfileVersion":3,"packages":`, ct, shop)
	wantStatus(t, "a malformed lockfile", bad, http.StatusUnprocessableEntity)
	after, _, err := b.store.TreeState(ctx, shopSite.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Epoch != before.Epoch || after.Packages != 1 {
		t.Errorf("a refused push moved the tree: %+v → %+v", before, after)
	}
}
