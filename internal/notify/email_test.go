package notify_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	smtp "github.com/emersion/go-smtp"
	"github.com/google/uuid"

	"github.com/upcheck/upcheck/internal/config"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/wait"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// mailServer is a real SMTP server (go-smtp) on loopback, without TLS:
// plain SMTP is allowed to this machine. The n-th DATA runs script[n-1]
// when there is one: an error refuses the message, nil accepts it.
type mailServer struct {
	mu       sync.Mutex
	script   []func(*smtp.Conn) error
	attempts []mailAttempt // every DATA, accepted or not
}

// mailAttempt is one DATA the server received.
type mailAttempt struct {
	rcpts    []string
	raw      []byte
	accepted bool
}

func (m *mailServer) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &mailSession{srv: m, conn: c}, nil
}

// accepted returns the messages the server accepted.
func (m *mailServer) accepted() []mailAttempt {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []mailAttempt
	for _, a := range m.attempts {
		if a.accepted {
			out = append(out, a)
		}
	}
	return out
}

type mailSession struct {
	srv   *mailServer
	conn  *smtp.Conn
	rcpts []string
}

func (s *mailSession) Reset()                               { s.rcpts = nil }
func (s *mailSession) Logout() error                        { return nil }
func (s *mailSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s *mailSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.rcpts = append(s.rcpts, to)
	return nil
}

func (s *mailSession) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.srv.mu.Lock()
	n := len(s.srv.attempts)
	s.srv.attempts = append(s.srv.attempts, mailAttempt{rcpts: s.rcpts, raw: raw})
	var step func(*smtp.Conn) error
	if n < len(s.srv.script) {
		step = s.srv.script[n]
	}
	s.srv.mu.Unlock()
	if step != nil {
		if err := step(s.conn); err != nil {
			return err
		}
	}
	s.srv.mu.Lock()
	s.srv.attempts[n].accepted = true
	s.srv.mu.Unlock()
	return nil
}

// startMailServer serves on a loopback port until the test ends and
// returns the settings that send to it.
func startMailServer(t *testing.T, script ...func(*smtp.Conn) error) (*mailServer, config.SMTP) {
	t.Helper()
	m := &mailServer{script: script}
	srv := smtp.NewServer(m)
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.ErrorLog = log.New(io.Discard, "", 0)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
		if err := <-done; err != nil && !errors.Is(err, smtp.ErrServerClosed) {
			t.Error(err)
		}
	})
	return m, config.SMTP{Security: "none", Host: "127.0.0.1", Port: l.Addr().(*net.TCPAddr).Port, From: "upcheck <upcheck@example.org>"}
}

// received is a mail as its reader sees it.
type received struct {
	MessageID, Subject, To, Text, HTML string
}

// parseMail reads a multipart/alternative mail: both parts are required.
func parseMail(t *testing.T, raw []byte) received {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	out := received{MessageID: msg.Header.Get("Message-ID"), Subject: subject, To: msg.Header.Get("To")}
	media, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || media != "multipart/alternative" {
		t.Fatalf("Content-Type %q (%v), want multipart/alternative", msg.Header.Get("Content-Type"), err)
	}
	parts := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := parts.NextPart() // decodes quoted-printable
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		switch ct := p.Header.Get("Content-Type"); {
		case strings.HasPrefix(ct, "text/plain"):
			out.Text = string(body)
		case strings.HasPrefix(ct, "text/html"):
			out.HTML = string(body)
		default:
			t.Fatalf("unexpected part %q", ct)
		}
	}
	if out.Text == "" || out.HTML == "" {
		t.Fatalf("a part is missing: %+v", out)
	}
	return out
}

// deliver starts River until the test ends.
func (b *bundle) deliver() {
	b.t.Helper()
	if err := b.notify.Start(context.Background()); err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := b.notify.Stop(ctx); err != nil {
			b.t.Error(err)
		}
	})
}

// message is one notification_messages row.
type message struct {
	state, lastError string
	attempts         int
}

func (b *bundle) message(id uuid.UUID) message {
	b.t.Helper()
	var m message
	b.db.QueryRow(b.t, "SELECT state, attempts, coalesce(last_error, '') FROM notification_messages WHERE id = $1", id).
		Scan(&m.state, &m.attempts, &m.lastError)
	return m
}

