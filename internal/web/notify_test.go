package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// The Notifications page: an admin adds a webhook and sees its secret once,
// a bad URL is refused in plain words, a test is queued and listed, a viewer
// reads the page without forms and is refused the actions.
func TestNotificationsPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin, viewer := b.login("admin@example.test"), b.login("viewer@example.test")
	form := func(c *client, v url.Values) string {
		v.Set("csrf_token", c.csrf)
		return v.Encode()
	}
	post := func(c *client, path string, v url.Values) response {
		return c.do("POST", path, form(c, v), "application/x-www-form-urlencoded", nil)
	}

	r := post(admin, "/admin/notifications/channels", url.Values{"kind": {"webhook"}, "url": {"ftp://x.example/"}, "events": {"security"}})
	wantStatus(t, "bad URL", r, http.StatusUnprocessableEntity)
	if !strings.Contains(r.body, "The channel was not added: the URL must be an absolute http or https URL") {
		t.Fatalf("the refusal does not say why:\n%s", r.body)
	}

	r = post(admin, "/admin/notifications/channels", url.Values{"kind": {"webhook"}, "url": {"https://hooks.example/upcheck"}, "events": {"security"}, "name": {"Ops"}})
	wantStatus(t, "add", r, http.StatusOK)
	secret := regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`).FindString(r.body)
	if secret == "" {
		t.Fatalf("the new channel's secret is not shown:\n%s", r.body)
	}
	if page := admin.do("GET", "/admin/notifications", "", "", nil); strings.Contains(page.body, secret) {
		t.Fatal("the secret is shown again on a later visit")
	}

	wantStatus(t, "test", post(admin, "/admin/notifications/channels/1/test", url.Values{}), http.StatusSeeOther)
	page := viewer.do("GET", "/admin/notifications", "", "", nil)
	wantStatus(t, "viewer page", page, http.StatusOK)
	if !strings.Contains(page.body, `data-testid="delivery-row" data-state="pending"`) || !strings.Contains(page.body, "Ops") {
		t.Fatalf("the viewer does not see the channel and its pending test:\n%s", page.body)
	}
	if strings.Contains(page.body, `data-testid="channel-form"`) || strings.Contains(page.body, `data-testid="channel-delete"`) {
		t.Fatal("a viewer is shown the forms")
	}
	wantStatus(t, "viewer disable", post(viewer, "/admin/notifications/channels/1/disable", url.Values{}), http.StatusForbidden)
	wantStatus(t, "disable", post(admin, "/admin/notifications/channels/1/disable", url.Values{}), http.StatusSeeOther)
	if page := admin.do("GET", "/admin/notifications", "", "", nil); !strings.Contains(page.body, `data-testid="channel-enable"`) ||
		!strings.Contains(page.body, "turned off by an admin") {
		t.Fatalf("a disabled channel is not shown as such:\n%s", page.body)
	}
	wantStatus(t, "enable", post(admin, "/admin/notifications/channels/1/enable", url.Values{}), http.StatusSeeOther)
	var enabled bool
	b.db.QueryRow(t, "SELECT enabled FROM notification_channels WHERE id = 1").Scan(&enabled)
	if !enabled {
		t.Fatal("the channel is not enabled again")
	}
	r = post(admin, "/admin/notifications/channels", url.Values{"kind": {"email"}, "to": {"ops@example.org"}, "events": {"security"}})
	wantStatus(t, "email without a mail server", r, http.StatusUnprocessableEntity)
	if !strings.Contains(r.body, "UPCHECK_SMTP_URL") {
		t.Fatalf("the refusal of an email channel does not say what is missing:\n%s", r.body)
	}
	wantStatus(t, "viewer delete", post(viewer, "/admin/notifications/channels/1/delete", url.Values{}), http.StatusForbidden)
	wantStatus(t, "admin delete", post(admin, "/admin/notifications/channels/1/delete", url.Values{}), http.StatusSeeOther)
	var left int
	b.db.QueryRow(t, "SELECT count(*) FROM notification_channels").Scan(&left)
	if left != 0 {
		t.Fatalf("%d channels after delete", left)
	}
}
