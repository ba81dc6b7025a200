package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/wait"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

type bundle struct {
	t       *testing.T
	db      *pgtest.DB
	store   *store.Store
	notify  *notify.Service
	checker *updatecheck.Checker
	fetcher *fetch.Fetcher
}

func setup(t *testing.T, timings notify.Timings, opts ...notify.Option) *bundle {
	t.Helper()
	d := pgtest.New(t)
	st := store.New(d.Pool)
	f := fetch.New(fetch.Config{AllowPrivate: true, Timeout: 3 * time.Second, RetryDelay: 50 * time.Millisecond}, slog.Default())
	t.Cleanup(f.Close)
	n, err := notify.New(d.Pool, st, f, timings, slog.Default(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	lm, err := lease.New(st, lease.Timings{Lease: 2 * time.Second, Heartbeat: 300 * time.Millisecond, Cooldown: time.Second, Period: 24 * time.Hour, TxTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c := updatecheck.New(st, lm, f, slog.Default())
	c.NotifyWith(n)
	return &bundle{t: t, db: d, store: st, notify: n, checker: c, fetcher: f}
}

// site publishes blog with a security update, gallery with an unfixed
// advisory and forms with a plain update.
func (b *bundle) site() *publisher.Publisher {
	b.t.Helper()
	doc := `{"format": 1, "publisher": "acme", "sequence": 1, "packages": {
		"core": {"releases": [{"version": "1.9.0"}]},
		"blog": {"releases": [{"version": "2.4.0", "security": true, "severity": "high", "summary": "Fixes stored XSS"}]},
		"gallery": {"releases": [{"version": "3.0.0"}], "advisories": [{"id": "ACME-2", "severity": "high", "affected": "<=3.0.0", "summary": "Open redirect"}]},
		"forms": {"releases": [{"version": "1.1.0"}]}}}`
	pub := publisher.New(b.t)
	pub.Set("/", []byte(doc))
	m := &manifest.Manifest{Components: []manifest.Component{
		{Code: "core", Name: "Core", Version: "1.9.0", Source: pub.URL},
		{Code: "blog", Name: "Blog", Version: "2.3.0", Source: pub.URL},
		{Code: "gallery", Name: "Gallery", Version: "3.0.0", Source: pub.URL},
		{Code: "forms", Name: "Forms", Version: "1.0.0", Source: pub.URL},
	}}
	if _, err := updatecheck.NewSyncer(b.checker).Sync(context.Background(), m); err != nil {
		b.t.Fatal(err)
	}
	return pub
}

func (b *bundle) check() updatecheck.Result {
	b.t.Helper()
	res, err := b.checker.RunLockedUpdateCheck(context.Background(), lease.Operator, "test")
	if err != nil || !res.Status.RanToEnd() { // some scenarios have failing sources
		b.t.Fatalf("check: %+v %v", res, err)
	}
	return res
}

func (b *bundle) events() map[string]string {
	b.t.Helper()
	rows, err := b.db.Pool.Query(context.Background(), "SELECT channel_id || ' ' || key, state FROM notification_events")
	if err != nil {
		b.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, s string
		if err := rows.Scan(&k, &s); err != nil {
			b.t.Fatal(err)
		}
		out[k] = s
	}
	if err := rows.Err(); err != nil {
		b.t.Fatal(err)
	}
	return out
}

// Events are queued with the check that finds them, once per channel
// however often the check runs; a security-only channel gets no plain
// update; a channel added later receives what is outstanding, once.
func TestEventsQueuedOncePerChannel(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.DefaultTimings())
	b.site()
	ctx := context.Background()
	created, err := b.notify.AddChannel(ctx, store.NewChannel{Name: "ops", Kind: "webhook", Target: "http://127.0.0.1:1/hook", Events: "security"})
	if err != nil || !strings.HasPrefix(created.Secret, "whsec_") {
		t.Fatalf("add webhook: %+v %v", created, err)
	}
	sec := created.ID
	for range 3 {
		b.check()
	}
	want := map[string]string{
		fmt.Sprint(sec) + " security_update.available:blog@2.4.0":  "pending",
		fmt.Sprint(sec) + " advisory.unfixed:gallery@3.0.0/ACME-2": "pending",
	}
	if got := b.events(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events after three checks:\n got %v\nwant %v", got, want)
	}
	added, err := b.notify.AddChannel(ctx, store.NewChannel{Name: "all", Kind: "slack", Target: "http://127.0.0.1:1/slack", Events: "all"})
	all, queued := added.ID, added.Queued
	// Outstanding: blog's security update (also an update), gallery's
	// unfixed advisory, forms' update.
	if err != nil || queued != 4 {
		t.Fatalf("a channel for all events added while four are outstanding queued %d: %v", queued, err)
	}
	b.check()
	if got := b.events(); len(got) != 6 || got[fmt.Sprint(all)+" update.available:forms@1.1.0"] != "pending" {
		t.Fatalf("events after the second channel: %v", got)
	}
	var jobs int
	b.db.QueryRow(t, "SELECT count(*) FROM river_job WHERE kind = 'upcheck.delivery'").Scan(&jobs)
	if jobs != 6 {
		t.Fatalf("%d delivery jobs for 6 events", jobs)
	}
}

// A dismissed advisory queues nothing; once its dismissal expired, the
// next check queues it.
func TestDismissedAdvisoryQueuesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.DefaultTimings())
	b.site()
	b.check() // a dismissal needs the advisory as a result lists it
	if _, err := catalog.NewDismissals(b.store, nil).Dismiss(context.Background(), store.NewDismissal{Site: store.LocalSite, Code: "gallery", AdvisoryID: "ACME-2", Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.notify.AddChannel(context.Background(), store.NewChannel{Name: "ops", Kind: "slack", Target: "http://127.0.0.1:1/", Events: "security"}); err != nil {
		t.Fatal(err)
	}
	b.check()
	queued := func() bool {
		for k := range b.events() {
			if k[len(k)-6:] == "ACME-2" {
				return true
			}
		}
		return false
	}
	if queued() {
		t.Fatalf("a dismissed advisory was queued: %v", b.events())
	}
	b.db.MustExec(t, `UPDATE advisory_dismissals SET dismissed_at = clock_timestamp() - interval '2 days',
		expires_at = clock_timestamp() - interval '1 second'`)
	b.check()
	if !queued() {
		t.Fatalf("the advisory whose dismissal expired was not queued by the next check: %v", b.events())
	}
}

// receiver verifies signatures and answers from a script.
type receiver struct {
	mu      sync.Mutex
	secret  string
	answers []int // status per request; 200 once used up
	got     []string
	bad     int
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	ts, _ := strconv.ParseInt(req.Header.Get("webhook-timestamp"), 10, 64)
	r.mu.Lock()
	defer r.mu.Unlock()
	id := req.Header.Get("webhook-id")
	if !notify.Verify(r.secret, id, ts, body, req.Header.Get("webhook-signature")) || time.Since(time.Unix(ts, 0)) > time.Minute {
		r.bad++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var e struct{ Type string }
	if json.Unmarshal(body, &e) != nil {
		r.bad++
	}
	r.got = append(r.got, id+" "+e.Type)
	status := http.StatusOK
	if len(r.answers) > 0 {
		status, r.answers = r.answers[0], r.answers[1:]
	}
	w.WriteHeader(status)
}

// A receiver that answers 500 three times then 200 gets the event on the
// fourth attempt, signed every time, with the same webhook-id; the attempts
// and the last error are recorded.
func TestWebhookRetriedUntilDelivered(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: 50 * time.Millisecond})
	rcv := &receiver{answers: []int{500, 500, 500}}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	ctx := context.Background()
	created, err := b.notify.AddChannel(ctx, store.NewChannel{Name: "ops", Kind: "webhook", Target: srv.URL, Events: "security"})
	if err != nil {
		t.Fatal(err)
	}
	rcv.mu.Lock()
	rcv.secret = created.Secret
	rcv.mu.Unlock()
	obs := &countingObserver{}
	b.notify.Observe(obs)
	event, err := b.notify.QueueTest(ctx, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.notify.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := b.notify.Stop(sctx); err != nil {
			t.Error(err)
		}
	})
	var d store.Delivery
	wait.For(t, "the event delivered", wait.Guard, func() (bool, error) {
		var err error
		if d, err = b.store.Delivery(ctx, event); err != nil {
			return false, err
		}
		return d.State == "delivered", wait.Notf("not delivered: %+v", d)
	})
	if d.Attempts != 4 {
		t.Fatalf("delivered after %d attempts, want 4", d.Attempts)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if len(rcv.got) != 4 || rcv.bad != 0 {
		t.Fatalf("receiver saw %v (%d badly signed)", rcv.got, rcv.bad)
	}
	for _, g := range rcv.got {
		if g != event.String()+" test" {
			t.Fatalf("request %q, want the same webhook-id %s every time", g, event)
		}
	}
	if got := obs.String(); got != "webhook/delivered:1 webhook/retry:3" {
		t.Fatalf("sends observed: %s", got)
	}
	var lastError string
	var next bool
	b.db.QueryRow(t, "SELECT coalesce(last_error, ''), next_attempt_at IS NOT NULL FROM notification_events WHERE id = $1", event).Scan(&lastError, &next)
	if lastError != "" || next {
		t.Fatalf("a delivered event keeps the error %q (or a next attempt: %v)", lastError, next)
	}
}

// A source failing for a day notifies once per failure episode; a check
// that has not completed for two days notifies once per last completion.
func TestSourceFailingAndOverdueCheck(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: time.Hour})
	ctx := context.Background()
	dead := publisher.New(t)
	dead.Fail("/", http.StatusServiceUnavailable)
	m := &manifest.Manifest{Components: []manifest.Component{{Code: "core", Name: "Core", Version: "1.9.0", Source: dead.URL}}}
	if _, err := updatecheck.NewSyncer(b.checker).Sync(ctx, m); err != nil {
		t.Fatal(err)
	}
	added, err := b.notify.AddChannel(ctx, store.NewChannel{Name: "ops", Kind: "slack", Target: "http://127.0.0.1:1/", Events: "security"})
	if err != nil {
		t.Fatal(err)
	}
	ch := added.ID
	b.check()
	if got := b.events(); len(got) != 0 {
		t.Fatalf("events after the first failure: %v", got)
	}
	b.db.MustExec(t, "UPDATE sources SET failing_since = clock_timestamp() - interval '25 hours'")
	b.check()
	b.check()
	var failing int
	b.db.QueryRow(t, "SELECT count(*) FROM notification_events WHERE type = 'source.failing' AND channel_id = $1", ch).Scan(&failing)
	if failing != 1 {
		t.Fatalf("%d source.failing events after two checks of a source failing for 25 hours, want 1", failing)
	}

	b.db.MustExec(t, "UPDATE core_update_lock SET last_completed_at = clock_timestamp() - interval '49 hours'")
	if err := b.notify.Start(ctx); err != nil { // the hourly look runs at start
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := b.notify.Stop(sctx); err != nil {
			t.Error(err)
		}
	})
	wait.For(t, "one check.overdue event", wait.Guard, func() (bool, error) {
		var overdue int
		b.db.QueryRow(t, "SELECT count(*) FROM notification_events WHERE type = 'check.overdue'").Scan(&overdue)
		if overdue > 1 {
			return false, fmt.Errorf("%d check.overdue events, want 1", overdue)
		}
		return overdue == 1, nil
	})
}

