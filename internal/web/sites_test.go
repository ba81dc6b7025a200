package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/store"
)

// limitedUser creates an account of role limited to sites, and returns an
// API token of it (a principal on every route, no CSRF needed).
func (b *bundle) limitedUser(email, role string, sites ...string) map[string]string {
	b.t.Helper()
	ctx := context.Background()
	if _, err := b.auth.CreateUser(ctx, email, role, testPassword); err != nil {
		b.t.Fatal(err)
	}
	if _, err := b.auth.SetUserSites(ctx, email, false, sites); err != nil {
		b.t.Fatal(err)
	}
	raw, err := b.auth.CreateToken(ctx, email, "limited")
	if err != nil {
		b.t.Fatal(err)
	}
	return map[string]string{"Authorization": "Bearer " + raw}
}

// loginLimited signs in through the form as a user who may not see the
// local site: the login leads to the Sites section, whose page carries the
// CSRF token.
func (b *bundle) loginLimited(email string) *client {
	b.t.Helper()
	c := b.anonymous()
	resp := c.do("POST", "/login", url.Values{"email": {email}, "password": {testPassword}}.Encode(), "application/x-www-form-urlencoded", nil)
	if resp.status != http.StatusSeeOther || resp.header.Get("Location") != "/" {
		b.t.Fatalf("login %s: %d %s", email, resp.status, resp.header.Get("Location"))
	}
	home := c.do("GET", "/", "", "", nil)
	if home.status != http.StatusSeeOther || home.header.Get("Location") != "/admin/sites" {
		b.t.Fatalf("home of %s: %d %s, want the Sites section", email, home.status, home.header.Get("Location"))
	}
	page := c.do("GET", "/admin/sites", "", "", nil)
	m := csrfMeta.FindStringSubmatch(page.body)
	if page.status != 200 || m == nil {
		b.t.Fatalf("sites after login: %d, csrf %v", page.status, m)
	}
	c.csrf = m[1]
	return c
}

// siteAnswer is a site as the API answers it.
type siteAnswer struct {
	Name      string `json:"name"`
	Owner     string `json:"owner"`
	Local     bool   `json:"local"`
	Stale     bool   `json:"stale"`
	Push      string `json:"push"`
	PushToken string `json:"push_token"`
}

