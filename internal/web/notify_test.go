package web_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/web"
)

// notifyForm posts a form with the client's CSRF token.
func notifyForm(c *client, path string, v url.Values) response {
	c.b.t.Helper()
	v.Set("csrf_token", c.csrf)
	return c.do("POST", path, v.Encode(), "application/x-www-form-urlencoded", nil)
}

// wantRedirect checks a 303 to the notifications page and returns the page
// that follows it.
func wantRedirect(t *testing.T, c *client, what string, r response) response {
	t.Helper()
	wantStatus(t, what, r, http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != "/admin/notifications" {
		t.Fatalf("%s: redirected to %q, want /admin/notifications", what, loc)
	}
	return c.do("GET", "/admin/notifications", "", "", nil)
}

var (
	targetSpan = regexp.MustCompile(`(?s)data-testid="channel-target">(.*?)</span>\s*</span>`)
	tags       = regexp.MustCompile(`<[^>]*>|\s+`)
)

// shownTargets are the channel targets a page shows, as text.
func shownTargets(body string) []string {
	var out []string
	for _, m := range targetSpan.FindAllStringSubmatch(body, -1) {
		out = append(out, tags.ReplaceAllString(m[1], ""))
	}
	return out
}

func (b *bundle) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	b.db.QueryRow(t, query, args...).Scan(&n)
	return n
}

