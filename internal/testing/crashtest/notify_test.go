//go:build crash

package crashtest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/publisher"
)

// deliveryLease is the notifications' delivery lease in these scenarios.
const deliveryLease = 3 * time.Second

// receiver is a webhook receiver that verifies every signature, records
// each arrival by webhook-id, and holds the first request until released.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	secret   string
	arrivals map[string][]time.Time
	bad      int
	held     chan struct{} // closed when the first request arrived
	first    string        // its webhook-id
	release  chan struct{}
	holding  bool
	holdAll  bool // hold every request until released, not only the first
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{arrivals: map[string][]time.Time{}, held: make(chan struct{}), release: make(chan struct{})}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	t.Cleanup(func() { r.unhold() })
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	ts, _ := strconv.ParseInt(req.Header.Get("webhook-timestamp"), 10, 64)
	id := req.Header.Get("webhook-id")
	r.mu.Lock()
	if err != nil || !notify.Verify(r.secret, id, ts, body, req.Header.Get("webhook-signature")) {
		r.bad++
		r.mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	r.arrivals[id] = append(r.arrivals[id], time.Now())
	first, holdAll := !r.holding, r.holdAll
	if first {
		r.holding, r.first = true, id
		close(r.held)
	}
	r.mu.Unlock()
	if first || holdAll {
		select { // processed; the answer comes only when released
		case <-r.release:
		case <-req.Context().Done():
			return
		}
		if first && !holdAll {
			return // the first one's answer never reaches the sender
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) unhold() {
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.release:
	default:
		close(r.release)
	}
}

// A process killed while its webhook is in flight: after the delivery lease
// another process sends the event again, with the same webhook-id; the
// receiver processed it at least once and at most twice, and every other
// event once.
func TestKillDuringWebhook(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	pub := publisher.New(t)
	e := baseEnv(d)
	e = e.with("UPCHECK_TEST_TIMINGS", e["UPCHECK_TEST_TIMINGS"]+",delivery="+deliveryLease.String()+",backoff=200ms",
		"UPCHECK_CHECK_SCHEDULE", "0 0 1 1 *")
	if code := start(t, e, "migrate").wait(60 * time.Second); code != 0 {
		t.Fatal("migrate failed")
	}
	e = site(t, e, pub)
	rcv := newReceiver(t)
	add := start(t, e, "notify", "add", "webhook", "--url", rcv.URL, "--events", "all")
	if code := add.wait(30 * time.Second); code != 0 {
		t.Fatalf("notify add: exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(add.out.String()), "\n")
	rcv.mu.Lock()
	rcv.secret = lines[len(lines)-1]
	rcv.mu.Unlock()

	a := serve(t, e) // its catch-up check queues the events; it sends them
	select {
	case <-rcv.held:
	case <-time.After(60 * time.Second):
		t.Fatal("no webhook arrived")
	}
	a.signal(syscall.SIGKILL)
	a.wait(30 * time.Second)
	killed := time.Now()
	rcv.unhold()

	serve(t, e) // takes over the deliveries
	deadline := time.Now().Add(90 * time.Second)
	for query[int64](t, d, "SELECT count(*) FROM notification_events WHERE state <> 'delivered'") != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("events not delivered 90 s after the kill: %d left", query[int64](t, d, "SELECT count(*) FROM notification_events WHERE state <> 'delivered'"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("every event delivered %s after the kill", time.Since(killed).Round(100*time.Millisecond))
	events := query[int64](t, d, "SELECT count(*) FROM notification_events")
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if rcv.bad != 0 || int64(len(rcv.arrivals)) != events {
		t.Fatalf("receiver: %d distinct events (want %d), %d badly signed", len(rcv.arrivals), events, rcv.bad)
	}
	for id, at := range rcv.arrivals {
		switch {
		case len(at) > 2:
			t.Fatalf("event %s arrived %d times", id, len(at))
		case len(at) == 2:
			if gap := at[1].Sub(at[0]); gap < deliveryLease {
				t.Fatalf("event %s sent again %s after the first send, before the %s delivery lease ended", id, gap, deliveryLease)
			}
		}
	}
	if len(rcv.arrivals[rcv.first]) != 2 {
		t.Fatalf("the event in flight at the kill arrived %d times, want twice (once to the killed process)", len(rcv.arrivals[rcv.first]))
	}
}

// PostgreSQL stops while webhooks are in flight (the receiver holds every
// request) and comes back: the same process delivers every event, none is
// lost, and none arrives more than twice (once before the outage, once
// after, for the sends whose outcome could not be recorded).
func TestDatabaseOutageDuringDeliveries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cl, d := ownCluster(t, "notify")
	pub := publisher.New(t)
	e := baseEnv(d)
	e = e.with("UPCHECK_TEST_TIMINGS", e["UPCHECK_TEST_TIMINGS"]+",delivery="+deliveryLease.String()+",backoff=200ms",
		"UPCHECK_CHECK_SCHEDULE", "0 0 1 1 *")
	if code := start(t, e, "migrate").wait(60 * time.Second); code != 0 {
		t.Fatal("migrate failed")
	}
	e = site(t, e, pub)
	rcv := newReceiver(t)
	rcv.mu.Lock()
	rcv.holdAll = true
	rcv.mu.Unlock()
	add := start(t, e, "notify", "add", "webhook", "--url", rcv.URL, "--events", "all")
	if code := add.wait(30 * time.Second); code != 0 {
		t.Fatalf("notify add: exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(add.out.String()), "\n")
	rcv.mu.Lock()
	rcv.secret = lines[len(lines)-1]
	rcv.mu.Unlock()

	a := serve(t, e)
	select {
	case <-rcv.held:
	case <-time.After(60 * time.Second):
		t.Fatal("no webhook arrived")
	}
	if err := cl.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	rcv.unhold() // the sends in flight complete while their outcome cannot be recorded
	time.Sleep(time.Second)
	if err := cl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		var left int64
		err := d.Pool.QueryRow(ctx, "SELECT count(*) FROM notification_events WHERE state <> 'delivered'").Scan(&left)
		if err == nil && left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("events not delivered 90 s after the database came back: %d left (%v)", left, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	events := query[int64](t, d, "SELECT count(*) FROM notification_events")
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if rcv.bad != 0 || int64(len(rcv.arrivals)) != events {
		t.Fatalf("receiver: %d distinct events (want %d), %d badly signed", len(rcv.arrivals), events, rcv.bad)
	}
	for id, at := range rcv.arrivals {
		if len(at) > 2 {
			t.Fatalf("event %s arrived %d times", id, len(at))
		}
	}
	select { // the same process delivered: it never exited
	case <-a.done:
		t.Fatal("serve exited during the outage")
	default:
	}
}
