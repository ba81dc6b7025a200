package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
)

const (
	apiChannels   = "/api/admin/notifications/channels"
	apiDeliveries = "/api/admin/notifications/deliveries"
	// hookURL is a Slack-style webhook URL: a credential.
	hookURL = "https://hooks.example.test/services/T0001/B0002/XyzSecretPart9876"
)

type channelAnswer struct {
	ID      int64   `json:"id"`
	Name    string  `json:"name"`
	Kind    string  `json:"kind"`
	Target  string  `json:"target"`
	Enabled bool    `json:"enabled"`
	Secret  *string `json:"secret"`
	Queued  int     `json:"queued"`
}

// Channels through the API: only the answer that creates one has its
// whole target and secret; afterwards admins see a masked target and
// viewers the scheme and host only (notify.ShownTarget); changes need
// plugins.can_manage and, with a session, the CSRF token.
func TestAPIChannels(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin, viewer := b.login("admin@example.test"), b.login("viewer@example.test")
	add := map[string]string{"kind": "webhook", "name": "Ops", "target": hookURL, "events": "all"}

	wantError(t, "anonymous list", b.anonymous().do("GET", apiChannels, "", "", nil), 401, "authentication required")
	wantStatus(t, "viewer adds", viewer.sendJSON("POST", apiChannels, add, true, nil), 403)
	wantStatus(t, "viewer token adds", b.anonymous().sendJSON("POST", apiChannels, add, false, b.bearer("viewer@example.test")), 403)
	wantStatus(t, "admin session without its CSRF token", admin.sendJSON("POST", apiChannels, add, false, nil), 403)

	r := admin.sendJSON("POST", apiChannels, add, true, nil)
	wantStatus(t, "add", r, 201)
	if r.header.Get("Cache-Control") != "no-store" {
		t.Errorf("the answer with the secret has Cache-Control %q, want no-store", r.header.Get("Cache-Control"))
	}
	ch := decodeJSON[channelAnswer](t, r)
	if ch.Target != hookURL || ch.Secret == nil || *ch.Secret == "" || ch.Kind != "webhook" || ch.Name != "Ops" || !ch.Enabled {
		t.Fatalf("created channel = %s", r.body)
	}
	secret := *ch.Secret

	for who, c := range map[string]*client{"admin": admin, "viewer": viewer} {
		r := c.do("GET", apiChannels, "", "", nil)
		wantStatus(t, who+" list", r, 200)
		if strings.Contains(r.body, "XyzSecretPart") || strings.Contains(r.body, secret) || strings.Contains(r.body, "/services/") {
			t.Errorf("%s's list shows the target or the secret: %s", who, r.body)
		}
		list := decodeJSON[struct{ Channels []channelAnswer }](t, r)
		want := "https://hooks.example.test/…"
		if who == "admin" {
			want += "9876"
		}
		if len(list.Channels) != 1 || list.Channels[0].Target != want {
			t.Errorf("%s's list = %s, want the target shown as %q", who, r.body, want)
		}
	}
	// A token of a user who may manage sees what an admin sees.
	r = b.anonymous().do("GET", apiChannels, "", "", b.bearer("admin@example.test"))
	if !strings.Contains(r.body, "https://hooks.example.test/…9876") {
		t.Errorf("admin token's list = %s", r.body)
	}

	wantError(t, "a kind that does not exist", admin.sendJSON("POST", apiChannels, map[string]string{"kind": "pager", "target": hookURL, "events": "all"}, true, nil),
		422, "kind must be webhook, slack or email")
	wantError(t, "a relative URL", admin.sendJSON("POST", apiChannels, map[string]string{"kind": "slack", "target": "/hook", "events": "all"}, true, nil),
		422, "absolute http or https URL")
	wantError(t, "email without a mail server", admin.sendJSON("POST", apiChannels, map[string]string{"kind": "email", "target": "ops@example.test", "events": "all"}, true, nil),
		422, "UPCHECK_SMTP_URL")
	wantError(t, "an unknown member", admin.sendJSON("POST", apiChannels, map[string]string{"kind": "slack", "url": hookURL}, true, nil), 422, "“url”")
	if list := decodeJSON[struct{ Channels []channelAnswer }](t, admin.do("GET", apiChannels, "", "", nil)); len(list.Channels) != 1 {
		t.Errorf("refused channels were added: %+v", list.Channels)
	}

	path := fmt.Sprintf("%s/%d", apiChannels, ch.ID)
	wantStatus(t, "viewer disables", viewer.sendJSON("POST", path+"/disable", nil, true, nil), 403)
	r = admin.sendJSON("POST", path+"/disable", nil, true, nil)
	wantStatus(t, "disable", r, 200)
	if got := decodeJSON[struct{ Channel channelAnswer }](t, r).Channel; got.Enabled || got.Target != "https://hooks.example.test/…9876" {
		t.Errorf("disabled channel = %s", r.body)
	}
	r = b.anonymous().sendJSON("POST", path+"/enable", nil, false, b.bearer("admin@example.test"))
	wantStatus(t, "enable with a token", r, 200)
	if got := decodeJSON[struct{ Channel channelAnswer }](t, r).Channel; !got.Enabled {
		t.Errorf("enabled channel = %s", r.body)
	}
	for _, action := range []string{"/test", "/enable", "/disable", ""} {
		method := "POST"
		if action == "" {
			method = "DELETE"
		}
		wantError(t, "unknown channel "+method+action, admin.sendJSON(method, apiChannels+"/99999"+action, nil, true, nil), 404, "No channel has the id 99999.")
		wantError(t, "channel id not a number "+method+action, admin.sendJSON(method, apiChannels+"/abc"+action, nil, true, nil), 400, "must be a number")
	}

	wantStatus(t, "viewer deletes", viewer.sendJSON("DELETE", path, nil, true, nil), 403)
	wantStatus(t, "delete without CSRF", admin.sendJSON("DELETE", path, nil, false, nil), 403)
	wantStatus(t, "delete", admin.sendJSON("DELETE", path, nil, true, nil), 204)
	wantError(t, "delete again", admin.sendJSON("DELETE", path, nil, true, nil), 404, "No channel has the id")
	if r := admin.do("GET", apiChannels, "", "", nil); r.body != "{\"channels\":[]}\n" {
		t.Errorf("list after the delete = %q", r.body)
	}
}

