package lease

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/upcheck/upcheck/internal/store"
)

// countingRenewer wraps a Renewer and records how renewals overlap.
type countingRenewer struct {
	next     Renewer
	calls    atomic.Int32
	inFlight atomic.Int32
	maxOver  atomic.Int32
}

func (c *countingRenewer) Renew(ctx context.Context, owner uuid.UUID) error {
	c.calls.Add(1)
	n := c.inFlight.Add(1)
	defer c.inFlight.Add(-1)
	for {
		m := c.maxOver.Load()
		if n <= m || c.maxOver.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(20 * time.Millisecond) // widen the window an overlap would need
	return c.next.Renew(ctx, owner)
}

// scriptedRenewer answers each call with the next step.
type scriptedRenewer struct {
	mu    sync.Mutex
	steps []func(ctx context.Context) error
	sent  []time.Time
}

func (s *scriptedRenewer) Renew(ctx context.Context, _ uuid.UUID) error {
	s.mu.Lock()
	s.sent = append(s.sent, time.Now())
	step := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	if len(s.steps) > 0 {
		step, s.steps = s.steps[0], s.steps[1:]
	}
	s.mu.Unlock()
	return step(ctx)
}

func lostWithin(t *testing.T, ctx context.Context, d time.Duration) time.Time {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(d):
		t.Fatalf("check context not cancelled within %s", d)
	}
	if cause := context.Cause(ctx); !errors.Is(cause, ErrLeaseLost) {
		t.Fatalf("cause = %v, want ErrLeaseLost", cause)
	}
	return time.Now()
}

// Property 9a: the heartbeat renews on cadence, keeps the lease past its
// original expiry, and never runs two renewals at once.
func TestHeartbeatRenewsOnCadence(t *testing.T) {
	t.Parallel()
	b := setup(t, testTimings())
	l := mustAcquire(t, b.m, Operator)
	r := &countingRenewer{next: b.m}
	ctx, hb := startHeartbeat(context.Background(), r, l, b.m.timings.Heartbeat, b.m.timings.trustWindow(), systemClock{}, slog.Default())
	run := b.m.timings.Lease + time.Second // past the first expiry
	time.Sleep(run)
	hb.Stop()
	if err := context.Cause(ctx); errors.Is(err, ErrLeaseLost) {
		t.Fatalf("lease lost while renewing: %v", err)
	}
	calls := r.calls.Load()
	want := int32(run / (b.m.timings.Heartbeat + 20*time.Millisecond))
	if calls < want-3 || calls > want+1 {
		t.Fatalf("%d renewals in %s, want about %d", calls, run, want)
	}
	if over := r.maxOver.Load(); over != 1 {
		t.Fatalf("%d renewals ran at once, want 1", over)
	}
	// The lease is still ours although its first expiry has passed.
	if err := b.m.Renew(context.Background(), l.Owner); err != nil {
		t.Fatalf("lease not kept alive: %v", err)
	}
}

// Property 9b: a takeover is noticed at the next renewal.
func TestHeartbeatCancelsOnTakeover(t *testing.T) {
	t.Parallel()
	b := setup(t, testTimings())
	l := mustAcquire(t, b.m, Operator)
	ctx, hb := b.m.StartHeartbeat(context.Background(), l)
	defer hb.Stop()
	b.expire(t)
	mustAcquire(t, b.manager(t), Operator)
	lostWithin(t, ctx, 2*b.m.timings.Heartbeat)
}

// Property 9c: an unreachable database cancels the check: the pool is
// closed under the heartbeat, and separately its backend is terminated.
func TestHeartbeatCancelsWhenDatabaseUnreachable(t *testing.T) {
	t.Parallel()
	b := setup(t, testTimings())
	pool := poolOf(t, b.db.URL)
	m, err := New(store.New(pool), b.m.timings)
	if err != nil {
		t.Fatal(err)
	}
	l := mustAcquire(t, m, Operator)
	ctx, hb := m.StartHeartbeat(context.Background(), l)
	defer hb.Stop()
	pool.Close()
	lostWithin(t, ctx, 2*b.m.timings.Heartbeat)
}

