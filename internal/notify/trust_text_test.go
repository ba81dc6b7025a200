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

// hostileAccount is a publisher account that, unescaped, would ping a
// Slack channel, format a chat and end a code span.
const hostileAccount = "<!channel> *mallory* `x`"

// trustPayloads are trust_downgrade's payloads, by kind, as
// docs/notifications.md describes them.
func trustPayloads(t *testing.T) map[readmodel.TrustDowngradeKind][]byte {
	t.Helper()
	component := map[string]string{"code": "acme-blog", "name": "Blog", "installed": "2.3.0"}
	out := map[readmodel.TrustDowngradeKind][]byte{}
	for kind, p := range map[readmodel.TrustDowngradeKind]map[string]any{
		readmodel.DowngradeProvenance: {"component": component, "package": "@acme/blog", "kind": "provenance_lost", "version": "2.5.0"},
		readmodel.DowngradePublisher: {"component": component, "package": "@acme/blog", "kind": "new_publisher", "version": "2.4.0",
			"account": hostileAccount},
		readmodel.DowngradePin: {"kind": "pin", "source": "https://acme.example/<u>.json", "components": []string{"blog", "gallery"},
			"reason": "the manifest requires 1 signature where it required 2", "changed_at": "2026-11-30T03:00:00Z"},
	} {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		out[kind] = b
	}
	return out
}

// Slack says which trust went down, in words; the account is quoted as
// code, escaped, so that it neither pings nor formats.
func TestTrustDowngradeInChat(t *testing.T) {
	t.Parallel()
	payloads := trustPayloads(t)
	for kind, want := range map[readmodel.TrustDowngradeKind]string{
		readmodel.DowngradeProvenance: "upcheck: trust downgrade for Blog: 2.5.0 was published without the provenance that 2.3.0 had; " +
			"check who published it before you install it",
		readmodel.DowngradePublisher: "upcheck: trust downgrade for Blog: 2.4.0 was published by an account new to this package " +
			"(`&lt;!channel&gt; *mallory* 'x'`); check who published it before you install it",
		readmodel.DowngradePin: "upcheck: trust downgrade: a manifest sync lowered the trust of the source `https://acme.example/&lt;u&gt;.json`: " +
			"the manifest requires 1 signature where it required 2 (components: blog, gallery). Check that the manifest change was meant.",
	} {
		got := slackText(store.Delivery{Type: string(readmodel.EventTrustDowngrade), Payload: payloads[kind]}, "")
		if got != want {
			t.Errorf("%s:\n got %q\nwant %q", kind, got, want)
		}
		if strings.ContainsAny(got, "<>\n") || strings.Count(got, "`")%2 != 0 {
			t.Errorf("%s: not escaped: %q", kind, got)
		}
	}
}

// An email words each kind of trust downgrade with the trust downgrades'
// urgency (before a deprecation); the HTML body escapes the account.
func TestTrustDowngradeInEmail(t *testing.T) {
	t.Parallel()
	payloads := trustPayloads(t)
	m := store.Message{Channel: readmodel.ChannelRow{Name: "ops"}}
	m.Events = append(m.Events, store.MessageEvent{Type: string(readmodel.EventDeprecated), Key: "deprecated:acme-blog@2.3.0",
		Payload: npmPayloads(t)[readmodel.EventDeprecated]})
	for kind, p := range payloads {
		m.Events = append(m.Events, store.MessageEvent{Type: string(readmodel.EventTrustDowngrade), Key: "trust_downgrade:" + string(kind), Payload: p})
	}
	mail, err := composeMail(m, "https://upcheck.example.org")
	if err != nil {
		t.Fatal(err)
	}
	deprecated := strings.Index(mail.Text, "is deprecated by its publisher")
	for _, want := range []string{
		"* Trust downgrade for Blog: 2.5.0 was published without the provenance that 2.3.0 had\n  Check who published 2.5.0 before you install it.",
		"* Trust downgrade for Blog: 2.4.0 was published by an account new to this package (" + hostileAccount + ")\n" +
			"  Check that " + hostileAccount + " may publish it before you install it.",
		"* Trust downgrade: a manifest sync lowered the trust of the source https://acme.example/<u>.json\n" +
			"  What changed: the manifest requires 1 signature where it required 2\n  Components: blog, gallery\n" +
			"  Check that the manifest change was meant: its documents now need less to be trusted.",
	} {
		i := strings.Index(mail.Text, want)
		if i < 0 || i > deprecated {
			t.Errorf("%q is missing, or after the deprecation, in:\n%s", want, mail.Text)
		}
	}
	if !strings.HasPrefix(mail.Subject, "[upcheck] Trust downgrade") || !strings.HasSuffix(mail.Subject, "and 3 more") {
		t.Errorf("subject %q", mail.Subject)
	}
	if strings.Contains(mail.HTML, "<!channel>") || !strings.Contains(mail.HTML, "&lt;!channel&gt;") {
		t.Errorf("the HTML body does not escape the account:\n%s", mail.HTML)
	}
}