var messageIDForm = regexp.MustCompile(`^<[0-9a-f]{64}@upcheck>$`)

// One check run sends one message per email channel, covering what that
// run found for the channel, worst first: the subject names the worst item
// and how many more there are, both parts carry every item (publisher text
// escaped in the HTML), and the Message-ID is derived from the message's
// key. Webhook events keep their own jobs; checking again sends nothing; a
// later run that finds something new sends a message with only that.
func TestEmailOneMessagePerRunAndChannel(t *testing.T) {
	t.Parallel()
	srv, settings := startMailServer(t)
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: 50 * time.Millisecond}, notify.WithSMTP(settings))
	ctx := context.Background()
	var channels [3]int64
	for i, c := range []store.NewChannel{
		{Name: "sec", Kind: "email", Target: "ops@example.org", Events: "security"},
		{Name: "all", Kind: "email", Target: "dev@example.org, Jo Doe <jo@example.org>", Events: "all"},
		{Name: "hook", Kind: "webhook", Target: "http://127.0.0.1:1/hook", Events: "security"},
	} {
		created, err := b.notify.AddChannel(ctx, c)
		if err != nil || created.Queued != 0 {
			t.Fatalf("add %s: %+v %v", c.Name, created, err)
		}
		channels[i] = created.ID
	}
	site := publisher.New(t)
	site.Set("/", []byte(`{"format": 1, "publisher": "acme", "sequence": 1, "packages": {
		"core": {"releases": [{"version": "1.9.0"}]},
		"blog": {"releases": [{"version": "2.4.0", "security": true, "severity": "high", "summary": "Fixes <b>stored</b> XSS & more"}]},
		"shop": {"releases": [{"version": "4.0.1", "security": true, "severity": "critical", "summary": "Remote code execution"}]},
		"gallery": {"releases": [{"version": "3.0.0"}], "advisories": [{"id": "ACME-2", "severity": "high", "affected": "<=3.0.0", "summary": "Open redirect"}]},
		"forms": {"releases": [{"version": "1.1.0"}]}}}`))
	if _, err := updatecheck.NewSyncer(b.checker).Sync(ctx, &manifest.Manifest{Components: []manifest.Component{
		{Code: "core", Name: "Core", Version: "1.9.0", Source: site.URL},
		{Code: "blog", Name: "Blog", Version: "2.3.0", Source: site.URL},
		{Code: "shop", Name: "Shop", Version: "4.0.0", Source: site.URL},
		{Code: "gallery", Name: "Gallery", Version: "3.0.0", Source: site.URL},
		{Code: "forms", Name: "Forms", Version: "1.0.0", Source: site.URL},
	}}); err != nil {
		t.Fatal(err)
	}
	b.check()
	b.check() // finds nothing new: no second message

	// One message per email channel, holding every email event of the
	// channel; webhook events have a delivery job each, email events none.
	var perMessage string
	b.db.QueryRow(t, `SELECT string_agg(m.channel_id || ':' || (SELECT count(*) FROM notification_events e WHERE e.message_id = m.id), ' ' ORDER BY m.channel_id)
		FROM notification_messages m`).Scan(&perMessage)
	if want := "1:3 2:6"; perMessage != want {
		t.Fatalf("messages (channel:events) %q, want %q", perMessage, want)
	}
	var loose, emailJobs, deliveryJobs, hookEvents int
	b.db.QueryRow(t, `SELECT (SELECT count(*) FROM notification_events e JOIN notification_channels c ON c.id = e.channel_id
			WHERE c.kind = 'email' AND e.message_id IS NULL),
		(SELECT count(*) FROM river_job WHERE kind = 'upcheck.email'),
		(SELECT count(*) FROM river_job WHERE kind = 'upcheck.delivery'),
		(SELECT count(*) FROM notification_events WHERE channel_id = $1)`, channels[2]).Scan(&loose, &emailJobs, &deliveryJobs, &hookEvents)
	if loose != 0 || emailJobs != 2 || deliveryJobs != hookEvents || hookEvents != 3 {
		t.Fatalf("%d email events outside a message, %d email jobs (want 2), %d delivery jobs for %d webhook events (want 3)",
			loose, emailJobs, deliveryJobs, hookEvents)
	}

	b.deliver()
	wait.True(t, "two messages delivered", wait.Guard, func() bool {
		var delivered int
		b.db.QueryRow(t, "SELECT count(*) FROM notification_messages WHERE state = 'delivered'").Scan(&delivered)
		return delivered == 2
	})
	mails := map[string]received{}
	for _, a := range srv.accepted() {
		m := parseMail(t, a.raw)
		mails[strings.Join(a.rcpts, ",")] = m
	}
	sec, all := mails["ops@example.org"], mails["dev@example.org,jo@example.org"]
	if len(mails) != 2 || sec.Subject == "" || all.Subject == "" {
		t.Fatalf("mails by recipients: %v", mails)
	}
	if want := "[upcheck] Unfixed advisory for Gallery 3.0.0: ACME-2 (high) and 2 more"; sec.Subject != want {
		t.Errorf("subject %q, want %q", sec.Subject, want)
	}
	if want := "[upcheck] Unfixed advisory for Gallery 3.0.0: ACME-2 (high) and 5 more"; all.Subject != want {
		t.Errorf("subject %q, want %q", all.Subject, want)
	}
	if !messageIDForm.MatchString(sec.MessageID) || !messageIDForm.MatchString(all.MessageID) || sec.MessageID == all.MessageID {
		t.Errorf("Message-IDs %q and %q: want two different <sha256-hex@upcheck>", sec.MessageID, all.MessageID)
	}
	if !strings.Contains(all.To, "jo@example.org") || !strings.Contains(all.To, "dev@example.org") {
		t.Errorf("To: %q", all.To)
	}
	// Worst first, in both parts.
	inOrder := func(body string, items ...string) bool {
		last := -1
		for _, it := range items {
			i := strings.Index(body, it)
			if i <= last {
				return false
			}
			last = i
		}
		return true
	}
	// Worst first as the summary orders it: the advisory with no fix,
	// then the security updates by severity (readmodel.AttentionKinds).
	secItems := []string{"Gallery 3.0.0 is affected by ACME-2 (high), with no fix yet",
		"Security update for Shop: 4.0.0 → 4.0.1 (critical)", "Security update for Blog: 2.3.0 → 2.4.0 (high)"}
	if !inOrder(sec.Text, secItems...) || !strings.Contains(sec.Text, "Fixes <b>stored</b> XSS & more") ||
		!strings.Contains(sec.Text, "Open redirect") || strings.Contains(sec.Text, "Update for") {
		t.Errorf("plain text part:\n%s", sec.Text)
	}
	if !inOrder(sec.HTML, secItems...) || !strings.Contains(sec.HTML, "Fixes &lt;b&gt;stored&lt;/b&gt; XSS &amp; more") || strings.Contains(sec.HTML, "<b>stored") {
		t.Errorf("HTML part (publisher text must be escaped):\n%s", sec.HTML)
	}
	if !inOrder(all.Text, append(secItems, "Update for Blog: 2.3.0 → 2.4.0", "Update for Forms: 1.0.0 → 1.1.0", "Update for Shop: 4.0.0 → 4.0.1")...) {
		t.Errorf("plain text part for all events:\n%s", all.Text)
	}
	var pending int
	b.db.QueryRow(t, "SELECT count(*) FROM notification_events WHERE message_id IS NOT NULL AND state <> 'delivered'").Scan(&pending)
	if pending != 0 {
		t.Fatalf("%d email events not delivered with their message", pending)
	}

	// The next run finds one new security release: one message per
	// channel with only what is new.
	site.Set("/", []byte(`{"format": 1, "publisher": "acme", "sequence": 2, "packages": {
		"core": {"releases": [{"version": "1.9.0"}]},
		"blog": {"releases": [{"version": "2.4.0", "security": true, "severity": "high", "summary": "Fixes <b>stored</b> XSS & more"}]},
		"shop": {"releases": [{"version": "4.0.1", "security": true, "severity": "critical", "summary": "Remote code execution"}]},
		"gallery": {"releases": [{"version": "3.0.0"}], "advisories": [{"id": "ACME-2", "severity": "high", "affected": "<=3.0.0", "summary": "Open redirect"}]},
		"forms": {"releases": [{"version": "1.1.0"}, {"version": "1.2.0", "security": true, "severity": "low"}]}}}`))
	b.check()
	wait.True(t, "four messages delivered", wait.Guard, func() bool { return len(srv.accepted()) == 4 })
	subjects := map[string]string{}
	for _, a := range srv.accepted()[2:] {
		subjects[strings.Join(a.rcpts, ",")] = parseMail(t, a.raw).Subject
	}
	if want := "[upcheck] Security update for Forms: 1.2.0 (low)"; subjects["ops@example.org"] != want {
		t.Errorf("second run's subject %q, want %q", subjects["ops@example.org"], want)
	}
	if want := "[upcheck] Security update for Forms: 1.2.0 (low) and 1 more"; subjects["dev@example.org,jo@example.org"] != want {
		t.Errorf("second run's subject %q, want %q", subjects["dev@example.org,jo@example.org"], want)
	}
}