// The sites API: an admin's token registers a site and gets its push token
// in that answer only; a viewer lists the sites with no token anywhere; a
// rotation's new token works and the old one stops; the local site is
// neither rotated nor removed (409); a user limited to some sites lists
// those alone, registers none (403) and finds another site's routes as
// unknown (404).
func TestSitesAPI(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	adminToken, err := b.auth.CreateToken(ctx, "admin@example.test", "sites")
	if err != nil {
		t.Fatal(err)
	}
	admin := map[string]string{"Authorization": "Bearer " + adminToken}
	viewerToken, err := b.auth.CreateToken(ctx, "viewer@example.test", "sites")
	if err != nil {
		t.Fatal(err)
	}
	viewer := map[string]string{"Authorization": "Bearer " + viewerToken}
	c := b.anonymous()

	add := c.do("POST", "/api/admin/sites", `{"name": "acme-shop", "owner": "Acme Ltd"}`, "application/json", admin)
	wantStatus(t, "add", add, http.StatusCreated)
	var created siteAnswer
	if err := json.Unmarshal([]byte(add.body), &created); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(created.PushToken, auth.PushTokenPrefix) || created.Name != "acme-shop" || created.Owner != "Acme Ltd" || created.Push != "never pushed" {
		t.Fatalf("add: %+v", created)
	}
	if got, err := b.auth.AuthenticatePush(ctx, created.PushToken); err != nil || got.Name != "acme-shop" {
		t.Fatalf("the token shown: %+v, %v", got, err)
	}
	wantStatus(t, "add again", c.do("POST", "/api/admin/sites", `{"name": "acme-shop"}`, "application/json", admin), http.StatusConflict)
	wantStatus(t, "a bad name", c.do("POST", "/api/admin/sites", `{"name": "Acme Shop"}`, "application/json", admin), http.StatusUnprocessableEntity)
	wantStatus(t, "viewer adds", c.do("POST", "/api/admin/sites", `{"name": "other"}`, "application/json", viewer), http.StatusForbidden)

	for who, h := range map[string]map[string]string{"admin": admin, "viewer": viewer} {
		list := c.do("GET", "/api/admin/sites", "", "", h)
		wantStatus(t, who+" list", list, http.StatusOK)
		if strings.Contains(list.body, created.PushToken) || strings.Contains(list.body, "push_token") {
			t.Errorf("%s's list shows a push token: %s", who, list.body)
		}
		var sites struct{ Sites []siteAnswer }
		if err := json.Unmarshal([]byte(list.body), &sites); err != nil {
			t.Fatal(err)
		}
		if len(sites.Sites) != 2 || !sites.Sites[0].Local || sites.Sites[1].Name != "acme-shop" || !strings.Contains(list.body, `"name":"local"`) {
			t.Errorf("%s's list: %+v", who, sites.Sites)
		}
	}

	rotate := c.do("POST", "/api/admin/sites/acme-shop/rotate", "", "", admin)
	wantStatus(t, "rotate", rotate, http.StatusOK)
	var rotated siteAnswer
	if err := json.Unmarshal([]byte(rotate.body), &rotated); err != nil {
		t.Fatal(err)
	}
	if _, err := b.auth.AuthenticatePush(ctx, created.PushToken); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("the old token after a rotation: %v", err)
	}
	if got, err := b.auth.AuthenticatePush(ctx, rotated.PushToken); err != nil || got.Name != "acme-shop" {
		t.Fatalf("the rotated token: %+v, %v", got, err)
	}
	wantStatus(t, "viewer rotates", c.do("POST", "/api/admin/sites/acme-shop/rotate", "", "", viewer), http.StatusForbidden)
	wantStatus(t, "rotate local", c.do("POST", "/api/admin/sites/local/rotate", "", "", admin), http.StatusConflict)
	wantStatus(t, "remove local", c.do("DELETE", "/api/admin/sites/local", "", "", admin), http.StatusConflict)
	wantStatus(t, "remove unknown", c.do("DELETE", "/api/admin/sites/nope", "", "", admin), http.StatusNotFound)
	if _, err := b.store.SiteByName(ctx, store.LocalSiteName, 0); err != nil {
		t.Fatalf("the local site after the refusals: %v", err)
	}

	// A user limited to another site sees that one only.
	if _, _, err := b.auth.AddSite(ctx, "other", "Other Co"); err != nil {
		t.Fatal(err)
	}
	limited := b.limitedUser("other-admin@example.test", auth.RoleAdmin, "other")
	list := c.do("GET", "/api/admin/sites", "", "", limited)
	wantStatus(t, "limited list", list, http.StatusOK)
	if strings.Contains(list.body, "acme-shop") || strings.Contains(list.body, `"name":"local"`) || !strings.Contains(list.body, `"other"`) {
		t.Errorf("a user limited to other lists: %s", list.body)
	}
	unknown := c.do("POST", "/api/admin/sites/nope/rotate", "", "", limited)
	hidden := c.do("POST", "/api/admin/sites/acme-shop/rotate", "", "", limited)
	if hidden.status != http.StatusNotFound || hidden.body != unknown.body {
		t.Errorf("a limited admin rotating a site it may not see: %d %s; want what an unknown site gets, %d %s", hidden.status, hidden.body, unknown.status, unknown.body)
	}
	wantStatus(t, "limited removes a hidden site", c.do("DELETE", "/api/admin/sites/acme-shop", "", "", limited), http.StatusNotFound)
	wantStatus(t, "limited adds", c.do("POST", "/api/admin/sites", `{"name": "third"}`, "application/json", limited), http.StatusForbidden)

	remove := c.do("DELETE", "/api/admin/sites/acme-shop", "", "", admin)
	wantStatus(t, "remove", remove, http.StatusOK)
	if _, err := b.auth.AuthenticatePush(ctx, rotated.PushToken); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("the token of a removed site: %v", err)
	}
}