// Test events and deliveries: a test queues an event, the deliveries list
// it, and a failed one can be retried (404 for an id that is not a failed
// delivery).
func TestAPIDeliveries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin, viewer := b.login("admin@example.test"), b.login("viewer@example.test")
	ch := decodeJSON[channelAnswer](t, admin.sendJSON("POST", apiChannels, map[string]string{"kind": "slack", "target": hookURL, "events": "security"}, true, nil))
	if ch.Name != "hooks.example.test" || ch.Secret != nil {
		t.Errorf("slack channel = %+v; want it named after its host, with no secret", ch)
	}

	wantStatus(t, "viewer tests", viewer.sendJSON("POST", fmt.Sprintf("%s/%d/test", apiChannels, ch.ID), nil, true, nil), 403)
	r := admin.sendJSON("POST", fmt.Sprintf("%s/%d/test", apiChannels, ch.ID), nil, true, nil)
	wantStatus(t, "test", r, 202)
	event := decodeJSON[map[string]string](t, r)["event_id"]
	if _, err := uuid.Parse(event); err != nil {
		t.Fatalf("test answer = %s", r.body)
	}

	wantError(t, "anonymous deliveries", b.anonymous().do("GET", apiDeliveries, "", "", nil), 401, "authentication required")
	r = viewer.do("GET", apiDeliveries, "", "", nil)
	wantStatus(t, "viewer deliveries", r, 200)
	type delivery struct {
		ID, Type, State, ChannelName string
		Key                          string `json:"key"`
		ChannelID                    int64  `json:"channel_id"`
	}
	list := decodeJSON[struct{ Deliveries []delivery }](t, r)
	var found *delivery
	for i, d := range list.Deliveries {
		if d.ID == event {
			found = &list.Deliveries[i]
		}
	}
	if found == nil || found.Type != "test" || found.State != "pending" || found.ChannelID != ch.ID || found.Key != "test:"+event {
		t.Fatalf("deliveries = %s; want the test event, pending", r.body)
	}
	wantError(t, "limit 0", admin.do("GET", apiDeliveries+"?limit=0", "", "", nil), 400, "limit must be a number from 1 to 500")
	if got := decodeJSON[struct{ Deliveries []delivery }](t, admin.do("GET", apiDeliveries+"?limit=1", "", "", nil)); len(got.Deliveries) != 1 {
		t.Errorf("limit=1 gave %d deliveries", len(got.Deliveries))
	}

	retry := apiDeliveries + "/" + event + "/retry"
	wantError(t, "retry a pending delivery", admin.sendJSON("POST", retry, nil, true, nil), 404, "No failed delivery has the id "+event+".")
	wantError(t, "retry an unknown delivery", admin.sendJSON("POST", apiDeliveries+"/"+uuid.NewString()+"/retry", nil, true, nil), 404, "No failed delivery")
	wantError(t, "retry a delivery id that is not one", admin.sendJSON("POST", apiDeliveries+"/7/retry", nil, true, nil), 400, "not a UUID")
	b.db.MustExec(t, "UPDATE notification_events SET state = 'failed', attempts = 8, last_error = 'the receiver answered 500' WHERE id = $1", event)
	wantStatus(t, "viewer retries", viewer.sendJSON("POST", retry, nil, true, nil), 403)
	wantStatus(t, "retry without CSRF", admin.sendJSON("POST", retry, nil, false, nil), 403)
	r = admin.sendJSON("POST", retry, nil, true, nil)
	wantStatus(t, "retry", r, 202)
	var state string
	b.db.QueryRow(t, "SELECT state FROM notification_events WHERE id = $1", event).Scan(&state)
	if state != "pending" || decodeJSON[map[string]string](t, r)["event_id"] != event {
		t.Errorf("after the retry: state %q, answer %s", state, r.body)
	}
}