// testMessage adds an email channel and queues a test to it: gathered at
// once into a message of its own.
func (b *bundle) testMessage() uuid.UUID {
	b.t.Helper()
	ctx := context.Background()
	created, err := b.notify.AddChannel(ctx, store.NewChannel{Kind: "email", Target: "ops@example.org", Events: "security"})
	if err != nil {
		b.t.Fatal(err)
	}
	event, err := b.notify.QueueTest(ctx, created.ID)
	if err != nil {
		b.t.Fatal(err)
	}
	var id uuid.UUID
	b.db.QueryRow(b.t, "SELECT message_id FROM notification_events WHERE id = $1", event).Scan(&id)
	return id
}

// A server that refuses the first DATA (451) gets the message again on the
// next attempt, with the same Message-ID; the refusal is recorded in plain
// words and the delivery on the message and its event.
func TestEmailRetriedAfterRefusal(t *testing.T) {
	t.Parallel()
	srv, settings := startMailServer(t, func(*smtp.Conn) error {
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Try again later"}
	})
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: 50 * time.Millisecond}, notify.WithSMTP(settings))
	id := b.testMessage()
	b.deliver()
	wait.True(t, "the message delivered", wait.Guard, func() bool { return b.message(id).state == "delivered" })
	if m := b.message(id); m.attempts != 2 || m.lastError != "" {
		t.Fatalf("message %+v, want delivered on the second attempt with no error left", m)
	}
	var eventState string
	var eventAttempts int
	b.db.QueryRow(t, "SELECT state, attempts FROM notification_events WHERE message_id = $1", id).Scan(&eventState, &eventAttempts)
	if eventState != "delivered" || eventAttempts != 2 {
		t.Fatalf("event %s after %d attempts, want delivered after 2", eventState, eventAttempts)
	}
	srv.mu.Lock()
	attempts := srv.attempts
	srv.mu.Unlock()
	if len(attempts) != 2 || attempts[0].accepted || !attempts[1].accepted {
		t.Fatalf("%d DATA commands, want a refused one and an accepted one", len(attempts))
	}
	first, second := parseMail(t, attempts[0].raw), parseMail(t, attempts[1].raw)
	if !messageIDForm.MatchString(first.MessageID) || first.MessageID != second.MessageID {
		t.Fatalf("Message-IDs %q then %q: want the same on every attempt", first.MessageID, second.MessageID)
	}
	if second.Subject != "[upcheck] Test notification" {
		t.Fatalf("subject %q", second.Subject)
	}
	var recorded string
	b.db.QueryRow(t, "SELECT errors[1]->>'error' FROM river_job WHERE kind = 'upcheck.email'").Scan(&recorded)
	if want := "not sent: the mail server refused the message for now: 451 4.3.0 Try again later"; recorded != want {
		t.Fatalf("first attempt's error %q, want %q", recorded, want)
	}

	// A retry by hand of a failed message (failed here as after its last
	// attempt) sends it again, whole, with the same Message-ID.
	b.db.MustExec(t, "UPDATE notification_messages SET state = 'failed' WHERE id = $1", id)
	b.db.MustExec(t, "UPDATE notification_events SET state = 'failed' WHERE message_id = $1", id)
	var event uuid.UUID
	b.db.QueryRow(t, "SELECT id FROM notification_events WHERE message_id = $1", id).Scan(&event)
	if err := b.notify.Retry(context.Background(), event); err != nil {
		t.Fatal(err)
	}
	wait.True(t, "the message delivered again", wait.Guard, func() bool { return len(srv.accepted()) == 2 })
	if again := parseMail(t, srv.accepted()[1].raw); again.MessageID != first.MessageID {
		t.Fatalf("Message-ID %q after a retry by hand, want %q", again.MessageID, first.MessageID)
	}
	wait.True(t, "the retry recorded", wait.Guard, func() bool { return b.message(id).state == "delivered" })

	// Removing the channel removes its messages and events.
	var channel int64
	b.db.QueryRow(t, "SELECT channel_id FROM notification_messages WHERE id = $1", id).Scan(&channel)
	if err := b.store.ChannelDelete(context.Background(), channel); err != nil {
		t.Fatal(err)
	}
	var left int
	b.db.QueryRow(t, "SELECT (SELECT count(*) FROM notification_messages) + (SELECT count(*) FROM notification_events)").Scan(&left)
	if left != 0 {
		t.Fatalf("%d rows left after removing the channel", left)
	}
}