// The Sites section: an admin registers a site from the form and sees its
// push token once (a reload shows it no more, and the list never); rotate
// and remove ask first and redirect with a notice; the local site is
// refused in words; a viewer sees the list without the form; a user
// limited to a site sees that one only, and no link to the local site's
// pages.
func TestSitesPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	form := func(v url.Values) string { v.Set("csrf_token", admin.csrf); return v.Encode() }
	const formType = "application/x-www-form-urlencoded"

	r := admin.do("POST", "/admin/sites", form(url.Values{"name": {"acme"}, "owner": {"Acme Ltd"}}), formType, nil)
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/admin/sites" {
		t.Fatalf("add: %d %s", r.status, r.header.Get("Location"))
	}
	page := admin.do("GET", "/admin/sites", "", "", nil)
	token := pushToken(page.body)
	if token == "" || !strings.Contains(page.body, `data-testid="sites-notice"`) {
		t.Fatalf("the page after add shows no token or notice: %s", page.body)
	}
	if got, err := b.auth.AuthenticatePush(context.Background(), token); err != nil || got.Name != "acme" {
		t.Fatalf("the token shown: %+v, %v", got, err)
	}
	again := admin.do("GET", "/admin/sites", "", "", nil)
	if strings.Contains(again.body, token) || !strings.Contains(again.body, "never pushed") || !strings.Contains(again.body, "Acme Ltd") {
		t.Fatalf("the page again: token shown %v, or the site's row is missing", strings.Contains(again.body, token))
	}

	refused := admin.do("POST", "/admin/sites", form(url.Values{"name": {"Bad Name"}}), formType, nil)
	wantStatus(t, "a bad name", refused, http.StatusSeeOther)
	if p := admin.do("GET", "/admin/sites", "", "", nil); !strings.Contains(p.body, `data-testid="site-form-error"`) || !strings.Contains(p.body, `value="Bad Name"`) {
		t.Errorf("a refused add: no error, or the form not refilled")
	}

	// Rotate: the question, a post without the answer goes back to it,
	// then the new token once.
	q := admin.do("GET", "/admin/sites/acme/rotate", "", "", nil)
	if q.status != http.StatusOK || !strings.Contains(q.body, `data-testid="confirm"`) {
		t.Fatalf("rotate question: %d", q.status)
	}
	if r := admin.do("POST", "/admin/sites/acme/rotate", form(url.Values{}), formType, nil); r.header.Get("Location") != "/admin/sites/acme/rotate" {
		t.Fatalf("rotate without the answer: %d %s", r.status, r.header.Get("Location"))
	}
	if r := admin.do("POST", "/admin/sites/acme/rotate", form(url.Values{"confirmed": {"yes"}}), formType, nil); r.status != http.StatusSeeOther {
		t.Fatalf("rotate: %d", r.status)
	}
	rotated := pushToken(admin.do("GET", "/admin/sites", "", "", nil).body)
	if rotated == "" || rotated == token {
		t.Fatal("no new token after rotate")
	}
	if _, err := b.auth.AuthenticatePush(context.Background(), token); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("the old token: %v", err)
	}

	// The local site: no question, a refusal in words.
	if r := admin.do("GET", "/admin/sites/local/remove", "", "", nil); r.status != http.StatusSeeOther {
		t.Fatalf("remove local: %d", r.status)
	}
	if p := admin.do("GET", "/admin/sites", "", "", nil); !strings.Contains(p.body, `data-testid="sites-refusal"`) {
		t.Error("removing the local site is not refused in words")
	}
	if r := admin.do("POST", "/admin/sites/local/remove", form(url.Values{"confirmed": {"yes"}}), formType, nil); r.status != http.StatusSeeOther {
		t.Fatalf("remove local posted: %d", r.status)
	}
	if _, err := b.store.SiteByName(context.Background(), store.LocalSiteName, 0); err != nil {
		t.Fatalf("the local site: %v", err)
	}

	viewer := b.login("viewer@example.test")
	vp := viewer.do("GET", "/admin/sites", "", "", nil)
	if vp.status != 200 || strings.Contains(vp.body, `data-testid="site-form"`) || strings.Contains(vp.body, `data-testid="site-rotate"`) || !strings.Contains(vp.body, "acme") {
		t.Errorf("a viewer's Sites section: %d, form or actions shown, or acme missing", vp.status)
	}

	if _, _, err := b.auth.AddSite(context.Background(), "other", ""); err != nil {
		t.Fatal(err)
	}
	b.limitedUser("other@example.test", auth.RoleViewer, "other")
	limited := b.loginLimited("other@example.test")
	lp := limited.do("GET", "/admin/sites", "", "", nil)
	if strings.Contains(lp.body, `data-name="acme"`) || strings.Contains(lp.body, `data-name="local"`) || !strings.Contains(lp.body, `data-name="other"`) {
		t.Errorf("a user limited to other sees the wrong sites")
	}
	for _, link := range []string{`href="/admin"`, `href="/admin/plugins"`, `href="/admin/packages"`} { // the Notifications are every principal's
		if strings.Contains(lp.body, link) {
			t.Errorf("a user limited to other is shown the link %s to a local site's page", link)
		}
	}
	// An admin limited to other rotates and removes it, and registers none.
	b.limitedUser("other-admin@example.test", auth.RoleAdmin, "other")
	ap := b.loginLimited("other-admin@example.test").do("GET", "/admin/sites", "", "", nil)
	if !strings.Contains(ap.body, `data-testid="site-rotate"`) || strings.Contains(ap.body, `data-testid="site-form"`) {
		t.Errorf("an admin limited to other: rotate shown %v, the add form shown %v",
			strings.Contains(ap.body, `data-testid="site-rotate"`), strings.Contains(ap.body, `data-testid="site-form"`))
	}

	if r := admin.do("GET", "/admin/sites/acme/remove", "", "", nil); r.status != http.StatusOK {
		t.Fatalf("remove question: %d", r.status)
	}
	if r := admin.do("POST", "/admin/sites/acme/remove", form(url.Values{"confirmed": {"yes"}}), formType, nil); r.status != http.StatusSeeOther {
		t.Fatalf("remove: %d", r.status)
	}
	if p := admin.do("GET", "/admin/sites", "", "", nil); strings.Contains(p.body, `data-name="acme"`) || !strings.Contains(p.body, "acme removed") {
		t.Error("acme is still listed, or the removal has no notice")
	}
}

