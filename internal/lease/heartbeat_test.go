package lease

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/testkit"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// The heartbeat tests run the heartbeat on a fakeClock: a renewal happens
// when the test advances the clock to it, so renewals are counted exactly
// and trust runs out at an exact instant. The database is real.

// Property 9a: the heartbeat renews on cadence, each renewal extends the
// lease on the database, and no renewal is scheduled while one is on its
// way, however long it takes.
func TestHeartbeatRenewsOnCadence(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(time.Now())
	b := setup(t, Timings(testkit.Timings()), WithClock(clock))
	interval := b.m.timings.Heartbeat
	l := mustAcquire(t, b.m, Operator)
	expiresAt := func() (at time.Time) {
		b.db.QueryRow(t, "SELECT expires_at FROM core_update_lock WHERE name = 'check'").Scan(&at)
		return at
	}
	const renewals = 5
	g := newGate()
	steps := make([]func(context.Context) error, renewals)
	for i := range steps {
		steps[i] = g.then(func(ctx context.Context) error { return b.m.Renew(ctx, l.Owner) })
	}
	r := newTestRenewer(clock, nil, steps...)
	start := clock.Now()
	ctx, hb := startTestHeartbeat(t, r, l, interval, b.m.timings.trustWindow(), clock, g)
	expires := expiresAt()
	for i := 1; i <= renewals; i++ {
		clock.waitArmed(t, 2) // trust, and the next renewal
		clock.Advance(interval)
		// Each renewal takes a whole interval: sent one interval after the
		// previous answer, which came an interval after its send.
		if sent, want := r.call(t).sent, start.Add(time.Duration(2*i-1)*interval); !sent.Equal(want) {
			t.Fatalf("renewal %d sent at +%s, want +%s", i, sent.Sub(start), want.Sub(start))
		}
		if n := clock.armedNow(); n != 1 {
			t.Fatalf("renewal %d on its way: %d timers armed, want only trust: the next renewal waits for the answer", i, n)
		}
		clock.Advance(interval)
		g.open()
		if err := r.answer(t); err != nil {
			t.Fatalf("renewal %d: %v", i, err)
		}
		if at := expiresAt(); !at.After(expires) {
			t.Fatalf("renewal %d did not extend the lease: it expires at %s, before at %s", i, at, expires)
		} else {
			expires = at
		}
	}
	clock.waitArmed(t, 2)
	hb.Stop()
	if cause := context.Cause(ctx); cause != context.Canceled {
		t.Fatalf("check context ended with %v, want only Stop's cancellation", cause)
	}
	if n := len(r.calls); n != 0 {
		t.Fatalf("%d renewals more than the %d the clock called for", n, renewals)
	}
	if over := r.maxOver.Load(); over != 1 {
		t.Fatalf("%d renewals ran at once, want 1", over)
	}
}

// Property 9b: a takeover is noticed at the next renewal.
func TestHeartbeatCancelsOnTakeover(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(time.Now())
	b := setup(t, Timings(testkit.Timings()), WithClock(clock))
	l := mustAcquire(t, b.m, Operator)
	ctx, hb := b.m.StartHeartbeat(context.Background(), l)
	defer hb.Stop()
	clock.waitArmed(t, 2)
	b.expire(t)
	mustAcquire(t, b.manager(t), Operator)
	clock.Advance(b.m.timings.Heartbeat) // the next renewal, far inside the trust window
	if cause := waitLost(t, ctx); strings.Contains(cause.Error(), "trust window") {
		t.Fatalf("cancelled by the trust window, not by the refused renewal: %v", cause)
	}
}