// A server that drops the connection in the middle of DATA is tried again:
// the message stays pending with the error in plain words until the next
// attempt delivers it.
func TestEmailRetriedAfterDroppedConnection(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv, settings := startMailServer(t,
		func(c *smtp.Conn) error {
			if err := c.Conn().Close(); err != nil {
				return err
			}
			return errors.New("dropped")
		},
		func(*smtp.Conn) error { <-release; return nil })
	// A longer delivery lease: the second attempt waits on release within
	// one SMTP step (a third of the job's timeout).
	b := setup(t, notify.Timings{Delivery: 30 * time.Second, Backoff: 50 * time.Millisecond}, notify.WithSMTP(settings))
	id := b.testMessage()
	b.deliver()
	wait.True(t, "the first attempt recorded", wait.Guard, func() bool { return b.message(id).attempts == 1 })
	const want = "not sent: the mail server closed the connection before it accepted the message"
	var eventError string
	b.db.QueryRow(t, "SELECT coalesce(last_error, '') FROM notification_events WHERE message_id = $1", id).Scan(&eventError)
	if m := b.message(id); m.state != "pending" || m.lastError != want || eventError != want {
		t.Fatalf("after a dropped connection: message %+v, event error %q; want pending with %q", m, eventError, want)
	}
	close(release)
	wait.True(t, "the message delivered", wait.Guard, func() bool { return b.message(id).state == "delivered" })
	if m := b.message(id); m.attempts != 2 || len(srv.accepted()) != 1 {
		t.Fatalf("message %+v, %d accepted: want delivered once, on the second attempt", m, len(srv.accepted()))
	}
}