// pushToken is the push token a Sites page shows, or "".
func pushToken(body string) string {
	_, after, ok := strings.Cut(body, `data-testid="site-token"`)
	if !ok {
		return ""
	}
	_, after, ok = strings.Cut(after, "<code>")
	if !ok {
		return ""
	}
	token, _, _ := strings.Cut(after, "</code>")
	return token
}

// The API tokens section limits a new token to some sites: the list says
// which, the token sees those alone (the local site's routes answer it
// 404, the Sites API lists its site), and an unknown site is refused in
// words with the form refilled.
func TestTokenFormSites(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, _, err := b.auth.AddSite(context.Background(), "acme", ""); err != nil {
		t.Fatal(err)
	}
	admin := b.login("admin@example.test")
	r := postRedirected(t, admin, "/admin/tokens", url.Values{"name": {"x"}, "owner": {"viewer@example.test"}, "sites": {"acme, nope"}}, "/admin/tokens")
	if !strings.Contains(r.body, "no site has one of the names") || !strings.Contains(r.body, `value="acme, nope"`) {
		t.Fatalf("an unknown site: %s", r.body)
	}
	r = postRedirected(t, admin, "/admin/tokens", url.Values{"name": {"acme only"}, "owner": {"viewer@example.test"}, "sites": {"acme"}}, "/admin/tokens")
	secret := tokenSecret.FindString(r.body)
	if secret == "" || !strings.Contains(r.body, `data-testid="token-sites">acme<`) {
		t.Fatalf("the token limited to acme: no secret, or its sites not listed")
	}
	h := map[string]string{"Authorization": "Bearer " + secret}
	c := b.anonymous()
	wantStatus(t, "the acme token on the summary", c.do("GET", "/api/admin/plugins/updates/summary", "", "", h), http.StatusNotFound)
	if list := c.do("GET", "/api/admin/sites", "", "", h); list.status != 200 || strings.Contains(list.body, `"name":"local"`) || !strings.Contains(list.body, `"acme"`) {
		t.Errorf("the acme token's sites: %d %s", list.status, list.body)
	}
}

