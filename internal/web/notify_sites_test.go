package web_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// scopedChannel is a channel as the API answers it, with its sites.
type scopedChannel struct {
	ID    int64    `json:"id"`
	Name  string   `json:"name"`
	Scope string   `json:"scope"`
	Sites []string `json:"sites"`
}

// A channel's sites and who sees it (docs/notifications.md "Sites"): an
// admin limited to the local site and shop lists only the channels whose
// sites are among its own (not blog's, not the fleet's), may not make a
// channel of blog (404, as for a site that does not exist) nor of the
// fleet (403), makes one of shop, and acts on blog's channel and its
// deliveries as on ones that do not exist (404); the form answers the
// same. An admin who sees every site sees them all, with their scopes.
func TestChannelSitesForALimitedUser(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	for _, name := range []string{"shop", "blog"} {
		hash := sha256.Sum256([]byte("ups_" + name))
		if _, err := b.store.SiteCreate(ctx, name, "", hash[:]); err != nil {
			t.Fatal(err)
		}
	}
	admin := b.login("admin@example.test")
	add := func(c *client, header map[string]string, body map[string]any) response {
		return c.sendJSON("POST", apiChannels, body, header == nil, header)
	}
	ids := map[string]int64{}
	for name, body := range map[string]map[string]any{
		"local": {"kind": "webhook", "name": "local", "target": hookURL, "events": "security"},
		"shop":  {"kind": "webhook", "name": "shop", "target": hookURL, "events": "security", "sites": []string{"shop"}},
		"blog":  {"kind": "webhook", "name": "blog", "target": hookURL, "events": "security", "scope": "sites", "sites": []string{"blog"}},
		"fleet": {"kind": "webhook", "name": "fleet", "target": hookURL, "events": "security", "scope": "fleet"},
	} {
		r := add(admin, nil, body)
		wantStatus(t, "admin adds "+name, r, http.StatusCreated)
		ch := decodeJSON[scopedChannel](t, r)
		ids[name] = ch.ID
		want := map[string]string{"local": "local", "shop": "sites", "blog": "sites", "fleet": "fleet"}[name]
		if ch.Scope != want {
			t.Errorf("%s's channel: %s, want scope %s", name, r.body, want)
		}
	}
	list := func(c *client, header map[string]string) []string {
		r := c.do("GET", apiChannels, "", "", header)
		wantStatus(t, "list", r, http.StatusOK)
		var names []string
		for _, ch := range decodeJSON[struct{ Channels []scopedChannel }](t, r).Channels {
			names = append(names, ch.Name+":"+ch.Scope+":"+strings.Join(ch.Sites, ","))
		}
		slices.Sort(names)
		return names
	}
	if got := list(admin, nil); !slices.Equal(got, []string{"blog:sites:blog", "fleet:fleet:", "local:local:", "shop:sites:shop"}) {
		t.Errorf("the admin lists %v", got)
	}

	limited := b.limitedUser("shop-admin@example.test", auth.RoleAdmin, store.LocalSiteName, "shop")
	anon := b.anonymous()
	if got := list(anon, limited); !slices.Equal(got, []string{"local:local:", "shop:sites:shop"}) {
		t.Errorf("an admin limited to the local site and shop lists %v; want the local's and shop's only", got)
	}
	hidden := add(anon, limited, map[string]any{"kind": "webhook", "target": hookURL, "events": "security", "sites": []string{"blog"}})
	unknown := add(anon, limited, map[string]any{"kind": "webhook", "target": hookURL, "events": "security", "sites": []string{"nope"}})
	wantError(t, "a channel of blog", hidden, http.StatusNotFound, "No site is named “blog”.")
	wantError(t, "a channel of a site that does not exist", unknown, http.StatusNotFound, "No site is named “nope”.")
	wantStatus(t, "a channel of shop and blog", add(anon, limited, map[string]any{"kind": "webhook", "target": hookURL, "events": "security",
		"sites": []string{"shop", "blog"}}), http.StatusNotFound)
	wantError(t, "a channel of the fleet", add(anon, limited, map[string]any{"kind": "webhook", "target": hookURL, "events": "security", "scope": "fleet"}),
		http.StatusForbidden, "cannot subscribe a channel to the fleet")
	mine := add(anon, limited, map[string]any{"kind": "webhook", "name": "mine", "target": hookURL, "events": "security", "sites": []string{"shop"}})
	wantStatus(t, "a channel of shop", mine, http.StatusCreated)
	if ch := decodeJSON[scopedChannel](t, mine); ch.Scope != string(readmodel.ScopeSites) || !slices.Equal(ch.Sites, []string{"shop"}) {
		t.Errorf("the limited admin's channel: %s", mine.body)
	}
	if got := list(anon, limited); len(got) != 3 {
		t.Errorf("the limited admin lists %v after adding its own", got)
	}

	// blog's channel and the fleet's are answered as unknown ones.
	for _, name := range []string{"blog", "fleet"} {
		path := fmt.Sprintf("%s/%d", apiChannels, ids[name])
		for _, action := range []string{"/test", "/enable", "/disable", ""} {
			method := http.MethodPost
			if action == "" {
				method = http.MethodDelete
			}
			wantError(t, name+" "+method+action, anon.sendJSON(method, path+action, nil, false, limited), http.StatusNotFound,
				fmt.Sprintf("No channel has the id %d.", ids[name]))
		}
	}
	// blog's delivery is not listed, nor retried.
	event, err := b.notify.QueueTest(ctx, ids["blog"])
	if err != nil {
		t.Fatal(err)
	}
	b.db.MustExec(t, `UPDATE notification_events SET state = 'failed' WHERE id = $1`, event)
	if r := anon.do("GET", apiDeliveries, "", "", limited); strings.Contains(r.body, event.String()) {
		t.Errorf("the limited admin lists blog's delivery: %s", r.body)
	}
	if r := admin.do("GET", apiDeliveries, "", "", nil); !strings.Contains(r.body, event.String()) {
		t.Errorf("the admin does not list blog's delivery: %s", r.body)
	}
	wantError(t, "retry of blog's delivery", anon.sendJSON("POST", apiDeliveries+"/"+event.String()+"/retry", nil, false, limited),
		http.StatusNotFound, "No failed delivery has the id")
	var state string
	b.db.QueryRow(t, `SELECT state FROM notification_events WHERE id = $1`, event).Scan(&state)
	if state != "failed" {
		t.Errorf("blog's delivery is %s after the limited admin's retry, want failed", state)
	}
	if n := b.count(t, `SELECT count(*) FROM notification_channels`); n != 5 {
		t.Errorf("%d channels after the refusals, want the 5", n)
	}
	// blog removed: its channel, left without sites, is still not the
	// limited admin's to see.
	if _, err := b.store.SiteDelete(ctx, "blog"); err != nil {
		t.Fatal(err)
	}
	if got := list(anon, limited); slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "blog:") }) {
		t.Errorf("the limited admin lists blog's channel once blog is removed: %v", got)
	}
}