// The Notifications page: an admin adds a webhook through a post that
// redirects (303), sees its secret and full URL once through the flash on
// a page that is not cached, and a reload shows neither and adds nothing;
// a bad URL is refused in plain words; a test is queued and listed; a
// viewer reads the page without forms, sees the scheme and host only, and
// is refused the actions; an admin sees the masked URL afterwards.
func TestNotificationsPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin, viewer := b.login("admin@example.test"), b.login("viewer@example.test")

	page := wantRedirect(t, admin, "bad URL", notifyForm(admin, "/admin/notifications/channels", url.Values{"kind": {"webhook"}, "url": {"ftp://x.example/"}, "events": {"security"}}))
	if !strings.Contains(page.body, "The channel was not added: the URL must be an absolute http or https URL") ||
		!strings.Contains(page.body, `value="ftp://x.example/"`) {
		t.Fatalf("the refusal does not say why, or the form is not filled in again:\n%s", page.body)
	}

	const hook = "https://hooks.example/services/T000/B000/XYZsecretpath"
	r := notifyForm(admin, "/admin/notifications/channels", url.Values{"kind": {"webhook"}, "url": {hook}, "events": {"security"}, "name": {"Ops"}})
	if strings.Contains(r.body, "whsec_") || strings.Contains(r.header.Get("Location"), "whsec_") {
		t.Fatal("the secret travels in the redirect")
	}
	page = wantRedirect(t, admin, "add", r)
	secret := regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`).FindString(page.body)
	shown := tags.ReplaceAllString(regexp.MustCompile(`(?s)data-testid="notify-new-target-value">(.*?)</p>`).FindString(page.body), "")
	if secret == "" || !strings.Contains(shown, hook) {
		t.Fatalf("the new channel's secret and full URL are not shown:\n%s", page.body)
	}
	if cc := page.header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("the page with the secret has Cache-Control %q, want no-store", cc)
	}
	reload := admin.do("GET", "/admin/notifications", "", "", nil)
	if text := tags.ReplaceAllString(reload.body, ""); strings.Contains(text, secret) || strings.Contains(text, hook) || strings.Contains(text, "XYZsecret") {
		t.Fatal("the secret or the full URL is shown again on a reload")
	}
	if got := shownTargets(reload.body); len(got) != 1 || got[0] != "https://hooks.example/…path" {
		t.Fatalf("an admin sees %q, want the masked URL", got)
	}
	if n := b.count(t, "SELECT count(*) FROM notification_channels"); n != 1 {
		t.Fatalf("%d channels after one add and a reload", n)
	}
	id := strconv.Itoa(b.count(t, "SELECT id FROM notification_channels"))
	path := func(action string) string { return "/admin/notifications/channels/" + id + "/" + action }

	if !strings.Contains(wantRedirect(t, admin, "test", notifyForm(admin, path("test"), url.Values{})).body, "Test event queued") {
		t.Fatal("the test's notice is not shown")
	}
	page = viewer.do("GET", "/admin/notifications", "", "", nil)
	wantStatus(t, "viewer page", page, http.StatusOK)
	if !strings.Contains(page.body, `data-testid="delivery-row" data-state="pending"`) || !strings.Contains(page.body, "Ops") {
		t.Fatalf("the viewer does not see the channel and its pending test:\n%s", page.body)
	}
	if got := shownTargets(page.body); len(got) != 1 || got[0] != "https://hooks.example/…" || strings.Contains(tags.ReplaceAllString(page.body, ""), "XYZsecret") {
		t.Fatalf("a viewer sees %q, want the scheme and host only", got)
	}
	if strings.Contains(page.body, `data-testid="channel-form"`) || strings.Contains(page.body, `data-testid="channel-delete"`) {
		t.Fatal("a viewer is shown the forms")
	}
	wantStatus(t, "viewer disable", notifyForm(viewer, path("disable"), url.Values{}), http.StatusForbidden)
	page = wantRedirect(t, admin, "disable", notifyForm(admin, path("disable"), url.Values{}))
	if !strings.Contains(page.body, `data-testid="channel-enable"`) || !strings.Contains(page.body, "turned off by an admin") ||
		!strings.Contains(page.body, "Channel disabled") {
		t.Fatalf("a disabled channel is not shown as such:\n%s", page.body)
	}
	page = wantRedirect(t, admin, "enable", notifyForm(admin, path("enable"), url.Values{}))
	if b.count(t, "SELECT count(*) FROM notification_channels WHERE enabled") != 1 || !strings.Contains(page.body, "Channel enabled") {
		t.Fatalf("the channel is not enabled again:\n%s", page.body)
	}
	page = wantRedirect(t, admin, "email without a mail server", notifyForm(admin, "/admin/notifications/channels", url.Values{"kind": {"email"}, "to": {"ops@example.org"}, "events": {"security"}}))
	if !strings.Contains(page.body, "UPCHECK_SMTP_URL") {
		t.Fatalf("the refusal of an email channel does not say what is missing:\n%s", page.body)
	}

	// Delete asks first, without JavaScript too.
	wantStatus(t, "viewer delete", notifyForm(viewer, path("delete"), url.Values{"confirmed": {"yes"}}), http.StatusForbidden)
	wantStatus(t, "viewer question", viewer.do("GET", path("delete"), "", "", nil), http.StatusForbidden)
	q := admin.do("GET", path("delete"), "", "", nil)
	wantStatus(t, "the question", q, http.StatusOK)
	if !strings.Contains(q.body, `data-testid="confirm"`) || !strings.Contains(q.body, `name="confirmed" value="yes"`) ||
		!strings.Contains(q.body, `action="`+path("delete")+`"`) || !strings.Contains(q.body, "Ops") {
		t.Fatalf("the question is not asked:\n%s", q.body)
	}
	r = notifyForm(admin, path("delete"), url.Values{})
	wantStatus(t, "delete without confirmation", r, http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != path("delete") || b.count(t, "SELECT count(*) FROM notification_channels") != 1 {
		t.Fatalf("an unconfirmed delete went to %q or deleted the channel", loc)
	}
	page = wantRedirect(t, admin, "admin delete", notifyForm(admin, path("delete"), url.Values{"confirmed": {"yes"}}))
	if n := b.count(t, "SELECT count(*) FROM notification_channels"); n != 0 || !strings.Contains(page.body, "Channel “Ops” deleted.") {
		t.Fatalf("%d channels after delete:\n%s", n, page.body)
	}
}

// Acting on a channel or an event that does not exist answers 404, not 500.
func TestUnknownChannelAnswers404(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	for _, p := range []string{"/admin/notifications/channels/999/test", "/admin/notifications/channels/999/enable",
		"/admin/notifications/channels/999/disable", "/admin/notifications/events/" + "00000000-0000-4000-8000-000000000000" + "/retry"} {
		wantStatus(t, p, notifyForm(admin, p, url.Values{}), http.StatusNotFound)
	}
	wantStatus(t, "delete", notifyForm(admin, "/admin/notifications/channels/999/delete", url.Values{"confirmed": {"yes"}}), http.StatusNotFound)
	wantStatus(t, "the question", admin.do("GET", "/admin/notifications/channels/999/delete", "", "", nil), http.StatusNotFound)
}

// Email recipients are shown to admins only.
func TestEmailRecipientsAdminsOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.db.MustExec(t, "INSERT INTO notification_channels (name, kind, target, events) VALUES ('mail', 'email', 'jo.private@example.org', 'security')")
	if page := b.login("admin@example.test").do("GET", "/admin/notifications", "", "", nil); strings.Join(shownTargets(page.body), " ") != "jo.private@example.org" {
		t.Fatalf("an admin does not see the recipients: %q", shownTargets(page.body))
	}
	if page := b.login("viewer@example.test").do("GET", "/admin/notifications", "", "", nil); strings.Contains(page.body, "jo.private") {
		t.Fatalf("a viewer sees the recipients:\n%s", page.body)
	}
}

// Adding a channel while problems are outstanding says how many are on
// their way, in the right number; the channel's changes are in the audit
// log and its CSV in words, with the admin who made them.
func TestChannelNoticesAndAudit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if res, err := b.checker.RunLockedUpdateCheck(context.Background(), lease.Operator, "test"); err != nil || !res.Status.RanToEnd() {
		t.Fatalf("check: %+v %v", res, err)
	}
	admin := b.login("admin@example.test")
	page := wantRedirect(t, admin, "add", notifyForm(admin, "/admin/notifications/channels",
		url.Values{"kind": {"slack"}, "url": {"https://chat.example/hooks/abcdefgh12345"}, "events": {"all"}, "name": {"chat"}}))
	n := b.count(t, "SELECT count(*) FROM notification_events")
	want := strconv.Itoa(n) + " outstanding events are on their way to it."
	if n == 1 {
		want = "1 outstanding event is on its way to it."
	}
	if n == 0 || !strings.Contains(page.body, want) {
		t.Fatalf("%d events queued; the notice does not say %q:\n%s", n, want, page.body)
	}
	id := strconv.Itoa(b.count(t, "SELECT id FROM notification_channels"))
	for _, action := range []string{"test", "disable", "enable"} {
		wantRedirect(t, admin, action, notifyForm(admin, "/admin/notifications/channels/"+id+"/"+action, url.Values{}))
	}
	wantRedirect(t, admin, "delete", notifyForm(admin, "/admin/notifications/channels/"+id+"/delete", url.Values{"confirmed": {"yes"}}))

	audit := admin.do("GET", "/admin/audit", "", "", nil)
	for _, words := range []string{"Notification channel added", "Test notification sent to a channel", "Notification channel disabled",
		"Notification channel enabled", "Notification channel deleted"} {
		if !strings.Contains(audit.body, words) {
			t.Errorf("the audit log does not say %q", words)
		}
	}
	if strings.Contains(audit.body, "abcdefgh") {
		t.Error("the audit log shows the channel's full URL")
	}
	csv := admin.do("GET", "/admin/audit.csv", "", "", nil)
	for _, action := range []string{"channel.add", "channel.test", "channel.disable", "channel.enable", "channel.remove"} {
		if !regexp.MustCompile(`(?m)^[^\n]*,` + regexp.QuoteMeta(action) + `,admin@example\.test,[^\n]*chat`).MatchString(csv.body) {
			t.Errorf("the CSV has no %s row by admin@example.test naming the channel:\n%s", action, csv.body)
		}
	}
}

// On a server that does not send to private addresses, a webhook to one is
// refused when added, in words that name the setting that allows it.
func TestPrivateWebhookRefusedOnThePage(t *testing.T) {
	t.Parallel()
	b := setup(t, func(b *bundle, d *web.Deps) {
		guarded := fetch.New(fetch.Config{}, nil)
		t.Cleanup(guarded.Close)
		n, err := notify.New(b.db.Pool, b.store, guarded, notify.DefaultTimings(), slog.Default())
		if err != nil {
			t.Fatal(err)
		}
		d.Notify = n
	})
	admin := b.login("admin@example.test")
	page := wantRedirect(t, admin, "private webhook", notifyForm(admin, "/admin/notifications/channels",
		url.Values{"kind": {"webhook"}, "url": {"http://127.0.0.1:9000/hook"}, "events": {"security"}}))
	if !strings.Contains(page.body, "The channel was not added: the URL’s host is 127.0.0.1") ||
		!strings.Contains(page.body, "UPCHECK_ALLOW_PRIVATE_SOURCES=1") {
		t.Fatalf("the refusal does not say why:\n%s", page.body)
	}
	if n := b.count(t, "SELECT count(*) FROM notification_channels"); n != 0 {
		t.Fatalf("%d channels after a refusal", n)
	}
}

// A delivery held while its channel is disabled is shown as held, with
// what will send it.
func TestHeldDeliveryShown(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.db.MustExec(t, "INSERT INTO notification_channels (id, name, kind, target, events, enabled) VALUES (1, 'ops', 'webhook', 'https://hooks.example/x', 'all', false)")
	b.db.MustExec(t, "INSERT INTO notification_events (id, channel_id, key, type, payload, held_at) VALUES (gen_random_uuid(), 1, 'test:x', 'test', '{}', clock_timestamp())")
	page := b.login("viewer@example.test").do("GET", "/admin/notifications", "", "", nil)
	if !strings.Contains(page.body, `data-testid="delivery-held"`) || !strings.Contains(page.body, ">Held<") {
		t.Fatalf("the held delivery is not shown as held:\n%s", page.body)
	}
}