func TestHeartbeatCancelsWhenBackendTerminated(t *testing.T) {
	t.Parallel()
	timings := testTimings()
	timings.TxTimeout = 10 * time.Second // only the termination may end the renewal
	b := setup(t, timings)
	pool := poolOf(t, b.db.URL+"&application_name=doomed")
	defer pool.Close()
	m, err := New(store.New(pool), timings)
	if err != nil {
		t.Fatal(err)
	}
	l := mustAcquire(t, m, Operator)

	// Hold the lease's advisory lock so the next renewal waits inside the
	// database; then terminate the renewing backend.
	blocker, err := b.db.Pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Rollback(context.Background())
	if _, err := blocker.Exec(context.Background(), "SELECT pg_advisory_xact_lock($1)", m.key); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ctx, hb := m.StartHeartbeat(context.Background(), l)
	defer hb.Stop()
	for {
		var n int
		b.db.QueryRow(t, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'doomed' AND wait_event_type = 'Lock'").Scan(&n)
		if n > 0 {
			break
		}
		if time.Since(start) > timings.trustWindow()/2 {
			t.Fatal("the renewal never waited on the lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	killed := time.Now()
	b.exec(t, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'doomed'")
	lost := lostWithin(t, ctx, timings.trustWindow())
	if d := lost.Sub(killed); d > 500*time.Millisecond {
		t.Fatalf("cancelled %s after the backend died, want at once (cause %v)", d, context.Cause(ctx))
	}
	if cause := context.Cause(ctx).Error(); strings.Contains(cause, "trust window") {
		t.Fatalf("cancelled by the trust window, not by the failed renewal: %s", cause)
	}
}

// Property 9d: renewals that hang past the trust window cancel the check
// when the window closes, not when the renewal finally gives up.
func TestHeartbeatCancelsWhenRenewalsHang(t *testing.T) {
	t.Parallel()
	window := 800 * time.Millisecond
	r := &scriptedRenewer{steps: []func(context.Context) error{
		func(context.Context) error { time.Sleep(3 * time.Second); return nil }, // ignores its context
	}}
	start := time.Now()
	ctx, hb := startHeartbeat(context.Background(), r, Lease{Owner: uuid.New(), sentAt: start}, 100*time.Millisecond, window, systemClock{}, slog.Default())
	lost := lostWithin(t, ctx, 2*window)
	if d := lost.Sub(start); d < window-20*time.Millisecond || d > window+400*time.Millisecond {
		t.Fatalf("cancelled after %s, want about %s", d, window)
	}
	hb.Stop()
}

// Property 9e: a slow renewal that succeeds extends trust from when it was
// sent, not from when it answered.
func TestHeartbeatSlowRenewalDoesNotExtendTrust(t *testing.T) {
	t.Parallel()
	const interval, window, slow = 300 * time.Millisecond, 1500 * time.Millisecond, 900 * time.Millisecond
	r := &scriptedRenewer{steps: []func(context.Context) error{
		func(context.Context) error { time.Sleep(slow); return nil }, // slow success
		// then every renewal hangs until cancelled
	}}
	start := time.Now()
	ctx, hb := startHeartbeat(context.Background(), r, Lease{Owner: uuid.New(), sentAt: start}, interval, window, systemClock{}, slog.Default())
	defer hb.Stop()
	lost := lostWithin(t, ctx, 3*window)
	r.mu.Lock()
	firstSent := r.sent[0]
	r.mu.Unlock()
	fromSend := firstSent.Add(window)             // correct deadline
	fromAnswer := firstSent.Add(slow).Add(window) // the bug: trust measured from the answer
	if lost.Before(fromSend.Add(-20*time.Millisecond)) || lost.After(fromSend.Add(400*time.Millisecond)) {
		t.Fatalf("lost at +%s, want about +%s (from the send), not +%s (from the answer)",
			lost.Sub(start), fromSend.Sub(start), fromAnswer.Sub(start))
	}
}

// Property 9f: Stop waits for a renewal on its way and leaves no goroutine.
// Not parallel, so goleak sees only this test's goroutines.
func TestHeartbeatStopWaitsAndLeavesNothing(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var finished atomic.Bool
	r := &scriptedRenewer{steps: []func(context.Context) error{
		func(context.Context) error { time.Sleep(400 * time.Millisecond); finished.Store(true); return nil },
	}}
	_, hb := startHeartbeat(context.Background(), r, Lease{Owner: uuid.New(), sentAt: time.Now()}, 50*time.Millisecond, 5*time.Second, systemClock{}, slog.Default())
	time.Sleep(150 * time.Millisecond) // the renewal is now in flight
	hb.Stop()
	if !finished.Load() {
		t.Fatal("Stop returned while a renewal was still on its way")
	}
	hb.Stop() // twice is fine
}