// The Notifications page of an admin limited to the local site and shop:
// it lists the channels of its sites only, offers no fleet, and its form
// refuses blog in words, as a site that does not exist, adding nothing;
// it adds a channel of shop, shown with its site.
func TestChannelSitesOnThePage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	for _, name := range []string{"shop", "blog"} {
		hash := sha256.Sum256([]byte("ups_" + name))
		if _, err := b.store.SiteCreate(ctx, name, "", hash[:]); err != nil {
			t.Fatal(err)
		}
	}
	admin := b.login("admin@example.test")
	wantStatus(t, "admin adds blog's", admin.sendJSON("POST", apiChannels, map[string]any{"kind": "webhook", "name": "blogs-hook", "target": hookURL,
		"events": "security", "sites": []string{"blog"}}, true, nil), http.StatusCreated)
	if page := admin.do("GET", "/admin/notifications", "", "", nil); !strings.Contains(page.body, "blogs-hook") ||
		!strings.Contains(page.body, "The site blog") || !strings.Contains(page.body, `value="fleet"`) {
		t.Errorf("the admin's page lacks blog's channel, its site or the fleet")
	}
	b.limitedUser("shop-admin@example.test", auth.RoleAdmin, store.LocalSiteName, "shop")
	c := b.login("shop-admin@example.test")
	page := c.do("GET", "/admin/notifications", "", "", nil)
	if page.status != http.StatusOK || strings.Contains(page.body, "blogs-hook") || strings.Contains(page.body, `value="fleet"`) {
		t.Errorf("the limited admin's page: %d, shows blog's channel or the fleet", page.status)
	}
	form := url.Values{"kind": {"webhook"}, "url": {hookURL}, "events": {"security"}, "scope": {"sites"}, "sites": {"blog"}, "name": {"mine"}}
	r := c.postForm("/admin/notifications/channels", form)
	if r.status != http.StatusSeeOther {
		t.Fatalf("the form naming blog: %d", r.status)
	}
	page = c.do("GET", "/admin/notifications", "", "", nil)
	if !strings.Contains(page.body, "No site is named “blog”.") {
		t.Errorf("the form's refusal of blog is not said")
	}
	form.Set("sites", "shop")
	if r := c.postForm("/admin/notifications/channels", form); r.status != http.StatusSeeOther {
		t.Fatalf("the form naming shop: %d", r.status)
	}
	if page := c.do("GET", "/admin/notifications", "", "", nil); !strings.Contains(page.body, "The site shop") {
		t.Errorf("the limited admin's channel of shop is not shown with its site")
	}
	form.Set("scope", "fleet")
	form.Set("sites", "")
	wantStatus(t, "the form asking for the fleet", c.postForm("/admin/notifications/channels", form), http.StatusForbidden)
	if n := b.count(t, `SELECT count(*) FROM notification_channels`); n != 2 {
		t.Errorf("%d channels, want blog's and the limited admin's of shop", n)
	}
}