// Email channels are refused without a mail server or with an address that
// does not parse; plain SMTP off this machine is refused when the Service
// is made.
func TestEmailChannelRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, notify.DefaultTimings())
	_, err := b.notify.AddChannel(ctx, store.NewChannel{Kind: "email", Target: "ops@example.org", Events: "security"})
	if !errors.Is(err, notify.ErrNoSMTP) || !strings.Contains(err.Error(), "UPCHECK_SMTP_URL") {
		t.Fatalf("an email channel without a mail server: %v, want ErrNoSMTP naming UPCHECK_SMTP_URL", err)
	}
	_, settings := startMailServer(t)
	b = setup(t, notify.DefaultTimings(), notify.WithSMTP(settings))
	for _, to := range []string{"", "not an address", "ops@example.org; dev@example.org", "ops@"} {
		if _, err := b.notify.AddChannel(ctx, store.NewChannel{Kind: "email", Target: to, Events: "security"}); !errors.Is(err, notify.ErrInvalidChannel) {
			t.Errorf("--to %q: %v, want ErrInvalidChannel", to, err)
		}
	}
	if _, err := b.notify.AddChannel(ctx, store.NewChannel{Kind: "email", Target: "ops@example.org", Events: "some"}); !errors.Is(err, notify.ErrInvalidChannel) {
		t.Errorf("--events some: %v, want ErrInvalidChannel", err)
	}
	// The events choice is one rule for every kind.
	if _, err := b.notify.AddChannel(ctx, store.NewChannel{Kind: "webhook", Target: "https://hooks.example/x", Events: "some"}); !errors.Is(err, notify.ErrInvalidChannel) || !strings.Contains(err.Error(), "events must be security or all") {
		t.Errorf("a webhook with --events some: %v, want ErrInvalidChannel about its events", err)
	}
	created, err := b.notify.AddChannel(ctx, store.NewChannel{Kind: "email", Target: " ops@example.org,Jo <jo@example.org>", Events: "all"})
	if err != nil {
		t.Fatal(err)
	}
	var stored string
	b.db.QueryRow(t, "SELECT name || ' | ' || target FROM notification_channels WHERE id = $1", created.ID).Scan(&stored)
	if want := `ops@example.org | ops@example.org, "Jo" <jo@example.org>`; stored != want {
		t.Fatalf("stored %q, want %q", stored, want)
	}
	plain := config.SMTP{Security: "none", Host: "mail.example.org", Port: 25, From: "upcheck@example.org"}
	if _, err := notify.New(b.db.Pool, b.store, nil, notify.DefaultTimings(), nil, notify.WithSMTP(plain)); err == nil || !strings.Contains(err.Error(), "only to this machine") {
		t.Fatalf("plain SMTP to another host: %v, want a refusal", err)
	}
}