// A webhook carries trust_downgrade's payload as it is: its kind, the
// version and the account whole.
func TestTrustDowngradeInWebhook(t *testing.T) {
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
	d := store.Delivery{ID: uuid.New(), Type: string(readmodel.EventTrustDowngrade), Payload: trustPayloads(t)[readmodel.DowngradePublisher],
		CreatedAt: time.Now(), Secret: "whsec_" + strings.Repeat("A", 43) + "=",
		Channel: readmodel.ChannelRow{Kind: string(readmodel.ChannelWebhook), Target: hook.URL}}
	if status, err := s.send(context.Background(), d); err != nil || status != http.StatusOK {
		t.Fatalf("send: %d %v", status, err)
	}
	mu.Lock()
	defer mu.Unlock()
	var body struct {
		Type     string `json:"type"`
		AdminURL string `json:"admin_url"`
		Data     struct {
			Kind, Version, Account string
		} `json:"data"`
	}
	if err := json.Unmarshal(got, &body); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if body.Type != "trust_downgrade" || body.Data.Kind != "new_publisher" || body.Data.Version != "2.4.0" ||
		body.Data.Account != hostileAccount || body.AdminURL != "https://upcheck.example.org/admin/plugins/acme-blog" {
		t.Errorf("webhook body %s", got)
	}
}

// A signal of a lockfile change (docs/npm.md "What a lockfile change
// brought", the payload EventPlanTreeBrings writes) is said as a version
// installed already, not one to install: in a chat and in an email.
func TestTreeSignalIsSaidInstalled(t *testing.T) {
	t.Parallel()
	p, err := json.Marshal(map[string]any{"component": map[string]string{"code": "", "name": "lib", "installed": "1.1.0"},
		"package": "lib", "kind": "install_script", "version": "1.1.0", "compared": "1.0.0", "tree": true,
		"signal": readmodel.Signal{Kind: readmodel.SignalInstallScript, Args: readmodel.SignalArgs{Version: "1.1.0", Name: "postinstall",
			Text: "node setup.js", Added: true}}})
	if err != nil {
		t.Fatal(err)
	}
	chat := slackText(store.Delivery{Type: string(readmodel.EventTrustDowngrade), Payload: p}, "")
	if want := "upcheck: installed by a lockfile change, lib 1.1.0: `1.1.0 adds a postinstall script: \"node setup.js\"`"; chat != want {
		t.Errorf("chat:\n got %q\nwant %q", chat, want)
	}
	m := store.Message{Channel: readmodel.ChannelRow{Name: "ops"}, Events: []store.MessageEvent{{Type: string(readmodel.EventTrustDowngrade),
		Key: "trust_downgrade:tree:lib@1.1.0/install_script/postinstall", Payload: p}}}
	mail, err := composeMail(m, "https://upcheck.example.org")
	if err != nil {
		t.Fatal(err)
	}
	if want := `Installed by a lockfile change, lib 1.1.0: 1.1.0 adds a postinstall script: "node setup.js"`; !strings.Contains(mail.Text, want) ||
		strings.Contains(mail.Text, "before you install") {
		t.Errorf("mail:\n%s", mail.Text)
	}
}
