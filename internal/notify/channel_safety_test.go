package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/wait"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// hostile is a publisher's summary that, unescaped, pings the whole chat
// channel and shows a disguised link.
const hostile = "<!channel> <https://evil.example/login|Install the fix now>"

// bodies is a receiver that keeps every body it was sent.
type bodies struct {
	mu  sync.Mutex
	got [][]byte
}

func (b *bodies) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.got = append(b.got, body)
}

func (b *bodies) all() [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([][]byte(nil), b.got...)
}

// Publisher text reaches a chat escaped (the advisory's summary is exactly
// the hostile string, the release's is it with invisible characters and
// far too long) (&, <, > as Slack and Mattermost
// want them), on one line without invisible characters, and capped; the
// email's text is one line per item without them either; the webhook's
// JSON carries the text as it was (encoding/json makes it safe) with the
// advisory ids and aliases and the component's AdminCP link.
func TestPublisherTextCannotFormatAChat(t *testing.T) {
	t.Parallel()
	mailSrv, settings := startMailServer(t)
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: 50 * time.Millisecond},
		notify.WithSMTP(settings), notify.WithPublicURL("https://upcheck.example.org/"))
	ctx := context.Background()
	summary, _ := json.Marshal(hostile + "\u202e\x1b[31m & more @channel [the fix](https://evil.example/fix)" + strings.Repeat(" long", 400))
	name, _ := json.Marshal("Blog <@here>\u200b\nsecond line")
	doc := `{"format": 1, "publisher": "acme", "sequence": 1, "packages": {
		"core": {"releases": [{"version": "1.9.0"}]},
		"blog": {"releases": [{"version": "2.4.0", "security": true, "severity": "high", "summary": ` + string(summary) + `}],
		         "advisories": [{"id": "ACME-1", "aliases": ["CVE-2026-0001", "GHSA-2j5x-8q7m-xx9p"], "severity": "high", "affected": "<2.4.0", "fixed_in": "2.4.0", "summary": "XSS"}]},
		"gallery": {"releases": [{"version": "3.0.0"}], "advisories": [{"id": "ACME-2", "aliases": ["CVE-2026-0002"], "severity": "high", "affected": "<=3.0.0", "summary": "` + hostile + `"}]}}}`
	pub := publisher.New(t)
	pub.Set("/", []byte(doc))
	if _, err := updatecheck.NewSyncer(b.checker).Sync(ctx, &manifest.Manifest{Components: []manifest.Component{
		{Code: "core", Name: "Core", Version: "1.9.0", Source: pub.URL},
		{Code: "blog", Name: string(name[1 : len(name)-1]), Version: "2.3.0", Source: pub.URL},
		{Code: "gallery", Name: "Gallery", Version: "3.0.0", Source: pub.URL},
	}}); err != nil {
		// The manifest may refuse such a name; use a plain one then.
		t.Fatal(err)
	}
	room, hooks := &chat{}, &bodies{}
	chatSrv, hookSrv := httptest.NewServer(room), httptest.NewServer(hooks)
	t.Cleanup(chatSrv.Close)
	t.Cleanup(hookSrv.Close)
	for _, c := range []store.NewChannel{
		{Name: "chat", Kind: "slack", Target: chatSrv.URL, Events: "security"},
		{Name: "hook", Kind: "webhook", Target: hookSrv.URL, Events: "security"},
		{Name: "mail", Kind: "email", Target: "ops@example.org", Events: "security"},
	} {
		if _, err := b.notify.AddChannel(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	b.check()
	b.deliver()
	wait.True(t, "two chat posts, two webhooks and a mail", wait.Guard, func() bool {
		return len(room.got()) == 2 && len(hooks.all()) == 2 && len(mailSrv.accepted()) == 1
	})

	for _, text := range room.got() {
		if !strings.Contains(text, "&lt;!channel&gt;") || strings.Contains(text, "<https://evil.example/login|") ||
			strings.ContainsAny(text, "<>\n\x1b\u202e\u200b") {
			t.Errorf("chat post not escaped:\n%q", text)
		}
		spans := strings.Split(text, "`") // even: outside code spans
		for i := 0; i < len(spans); i += 2 {
			if len(spans)%2 == 0 || strings.ContainsAny(spans[i], "@[") {
				t.Errorf("chat post with a mention or a link outside code:\n%q", text)
				break
			}
		}
		if n := len([]rune(text)); n > 1600 {
			t.Errorf("chat post of %d runes: not capped", n)
		}
		if !strings.Contains(text, "https://upcheck.example.org/admin/plugins/") {
			t.Errorf("chat post without the AdminCP link:\n%q", text)
		}
		if strings.Contains(text, "security update") && !strings.Contains(text, "fixes ACME-1 (CVE-2026-0001, GHSA-2j5x-8q7m-xx9p)") {
			t.Errorf("the security update's post does not name the advisory it fixes:\n%q", text)
		}
		if strings.Contains(text, "affected by") && !strings.Contains(text, "no fix yet: `&lt;!channel&gt; &lt;https://evil.example/login|Install the fix now&gt;`") {
			t.Errorf("the advisory's summary is not shown escaped as text:\n%q", text)
		}
		if strings.Contains(text, "affected by") && !strings.Contains(text, "ACME-2 (CVE-2026-0002)") {
			t.Errorf("the advisory's post does not name it with its alias:\n%q", text)
		}
	}

	mail := parseMail(t, mailSrv.accepted()[0].raw)
	for _, line := range strings.Split(mail.Text, "\n") {
		if strings.ContainsAny(line, "\x1b\u202e\u200b") {
			t.Errorf("mail line with an invisible character: %q", line)
		}
	}
	for _, want := range []string{"Fixes: ACME-1 (CVE-2026-0001, GHSA-2j5x-8q7m-xx9p)", "ACME-2 (CVE-2026-0002)",
		"In upcheck: https://upcheck.example.org/admin/plugins/blog", "In upcheck: https://upcheck.example.org/admin/plugins/gallery"} {
		if !strings.Contains(mail.Text, want) {
			t.Errorf("the mail's text does not say %q:\n%s", want, mail.Text)
		}
	}
	if strings.Contains(mail.HTML, "<!channel>") {
		t.Errorf("the mail's HTML carries publisher markup:\n%s", mail.HTML)
	}

	for _, body := range hooks.all() {
		var w struct {
			Type     string `json:"type"`
			AdminURL string `json:"admin_url"`
			Data     struct {
				Summary    string `json:"summary"`
				Advisories []struct {
					ID      string   `json:"id"`
					Aliases []string `json:"aliases"`
				} `json:"advisories"`
				Advisory struct {
					ID      string   `json:"id"`
					Aliases []string `json:"aliases"`
				} `json:"advisory"`
			} `json:"data"`
		}
		if err := json.Unmarshal(body, &w); err != nil {
			t.Fatalf("webhook body %s: %v", body, err)
		}
		switch w.Type {
		case "security_update.available":
			if !strings.HasPrefix(w.Data.Summary, hostile) || len(w.Data.Advisories) != 1 || w.Data.Advisories[0].ID != "ACME-1" ||
				strings.Join(w.Data.Advisories[0].Aliases, ",") != "CVE-2026-0001,GHSA-2j5x-8q7m-xx9p" ||
				w.AdminURL != "https://upcheck.example.org/admin/plugins/blog" {
				t.Errorf("security update body: %s", body)
			}
		case "advisory.unfixed":
			if w.Data.Advisory.ID != "ACME-2" || strings.Join(w.Data.Advisory.Aliases, ",") != "CVE-2026-0002" ||
				w.AdminURL != "https://upcheck.example.org/admin/plugins/gallery" {
				t.Errorf("advisory body: %s", body)
			}
		default:
			t.Errorf("unexpected webhook %s", body)
		}
	}
}

// hookCounter counts the requests per webhook-id.
type hookCounter struct {
	mu  sync.Mutex
	ids map[string]int
}

func (h *hookCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ids[r.Header.Get("webhook-id")]++
}

func (h *hookCounter) counts() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]int, len(h.ids))
	for k, v := range h.ids {
		out[k] = v
	}
	return out
}