// Channels that could never be delivered to are refused with a reason.
func TestAddChannelRefusesBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.DefaultTimings())
	for _, c := range []store.NewChannel{
		{Kind: "webhook", Target: "ftp://x.example/", Events: "security"},
		{Kind: "webhook", Target: "https://user:pw@x.example/", Events: "security"},
		{Kind: "webhook", Target: "/relative", Events: "security"},
		{Kind: "pager", Target: "https://x.example/", Events: "security"},
		{Kind: "slack", Target: "https://x.example/", Events: "some"},
	} {
		if _, err := b.notify.AddChannel(context.Background(), c); !errors.Is(err, notify.ErrInvalidChannel) {
			t.Errorf("%+v: %v, want ErrInvalidChannel", c, err)
		}
	}
	chs, err := b.store.Channels(context.Background())
	if err != nil || len(chs) != 0 {
		t.Fatalf("channels after refusals: %v %v", chs, err)
	}
}

// countingObserver counts sends by kind and result, as metrics do.
type countingObserver struct {
	mu     sync.Mutex
	counts map[string]int
}

func (o *countingObserver) Delivered(kind, result string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.counts == nil {
		o.counts = map[string]int{}
	}
	o.counts[kind+"/"+result]++
}

func (o *countingObserver) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	keys := slices.Sorted(maps.Keys(o.counts))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%d", k, o.counts[k])
	}
	return strings.Join(parts, " ")
}

