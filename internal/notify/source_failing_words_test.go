package notify_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/wait"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// chat is a Slack-style receiver: it keeps the text of every post.
type chat struct {
	mu    sync.Mutex
	texts []string
}

func (c *chat) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct{ Text string }
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.texts = append(c.texts, body.Text)
}

func (c *chat) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.texts...)
}

// A source failing for a day is worded in Slack and email with the
// sentence for its stored kind ("answered 503 Service Unavailable", "Could
// not connect"), never with Go's error text; the webhook payload keeps the
// technical text and adds the kind and its argument.
func TestSourceFailingInWords(t *testing.T) {
	t.Parallel()
	srv, settings := startMailServer(t)
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: 50 * time.Millisecond}, notify.WithSMTP(settings))
	ctx := context.Background()
	down := publisher.New(t)
	down.Fail("/", http.StatusServiceUnavailable)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/u.json"
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := updatecheck.NewSyncer(b.checker).Sync(ctx, &manifest.Manifest{Components: []manifest.Component{
		{Code: "core", Name: "Core", Version: "1.9.0", Source: down.URL},
		{Code: "blog", Name: "Blog", Version: "2.3.0", Source: refused},
	}}); err != nil {
		t.Fatal(err)
	}
	room := &chat{}
	slack := httptest.NewServer(room)
	t.Cleanup(slack.Close)
	for _, c := range []store.NewChannel{
		{Name: "chat", Kind: "slack", Target: slack.URL, Events: "security"},
		{Name: "mail", Kind: "email", Target: "ops@example.org", Events: "security"},
	} {
		if _, err := b.notify.AddChannel(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	b.check()
	b.db.MustExec(t, "UPDATE sources SET failing_since = clock_timestamp() - interval '25 hours'")
	b.check()

	// The payload: the technical text for machines, the kind beside it.
	var payload string
	b.db.QueryRow(t, `SELECT payload::text FROM notification_events WHERE type = 'source.failing' AND payload->>'source' = $1 LIMIT 1`,
		down.URL).Scan(&payload)
	var p map[string]any
	if err := json.Unmarshal([]byte(payload), &p); err != nil {
		t.Fatal(err)
	}
	args, _ := p["last_error_args"].(map[string]any)
	if p["last_error_kind"] != "http_status" || args["status"] != float64(503) || !strings.Contains(p["last_error"].(string), "503") {
		t.Fatalf("source.failing payload %s: want last_error, last_error_kind http_status and last_error_args' status 503", payload)
	}

	b.deliver()
	wait.True(t, "two chat posts and a mail", wait.Guard, func() bool { return len(room.got()) == 2 && len(srv.accepted()) == 1 })
	mail := parseMail(t, srv.accepted()[0].raw)
	status := "The publisher’s server answered 503 Service Unavailable."
	connect := "Could not connect to the publisher’s server"
	texts := map[string]string{"mail text": mail.Text, "mail HTML": mail.HTML, "subject": mail.Subject}
	for _, text := range room.got() {
		texts["chat "+text] = text
		want := status
		if strings.Contains(text, refused) {
			want = connect
		}
		if !strings.Contains(text, want) {
			t.Errorf("chat post %q does not say %q", text, want)
		}
	}
	for _, want := range []string{status, connect} {
		if !strings.Contains(mail.Text, want) || !strings.Contains(mail.HTML, want) {
			t.Errorf("the mail does not say %q:\n%s\n%s", want, mail.Text, mail.HTML)
		}
	}
	for where, text := range texts {
		for _, goish := range []string{"dial tcp", "unexpected http status", "connection refused", "fetch http"} {
			if strings.Contains(text, goish) {
				t.Errorf("%s carries %q:\n%s", where, goish, text)
			}
		}
	}
}