// Events pending when their channel is disabled are held, not failed, and
// enabling the channel sends each once, with nothing sent while it is off.
func TestDisabledChannelSendsOutstandingOnEnable(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: 50 * time.Millisecond})
	b.site()
	b.check()
	ctx := context.Background()
	rcv := &hookCounter{ids: map[string]int{}}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	created, err := b.notify.AddChannel(ctx, store.NewChannel{Name: "ops", Kind: "webhook", Target: srv.URL, Events: "all"})
	if err != nil || created.Queued != 4 {
		t.Fatalf("add: %+v %v", created, err)
	}
	if _, err := b.notify.QueueTest(ctx, created.ID); err != nil {
		t.Fatal(err)
	}
	// Disabled while its five events wait for their jobs.
	if _, err := b.notify.SetEnabled(ctx, created.ID, false); err != nil {
		t.Fatal(err)
	}
	b.deliver()
	held := func() int {
		var n int
		b.db.QueryRow(t, "SELECT count(*) FROM notification_events WHERE held_at IS NOT NULL AND state = 'pending'").Scan(&n)
		return n
	}
	wait.True(t, "five events held", wait.Guard, func() bool { return held() == 5 })
	if got := rcv.counts(); len(got) != 0 {
		t.Fatalf("sent to a disabled channel: %v", got)
	}
	var failed int
	b.db.QueryRow(t, "SELECT count(*) FROM notification_events WHERE state = 'failed'").Scan(&failed)
	if failed != 0 {
		t.Fatalf("%d events failed because their channel was off", failed)
	}

	queued, err := b.notify.SetEnabled(ctx, created.ID, true)
	if err != nil || queued != 5 {
		t.Fatalf("enable queued %d (want the 5 outstanding): %v", queued, err)
	}
	wait.True(t, "five events delivered", wait.Guard, func() bool {
		var n int
		b.db.QueryRow(t, "SELECT count(*) FROM notification_events WHERE state = 'delivered'").Scan(&n)
		return n == 5
	})
	// Every job has ended: nothing more can arrive.
	wait.True(t, "no delivery job left", wait.Guard, func() bool {
		var n int
		b.db.QueryRow(t, "SELECT count(*) FROM river_job WHERE kind = 'upcheck.delivery' AND state NOT IN ('completed', 'cancelled', 'discarded')").Scan(&n)
		return n == 0
	})
	got := rcv.counts()
	if len(got) != 5 {
		t.Fatalf("%d distinct events arrived, want 5: %v", len(got), got)
	}
	for id, n := range got {
		if n != 1 {
			t.Errorf("event %s arrived %d times", id, n)
		}
	}
	// Enabling again sends nothing more.
	if queued, err := b.notify.SetEnabled(ctx, created.ID, true); err != nil || queued != 0 {
		t.Fatalf("a second enable queued %d: %v", queued, err)
	}
}