// Property 9c: an unreachable database cancels the check at the next
// renewal: the pool is closed under the heartbeat, and separately its
// backend is terminated.
func TestHeartbeatCancelsWhenDatabaseUnreachable(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(time.Now())
	b := setup(t, Timings(testkit.Timings()))
	pool := poolOf(t, b.db.URL)
	m, err := New(store.New(pool), b.m.timings, WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	l := mustAcquire(t, m, Operator)
	ctx, hb := m.StartHeartbeat(context.Background(), l)
	defer hb.Stop()
	clock.waitArmed(t, 2)
	pool.Close()
	clock.Advance(m.timings.Heartbeat)
	if cause := waitLost(t, ctx); strings.Contains(cause.Error(), "trust window") {
		t.Fatalf("cancelled by the trust window, not by the failed renewal: %v", cause)
	}
}

func TestHeartbeatCancelsWhenBackendTerminated(t *testing.T) {
	t.Parallel()
	timings := Timings(testkit.Timings())
	timings.TxTimeout = 10 * time.Second // only the termination may end the renewal
	clock := newFakeClock(time.Now())
	b := setup(t, timings)
	pool := poolOf(t, b.db.URL+"&application_name=doomed")
	defer pool.Close()
	m, err := New(store.New(pool), timings, WithClock(clock))
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
	ctx, hb := m.StartHeartbeat(context.Background(), l)
	defer hb.Stop()
	clock.waitArmed(t, 2)
	clock.Advance(timings.Heartbeat)
	wait.True(t, "the renewal waits on the lock", guard, func() bool {
		var n int
		b.db.QueryRow(t, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'doomed' AND wait_event_type = 'Lock'").Scan(&n)
		return n > 0
	})
	b.db.MustExec(t, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'doomed'")
	// The clock stays one interval in: the trust window cannot close, so
	// only the failed renewal can cancel the check.
	if cause := waitLost(t, ctx); strings.Contains(cause.Error(), "trust window") {
		t.Fatalf("cancelled by the trust window, not by the failed renewal: %v", cause)
	}
}

// Property 9d: renewals that hang past the trust window cancel the check
// when the window closes, not when the renewal finally gives up.
func TestHeartbeatCancelsWhenRenewalsHang(t *testing.T) {
	t.Parallel()
	const interval, window = 100 * time.Millisecond, 800 * time.Millisecond
	clock := newFakeClock(time.Now())
	g := newGate()
	r := newTestRenewer(clock, nil, g.answer(nil)) // hangs, deaf to its context, until the gate opens
	start := clock.Now()
	ctx, hb := startTestHeartbeat(t, r, Lease{Owner: uuid.New(), sentAt: start}, interval, window, clock, g)
	clock.waitArmed(t, 2)
	clock.Advance(interval)
	r.call(t)
	clock.Advance(window - interval - time.Nanosecond)
	if ctx.Err() != nil {
		t.Fatalf("cancelled before the trust window closed: %v", context.Cause(ctx))
	}
	clock.Advance(time.Nanosecond) // the window closes
	if cause := waitLost(t, ctx); !strings.Contains(cause.Error(), "did not answer within the trust window") {
		t.Fatalf("cause = %v, want the trust window", cause)
	}
	if n := len(r.answers); n != 0 {
		t.Fatal("the renewal answered: the test proves nothing")
	}
	g.release()
	hb.Stop()
}

// Property 9e: a slow renewal that succeeds extends trust from when it was
// sent, not from when it answered.
func TestHeartbeatSlowRenewalDoesNotExtendTrust(t *testing.T) {
	t.Parallel()
	const interval, window, slow = 300 * time.Millisecond, 1500 * time.Millisecond, 900 * time.Millisecond
	clock := newFakeClock(time.Now())
	g := newGate()
	// The first renewal succeeds slowly; every later one hangs until cancelled.
	r := newTestRenewer(clock, nil, g.answer(nil))
	start := clock.Now()
	ctx, _ := startTestHeartbeat(t, r, Lease{Owner: uuid.New(), sentAt: start}, interval, window, clock, g)
	clock.waitArmed(t, 2)
	clock.Advance(interval)
	first := r.call(t)
	clock.Advance(slow)
	g.open()
	if err := r.answer(t); err != nil {
		t.Fatal(err)
	}
	clock.waitArmed(t, 2)
	clock.Advance(interval)
	r.call(t) // this one hangs
	// Trust counted from the first renewal's send runs out at +1.8s; counted
	// from its answer (the bug) it would run to +2.7s.
	fromSend := first.sent.Add(window)
	clock.Advance(fromSend.Sub(clock.Now()) - time.Nanosecond)
	if ctx.Err() != nil {
		t.Fatalf("cancelled at +%s, before trust from the send ran out at +%s: %v", clock.Now().Sub(start), fromSend.Sub(start), context.Cause(ctx))
	}
	clock.Advance(time.Nanosecond)
	waitLost(t, ctx)
}

// Property 9f: Stop waits for a renewal on its way and leaves no goroutine.
// In a synctest bubble, so that the test knows when Stop is blocked; not
// parallel, so goleak sees only this test's goroutines.
func TestHeartbeatStopWaitsAndLeavesNothing(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	synctest.Test(t, func(t *testing.T) {
		clock := newFakeClock(time.Now())
		g := newGate()
		r := newTestRenewer(clock, nil, g.answer(nil))
		_, hb := startTestHeartbeat(t, r, Lease{Owner: uuid.New(), sentAt: clock.Now()}, 50*time.Millisecond, 5*time.Second, clock, g)
		clock.waitArmed(t, 2)
		clock.Advance(50 * time.Millisecond)
		r.call(t) // the renewal is on its way
		stopped := make(chan struct{})
		go func() { hb.Stop(); close(stopped) }()
		synctest.Wait() // every goroutine of the test has blocked, Stop's included, or returned
		select {
		case <-stopped:
			t.Fatal("Stop returned while a renewal was still on its way")
		default:
		}
		g.release()
		<-stopped
		hb.Stop() // twice is fine
	})
}