// A user limited to registered sites, not the local one, reaches the
// Notifications section (its page and API): it lists, makes and acts on
// the channels of its sites alone, is offered neither the local site nor
// the fleet, is refused a channel of the local site as a site that does
// not exist, and acts on the local site's channel as on one that does
// not exist (404). Its page carries nothing of the local site.
func TestNotificationsForAUserWithoutTheLocalSite(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	hash := sha256.Sum256([]byte("ups_shop"))
	if _, err := b.store.SiteCreate(ctx, "shop", "", hash[:]); err != nil {
		t.Fatal(err)
	}
	admin := b.login("admin@example.test")
	r := admin.sendJSON("POST", apiChannels, map[string]any{"kind": "webhook", "name": "local-hook", "target": hookURL, "events": "security"}, true, nil)
	wantStatus(t, "admin adds the local site's", r, http.StatusCreated)
	local := decodeJSON[scopedChannel](t, r)

	limited := b.limitedUser("shop-admin@example.test", auth.RoleAdmin, "shop")
	anon := b.anonymous()
	wantError(t, "a channel of the local site", anon.sendJSON("POST", apiChannels, map[string]any{"kind": "webhook", "target": hookURL,
		"events": "security"}, false, limited), http.StatusNotFound, "No site is named “local”.")
	mine := anon.sendJSON("POST", apiChannels, map[string]any{"kind": "webhook", "name": "shops-hook", "target": hookURL, "events": "security",
		"sites": []string{"shop"}}, false, limited)
	wantStatus(t, "a channel of shop", mine, http.StatusCreated)
	list := anon.do("GET", apiChannels, "", "", limited)
	wantStatus(t, "the list", list, http.StatusOK)
	var names []string
	for _, ch := range decodeJSON[struct{ Channels []scopedChannel }](t, list).Channels {
		names = append(names, ch.Name)
	}
	if !slices.Equal(names, []string{"shops-hook"}) {
		t.Errorf("the user limited to shop lists %v; want shop's alone", names)
	}
	wantStatus(t, "the deliveries", anon.do("GET", apiDeliveries, "", "", limited), http.StatusOK)
	path := fmt.Sprintf("%s/%d", apiChannels, local.ID)
	wantError(t, "test of the local site's channel", anon.sendJSON("POST", path+"/test", nil, false, limited), http.StatusNotFound,
		fmt.Sprintf("No channel has the id %d.", local.ID))
	wantStatus(t, "test of shop's channel", anon.sendJSON("POST", fmt.Sprintf("%s/%d/test", apiChannels, decodeJSON[scopedChannel](t, mine).ID),
		nil, false, limited), http.StatusAccepted)

	c := b.loginLimited("shop-admin@example.test")
	page := c.do("GET", "/admin/notifications", "", "", nil)
	if page.status != http.StatusOK {
		t.Fatalf("the page: %d", page.status)
	}
	for _, hidden := range []string{"local-hook", `value="local"`, `value="fleet"`, `href="/admin/plugins"`, `href="/admin"`} {
		if strings.Contains(page.body, hidden) {
			t.Errorf("the page of the user limited to shop has %s", hidden)
		}
	}
	if !strings.Contains(page.body, "shops-hook") || !strings.Contains(page.body, `href="/admin/notifications"`) {
		t.Errorf("the page lacks shop's channel or the link to the section")
	}
	wantStatus(t, "the form's delete question of the local site's channel",
		c.do("GET", fmt.Sprintf("/admin/notifications/channels/%d/delete", local.ID), "", "", nil), http.StatusNotFound)
}