// A webhook whose host is a private address is refused when added on a
// server that does not send to private addresses, in words that name the
// setting that allows it; with the setting it is accepted.
func TestPrivateWebhookRefusedWhenAdded(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	st := store.New(d.Pool)
	guarded := fetch.New(fetch.Config{}, nil)
	t.Cleanup(guarded.Close)
	n, err := notify.New(d.Pool, st, guarded, notify.DefaultTimings(), slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, target := range []string{"http://127.0.0.1:8080/hook", "http://[::1]/hook", "https://10.1.2.3/x", "http://localhost/hook"} {
		for _, kind := range []string{"webhook", "slack"} {
			_, err := n.AddChannel(ctx, store.NewChannel{Kind: kind, Target: target, Events: "security"})
			if !errors.Is(err, notify.ErrInvalidChannel) || !strings.Contains(err.Error(), "UPCHECK_ALLOW_PRIVATE_SOURCES") {
				t.Errorf("%s %s: %v, want a refusal naming UPCHECK_ALLOW_PRIVATE_SOURCES", kind, target, err)
			}
		}
	}
	var channels int
	d.QueryRow(t, "SELECT count(*) FROM notification_channels").Scan(&channels)
	if channels != 0 {
		t.Fatalf("%d refused channels were created", channels)
	}
	b := setup(t, notify.DefaultTimings()) // AllowPrivate
	if _, err := b.notify.AddChannel(ctx, store.NewChannel{Kind: "webhook", Target: "http://127.0.0.1:8080/hook", Events: "security"}); err != nil {
		t.Fatalf("with private addresses allowed: %v", err)
	}
}

// Testing, enabling or deleting a channel that does not exist is
// store.ErrNotFound (a 404), not a foreign-key violation.
func TestUnknownChannelIsNotFound(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.DefaultTimings())
	ctx := context.Background()
	if _, err := b.notify.QueueTest(ctx, 999); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("test: %v", err)
	}
	if _, err := b.notify.SetEnabled(ctx, 999, true); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("enable: %v", err)
	}
	if err := b.notify.DeleteChannel(ctx, 999); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delete: %v", err)
	}
}

