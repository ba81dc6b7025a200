package notify_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// Two instances deliver 50 events to one receiver: each arrives once, and
// no event is ever being sent by both at the same moment.
func TestTwoInstancesDeliverEachEventOnce(t *testing.T) {
	t.Parallel()
	timings := notify.Timings{Delivery: 4 * time.Second, Backoff: 100 * time.Millisecond}
	b := setup(t, timings)
	var mu sync.Mutex
	inFlight, arrivals := map[string]int{}, map[string]int{}
	overlaps, sends := 0, 0
	arrived := make(chan struct{}) // closed and replaced at every send's arrival
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return
		}
		id := r.Header.Get("webhook-id")
		mu.Lock()
		inFlight[id]++
		arrivals[id]++
		if inFlight[id] > 1 {
			overlaps++
		}
		sends++
		nth := sends
		close(arrived)
		arrived = make(chan struct{})
		mu.Unlock()
		// Each send is held until two later sends have arrived beside it
		// (or every event has arrived once): long enough for a second
		// sender of the same event to overlap, and for both instances to
		// take a share.
		for {
			mu.Lock()
			held, next := sends < nth+2 && len(arrivals) < 50, arrived
			mu.Unlock()
			if !held {
				break
			}
			select {
			case <-next:
			case <-r.Context().Done():
				return
			}
		}
		mu.Lock()
		inFlight[id]--
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	ctx := context.Background()
	created, err := b.notify.AddChannel(ctx, store.NewChannel{Name: "ops", Kind: "webhook", Target: rcv.URL, Events: "security"})
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		if _, err := b.notify.QueueTest(ctx, created.ID); err != nil {
			t.Fatal(err)
		}
	}
	f := fetch.New(fetch.Config{AllowPrivate: true}, slog.Default())
	t.Cleanup(f.Close)
	other, err := notify.New(b.db.Pool, b.store, f, timings, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	// Each instance counts its own sends: both must have taken a share, or
	// the test would say nothing about two instances.
	mine, theirs := &countingObserver{}, &countingObserver{}
	b.notify.Observe(mine)
	other.Observe(theirs)
	for _, s := range []*notify.Service{b.notify, other} {
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := s.Stop(sctx); err != nil {
				t.Error(err)
			}
		})
	}
	wait.For(t, "every event delivered by two instances", wait.Guard, func() (bool, error) {
		var pending int
		b.db.QueryRow(t, "SELECT count(*) FROM notification_events WHERE state <> 'delivered'").Scan(&pending)
		return pending == 0, wait.Notf("%d events not delivered", pending)
	})
	if mine.String() == "" || theirs.String() == "" {
		t.Fatalf("one instance delivered everything (%q, %q): nothing was shared", mine, theirs)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(arrivals) != 50 || overlaps != 0 {
		t.Fatalf("%d distinct events arrived (want 50), %d concurrent sends of one event", len(arrivals), overlaps)
	}
	for id, n := range arrivals {
		if n != 1 {
			t.Fatalf("event %s arrived %d times with no crash", id, n)
		}
	}
}

// A receiver that always fails: the event is sent 8 times, then marked
// failed and kept; a retry by hand sends it again with the same id, and it
// is delivered once the receiver answers.
func TestFailedAfterEightAttemptsThenRetriedByHand(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: time.Millisecond})
	var mu sync.Mutex
	status, arrivals := http.StatusInternalServerError, 0
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return
		}
		mu.Lock()
		arrivals++
		s := status
		mu.Unlock()
		w.WriteHeader(s)
	}))
	t.Cleanup(rcv.Close)
	ctx := context.Background()
	created, err := b.notify.AddChannel(ctx, store.NewChannel{Name: "ops", Kind: "webhook", Target: rcv.URL, Events: "security"})
	if err != nil {
		t.Fatal(err)
	}
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
	waitState := func(want string) store.Delivery {
		t.Helper()
		var d store.Delivery
		wait.For(t, "the event "+want, wait.Guard, func() (bool, error) {
			var err error
			if d, err = b.store.Delivery(ctx, event); err != nil {
				return false, err
			}
			return d.State == want, wait.Notf("event %+v", d)
		})
		return d
	}
	if d := waitState("failed"); d.Attempts != notify.MaxAttempts {
		t.Fatalf("failed after %d attempts, want %d", d.Attempts, notify.MaxAttempts)
	}
	mu.Lock()
	if arrivals != notify.MaxAttempts {
		t.Fatalf("the receiver saw %d sends, want %d", arrivals, notify.MaxAttempts)
	}
	status = http.StatusNoContent
	mu.Unlock()
	if err := b.notify.Retry(ctx, event); err != nil {
		t.Fatal(err)
	}
	waitState("delivered")
	if err := b.notify.Retry(ctx, event); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("retrying a delivered event: %v, want ErrNotFound", err)
	}
}