// Events are queued only by a transaction that commits: a fenced write
// whose lease was lost queues nothing, neither events nor jobs; the same
// write under a live lease queues them.
func TestLostLeaseQueuesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.DefaultTimings())
	b.site()
	b.check() // results stored, no channel yet: nothing queued
	ctx := context.Background()
	err := b.store.WithTx(ctx, func(tx *store.Tx) error {
		_, err := tx.ChannelCreate(ctx, store.NewChannel{Name: "ops", Kind: "slack", Target: "http://127.0.0.1:1/", Events: "all"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	lm, err := lease.New(b.store, lease.Timings{Lease: 2 * time.Second, Heartbeat: 300 * time.Millisecond, Cooldown: time.Second, Period: 24 * time.Hour, TxTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	queue := func(owner uuid.UUID, epoch int64) error {
		return lm.WithLease(ctx, owner, func(tx *store.Tx) error {
			_, err := b.notify.Queue(ctx, tx, []string{"blog", "gallery", "forms"}, 0, epoch)
			return err
		})
	}
	count := func() (events, jobs int) {
		b.db.QueryRow(t, "SELECT (SELECT count(*) FROM notification_events), (SELECT count(*) FROM river_job)").Scan(&events, &jobs)
		return events, jobs
	}
	acq, err := lm.Acquire(ctx, lease.Operator)
	if err != nil || acq.Outcome != lease.Acquired {
		t.Fatal(acq, err)
	}
	b.db.MustExec(t, "UPDATE core_update_lock SET expires_at = clock_timestamp() - interval '1 second'")
	if err := queue(acq.Lease.Owner, acq.Lease.Epoch); !errors.Is(err, lease.ErrLeaseLost) {
		t.Fatalf("queue under a lost lease: %v, want ErrLeaseLost", err)
	}
	if events, jobs := count(); events != 0 || jobs != 0 {
		t.Fatalf("a write that lost its lease queued %d events and %d jobs", events, jobs)
	}
	acq, err = lm.Acquire(ctx, lease.Operator)
	if err != nil || acq.Outcome != lease.Acquired {
		t.Fatal(acq, err)
	}
	if err := queue(acq.Lease.Owner, acq.Lease.Epoch); err != nil {
		t.Fatal(err)
	}
	if events, jobs := count(); events != 4 || jobs != 4 {
		t.Fatalf("a write under a live lease queued %d events and %d jobs, want 4 and 4", events, jobs)
	}
}
