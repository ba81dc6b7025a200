package notify

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// hostileMessage is a publisher's deprecation message that, unescaped,
// would run a script in an HTML mail, format a chat (*bold*, a link), ping
// a Mattermost channel (@channel), and break a line.
const hostileMessage = "<script>alert(1)</script> *use* [the new one](https://evil.example) @channel `x`\nsecond line"

// npmPayloads are the three npm events' payloads, as docs/notifications.md
// describes them.
func npmPayloads(t *testing.T) map[readmodel.EventType][]byte {
	t.Helper()
	component := map[string]string{"code": "acme-blog", "name": "Blog", "installed": "2.3.0"}
	out := map[readmodel.EventType][]byte{}
	for typ, p := range map[readmodel.EventType]map[string]any{
		readmodel.EventDeprecated: {"component": component, "package": "@acme/blog", "message": hostileMessage},
		readmodel.EventTrustDowngrade: {"component": component, "package": "@acme/blog", "version": "2.5.0",
			"kind": string(readmodel.DowngradeProvenance)},
		readmodel.EventRegistryKeysChanged: {"registry": "http://127.0.0.1:4873/", "key_ids": []string{"SHA256:new<b>"},
			"old_key_ids": []string{"SHA256:old"}, "changed_at": "2026-11-30T03:00:00Z"},
	} {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		out[typ] = b
	}
	return out
}

// Slack words each npm event, the publisher's message as one line of
// inline code: escaped (&, <, >), its backticks unable to end the span, so
// that neither markup, a link nor a mention survives.
func TestNpmEventsInChat(t *testing.T) {
	t.Parallel()
	payloads := npmPayloads(t)
	for typ, want := range map[readmodel.EventType]string{
		readmodel.EventDeprecated: "upcheck: Blog 2.3.0 is deprecated by its publisher: `&lt;script&gt;alert(1)&lt;/script&gt; *use* " +
			"[the new one](https://evil.example) @channel 'x' second line`",
		readmodel.EventTrustDowngrade: "upcheck: trust downgrade for Blog: 2.5.0 was published without the provenance that 2.3.0 had; " +
			"check who published it before you install it",
		readmodel.EventRegistryKeysChanged: "upcheck: the npm registry `http://127.0.0.1:4873/` changed its signing keys: now `SHA256:new&lt;b&gt;`; " +
			"pinned before: `SHA256:old`. Check with the registry’s operator that they rotated them.",
	} {
		got := slackText(store.Delivery{Type: string(typ), Payload: payloads[typ]}, "")
		if got != want {
			t.Errorf("%s:\n got %q\nwant %q", typ, got, want)
		}
		if strings.ContainsAny(got, "<>\n") || strings.Count(got, "`")%2 != 0 {
			t.Errorf("%s: not escaped: %q", typ, got)
		}
	}
}

// An email words each npm event, in the urgency order (a trust downgrade
// before a deprecation, a registry's keys after them); the HTML body
// escapes the publisher's message and the text body keeps it on one line.
func TestNpmEventsInEmail(t *testing.T) {
	t.Parallel()
	payloads := npmPayloads(t)
	m := store.Message{Channel: readmodel.ChannelRow{Name: "ops"}}
	for _, typ := range []readmodel.EventType{readmodel.EventRegistryKeysChanged, readmodel.EventDeprecated, readmodel.EventTrustDowngrade} {
		m.Events = append(m.Events, store.MessageEvent{Type: string(typ), Key: string(typ) + ":acme-blog", Payload: payloads[typ]})
	}
	mail, err := composeMail(m, "https://upcheck.example.org")
	if err != nil {
		t.Fatal(err)
	}
	last := -1
	for _, want := range []string{
		"* Trust downgrade for Blog: 2.5.0 was published without the provenance that 2.3.0 had\n  Check who published 2.5.0 before you install it.",
		"* Blog 2.3.0 is deprecated by its publisher\n  Its publisher says: <script>alert(1)</script> *use* [the new one](https://evil.example) @channel `x` second line\n",
		"* npm registry signing keys changed: http://127.0.0.1:4873/\n  Keys now: SHA256:new<b>\n  Keys pinned before: SHA256:old",
	} {
		i := strings.Index(mail.Text, want)
		if i < 0 || i < last {
			t.Fatalf("%q is missing or out of order in:\n%s", want, mail.Text)
		}
		last = i
	}
	if want := "[upcheck] Trust downgrade for Blog: 2.5.0 has no provenance and 2 more"; mail.Subject != want {
		t.Errorf("subject %q, want %q", mail.Subject, want)
	}
	if strings.Contains(mail.HTML, "<script>") || strings.Contains(mail.HTML, "<b>") ||
		!strings.Contains(mail.HTML, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the HTML body does not escape the publisher's text:\n%s", mail.HTML)
	}
}

// A webhook carries the npm event's payload as it is: the publisher's
// message whole (a JSON string, safe in any reader's HTML: no raw < or >),
// with the component's AdminCP link.
func TestNpmEventsInWebhook(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []byte
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = b
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)
	f := fetch.New(fetch.Config{AllowPrivate: true}, nil)
	t.Cleanup(f.Close)
	s := &Service{fetcher: f, publicURL: "https://upcheck.example.org"}
	d := store.Delivery{ID: uuid.New(), Type: string(readmodel.EventDeprecated), Payload: npmPayloads(t)[readmodel.EventDeprecated],
		CreatedAt: time.Now(), Secret: "whsec_" + strings.Repeat("A", 43) + "=",
		Channel: readmodel.ChannelRow{Kind: string(readmodel.ChannelWebhook), Target: hook.URL}}
	if status, err := s.send(context.Background(), d); err != nil || status != http.StatusOK {
		t.Fatalf("send: %d %v", status, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.ContainsAny(string(got), "<>") {
		t.Errorf("the webhook body carries raw < or >: %s", got)
	}
	var body struct {
		Type     string `json:"type"`
		AdminURL string `json:"admin_url"`
		Data     struct {
			Message string `json:"message"`
			Package string `json:"package"`
		} `json:"data"`
	}
	if err := json.Unmarshal(got, &body); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if body.Type != "deprecated" || body.Data.Message != hostileMessage || body.Data.Package != "@acme/blog" ||
		body.AdminURL != "https://upcheck.example.org/admin/plugins/acme-blog" {
		t.Errorf("webhook body %s", got)
	}
}