// Email events a manifest sync queues wait for a gathering: the next
// check's end takes them, and so does the hourly job (run at start) when no
// check comes.
func TestEmailSyncEventsGathered(t *testing.T) {
	t.Parallel()
	srv, settings := startMailServer(t)
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: 50 * time.Millisecond}, notify.WithSMTP(settings))
	ctx := context.Background()
	if _, err := b.notify.AddChannel(ctx, store.NewChannel{Kind: "email", Target: "ops@example.org", Events: "security"}); err != nil {
		t.Fatal(err)
	}
	site := publisher.New(t)
	site.Set("/", []byte(`{"format": 1, "publisher": "acme", "sequence": 1, "packages": {
		"core": {"releases": [{"version": "1.9.0"}]},
		"shop": {"releases": [{"version": "4.0.1", "security": true, "severity": "critical"}]},
		"news": {"releases": [{"version": "1.0.1", "security": true, "severity": "medium"}]}}}`))
	var components []manifest.Component
	sync := func(add manifest.Component) {
		components = append(components, add)
		if _, err := updatecheck.NewSyncer(b.checker).Sync(ctx, &manifest.Manifest{Components: components}); err != nil {
			t.Fatal(err)
		}
	}
	sync(manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: site.URL})
	loose := func() (events, messages int) {
		b.db.QueryRow(t, `SELECT (SELECT count(*) FROM notification_events WHERE message_id IS NULL),
			(SELECT count(*) FROM notification_messages)`).Scan(&events, &messages)
		return events, messages
	}
	b.check() // the source's document is stored: syncs evaluate from it
	sync(manifest.Component{Code: "shop", Name: "Shop", Version: "4.0.0", Source: site.URL})
	if events, messages := loose(); events != 1 || messages != 0 {
		t.Fatalf("after a sync: %d loose events and %d messages, want 1 and 0", events, messages)
	}
	b.check()
	if events, messages := loose(); events != 0 || messages != 1 {
		t.Fatalf("after the next check: %d loose events and %d messages, want 0 and 1", events, messages)
	}
	sync(manifest.Component{Code: "news", Name: "News", Version: "1.0.0", Source: site.URL})
	b.deliver()
	wait.True(t, "two messages delivered", wait.Guard, func() bool { return len(srv.accepted()) == 2 })
	var subjects []string
	for _, a := range srv.accepted() {
		subjects = append(subjects, parseMail(t, a.raw).Subject)
	}
	if got, want := strings.Join(subjects, " | "), "[upcheck] Security update for Shop: 4.0.1 (critical) | [upcheck] Security update for News: 1.0.1 (medium)"; got != want {
		t.Fatalf("subjects %q, want %q", got, want)
	}
}