// Adding, testing, disabling, enabling and removing a channel each write an
// audit row naming the actor, and the target only as an admin sees it
// afterwards.
func TestChannelChangesAudited(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.DefaultTimings())
	var user int64
	b.db.QueryRow(t, "INSERT INTO users (email, password_hash, role) VALUES ('ada@example.org', 'x', 'admin') RETURNING id").Scan(&user)
	ctx := notify.WithActor(context.Background(), user)
	created, err := b.notify.AddChannel(ctx, store.NewChannel{Name: "ops", Kind: "slack", Target: "https://hooks.example/services/T0/B0/secretpart", Events: "security"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.notify.QueueTest(ctx, created.ID); err != nil {
		t.Fatal(err)
	}
	for _, on := range []bool{false, true} {
		if _, err := b.notify.SetEnabled(ctx, created.ID, on); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.notify.DeleteChannel(ctx, created.ID); err != nil {
		t.Fatal(err)
	}
	rows, err := b.db.Pool.Query(ctx, "SELECT action, coalesce(user_id, 0), detail->>'name', detail->>'target' FROM audit_log ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var action, name, target string
		var by int64
		if err := rows.Scan(&action, &by, &name, &target); err != nil {
			t.Fatal(err)
		}
		if by != user || name != "ops" || strings.Contains(target, "secretpart") {
			t.Errorf("%s: by %d, name %q, target %q", action, by, name, target)
		}
		got = append(got, action)
	}
	if strings.Join(got, " ") != "channel.add channel.test channel.disable channel.enable channel.remove" {
		t.Fatalf("audit actions: %v", got)
	}
}

// Turning a channel off and on again and again while its events are being
// sent loses none and sends none twice: once it stays on, each event has
// arrived exactly once.
func TestToggledChannelSendsEachEventOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: 50 * time.Millisecond})
	ctx := context.Background()
	rcv := &hookCounter{ids: map[string]int{}}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	created, err := b.notify.AddChannel(ctx, store.NewChannel{Name: "ops", Kind: "webhook", Target: srv.URL, Events: "all"})
	if err != nil {
		t.Fatal(err)
	}
	const events = 30
	for range events {
		if _, err := b.notify.QueueTest(ctx, created.ID); err != nil {
			t.Fatal(err)
		}
	}
	b.deliver()
	for i := range 40 {
		if _, err := b.notify.SetEnabled(ctx, created.ID, i%2 == 1); err != nil {
			t.Fatal(err)
		}
	}
	wait.True(t, "every event delivered", wait.Guard, func() bool {
		var n int
		b.db.QueryRow(t, "SELECT count(*) FROM notification_events WHERE state = 'delivered'").Scan(&n)
		return n == events
	})
	wait.True(t, "no delivery job left", wait.Guard, func() bool {
		var n int
		b.db.QueryRow(t, "SELECT count(*) FROM river_job WHERE kind = 'upcheck.delivery' AND state NOT IN ('completed', 'cancelled', 'discarded')").Scan(&n)
		return n == 0
	})
	got := rcv.counts()
	if len(got) != events {
		t.Fatalf("%d distinct events arrived, want %d", len(got), events)
	}
	for id, n := range got {
		if n != 1 {
			t.Errorf("event %s arrived %d times", id, n)
		}
	}
}

// An email channel disabled while its message waits: the message is held,
// not failed, and enabling the channel sends it once.
func TestDisabledEmailChannelSendsHeldMessageOnEnable(t *testing.T) {
	t.Parallel()
	mailSrv, settings := startMailServer(t)
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: 50 * time.Millisecond}, notify.WithSMTP(settings))
	b.site()
	b.check()
	ctx := context.Background()
	created, err := b.notify.AddChannel(ctx, store.NewChannel{Name: "mail", Kind: "email", Target: "ops@example.org", Events: "security"})
	if err != nil || created.Queued == 0 {
		t.Fatalf("add: %+v %v", created, err)
	}
	if _, err := b.notify.SetEnabled(ctx, created.ID, false); err != nil {
		t.Fatal(err)
	}
	b.deliver()
	wait.True(t, "the message held", wait.Guard, func() bool {
		var n int
		b.db.QueryRow(t, "SELECT count(*) FROM notification_messages WHERE held_at IS NOT NULL AND state = 'pending'").Scan(&n)
		return n == 1
	})
	if n := len(mailSrv.accepted()); n != 0 {
		t.Fatalf("%d mails sent to a disabled channel", n)
	}
	if queued, err := b.notify.SetEnabled(ctx, created.ID, true); err != nil || queued != created.Queued {
		t.Fatalf("enable queued %d, want the %d events of the held message: %v", queued, created.Queued, err)
	}
	wait.True(t, "the message and its events delivered", wait.Guard, func() bool {
		var n int
		b.db.QueryRow(t, "SELECT count(*) FROM notification_events WHERE state <> 'delivered' OR held_at IS NOT NULL").Scan(&n)
		return n == 0 && len(mailSrv.accepted()) == 1
	})
	wait.True(t, "no email job left", wait.Guard, func() bool {
		var n int
		b.db.QueryRow(t, "SELECT count(*) FROM river_job WHERE kind = 'upcheck.email' AND state NOT IN ('completed', 'cancelled', 'discarded')").Scan(&n)
		return n == 0
	})
	if n := len(mailSrv.accepted()); n != 1 {
		t.Fatalf("%d mails, want 1", n)
	}
}