// The API sets who sees what: an admin's token limits a viewer to a site
// (the viewer's token then gets 404 from the local site's routes at its
// next request), says which, and lets the viewer see every site again;
// refusals are in words; an admin limited to some sites may do none of it.
func TestUserSitesAPI(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	if _, _, err := b.auth.AddSite(ctx, "acme", ""); err != nil {
		t.Fatal(err)
	}
	bearer := func(email string) map[string]string {
		raw, err := b.auth.CreateToken(ctx, email, "t")
		if err != nil {
			t.Fatal(err)
		}
		return map[string]string{"Authorization": "Bearer " + raw}
	}
	admin, viewer := bearer("admin@example.test"), bearer("viewer@example.test")
	c := b.anonymous()
	const path = "/api/admin/users/viewer@example.test/sites"

	got := c.do("GET", path, "", "", admin)
	if got.status != 200 || got.body != `{"email":"viewer@example.test","limited":false,"sites":[]}`+"\n" {
		t.Fatalf("an unlimited viewer: %d %s", got.status, got.body)
	}
	wantStatus(t, "viewer reads", c.do("GET", path, "", "", viewer), http.StatusForbidden)
	wantStatus(t, "an unknown site", c.do("PUT", path, `{"sites": ["nope"]}`, "application/json", admin), http.StatusUnprocessableEntity)
	wantStatus(t, "no site", c.do("PUT", path, `{"sites": []}`, "application/json", admin), http.StatusUnprocessableEntity)
	wantStatus(t, "both", c.do("PUT", path, `{"sites": ["acme"], "all": true}`, "application/json", admin), http.StatusUnprocessableEntity)
	wantStatus(t, "an unknown account", c.do("PUT", "/api/admin/users/nobody@example.test/sites", `{"all": true}`, "application/json", admin), http.StatusNotFound)

	got = c.do("PUT", path, `{"sites": ["acme"]}`, "application/json", admin)
	if got.status != 200 || got.body != `{"email":"viewer@example.test","limited":true,"sites":["acme"]}`+"\n" {
		t.Fatalf("limit to acme: %d %s", got.status, got.body)
	}
	wantStatus(t, "the limited viewer on the summary", c.do("GET", "/api/admin/plugins/updates/summary", "", "", viewer), http.StatusNotFound)
	limitedAdmin := b.limitedUser("acme-admin@example.test", auth.RoleAdmin, "acme")
	wantStatus(t, "a limited admin sets", c.do("PUT", path, `{"all": true}`, "application/json", limitedAdmin), http.StatusForbidden)

	got = c.do("PUT", path, `{"all": true}`, "application/json", admin)
	if got.status != 200 || !strings.Contains(got.body, `"limited":false`) {
		t.Fatalf("all: %d %s", got.status, got.body)
	}
	wantStatus(t, "the viewer again on the summary", c.do("GET", "/api/admin/plugins/updates/summary", "", "", viewer), http.StatusOK)
	var n int
	b.db.QueryRow(t, `SELECT count(*) FROM audit_log WHERE action = 'user.sites'`).Scan(&n)
	if n != 3 { // acme for the viewer, acme for the limited admin (limitedUser), all for the viewer
		t.Errorf("%d user.sites audit rows, want 3", n)
	}
}
