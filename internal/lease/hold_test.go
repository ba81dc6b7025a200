package lease

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/testkit"
)

// A renewal that timed out waiting for a lock is tried again shortly, within
// the trust window: another transaction holding the lease's lock for a
// while is not a lost lease.
func TestHeartbeatRetriesALockTimeout(t *testing.T) {
	t.Parallel()
	const interval, window = 50 * time.Millisecond, 2 * time.Second
	retry := interval / 4
	lockTimeout := func(context.Context) error { return fmt.Errorf("renew lease: %w", store.ErrLockTimeout) }
	success := func(context.Context) error { return nil }
	clock := newFakeClock(time.Now())
	r := newTestRenewer(clock, nil, lockTimeout, lockTimeout, lockTimeout, success, success)
	start := clock.Now()
	ctx, _ := startTestHeartbeat(t, r, Lease{Owner: uuid.New(), sentAt: start}, interval, window, clock, nil)
	var sent []time.Duration
	for _, wait := range []time.Duration{interval, retry, retry, retry, interval} {
		clock.waitArmed(t, 2)
		clock.Advance(wait)
		sent = append(sent, r.call(t).sent.Sub(start))
		r.answer(t)
	}
	clock.waitArmed(t, 2)
	if ctx.Err() != nil {
		t.Fatalf("the check was cancelled after a lock timeout: %v", context.Cause(ctx))
	}
	// Each lock timeout is tried again after retry; the success returns to
	// the interval.
	want := []time.Duration{interval, interval + retry, interval + 2*retry, interval + 3*retry, 2*interval + 3*retry}
	if !slices.Equal(sent, want) {
		t.Fatalf("renewals sent at %v, want %v", sent, want)
	}
}

// The same against the database: a transaction holds the lease's lock for
// longer than a renewal may wait (its lock_timeout), three renewals give
// up on it, and the heartbeat keeps the lease.
func TestHeartbeatSurvivesALongLockHold(t *testing.T) {
	t.Parallel()
	timings := Timings{Lease: 4 * time.Second, Heartbeat: 200 * time.Millisecond, Cooldown: time.Second,
		Period: 24 * time.Hour, TxTimeout: 300 * time.Millisecond}
	clock := newFakeClock(time.Now())
	b := setup(t, timings, WithClock(clock))
	l := mustAcquire(t, b.m, Operator)
	r := newTestRenewer(clock, b.m)
	ctx, _ := startTestHeartbeat(t, r, l, timings.Heartbeat, timings.trustWindow(), clock, nil)

	blocker, err := b.db.Pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Rollback(context.Background())
	if _, err := blocker.Exec(context.Background(), "SELECT pg_advisory_xact_lock($1)", b.m.key); err != nil {
		t.Fatal(err)
	}
	retry := timings.Heartbeat / 4
	for i, wait := range []time.Duration{timings.Heartbeat, retry, retry} {
		clock.waitArmed(t, 2)
		clock.Advance(wait)
		r.call(t)
		if err := r.answer(t); !errors.Is(err, store.ErrLockTimeout) {
			t.Fatalf("renewal %d while the lock is held: %v, want a lock timeout", i+1, err)
		}
	}
	if err := blocker.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	clock.waitArmed(t, 2)
	clock.Advance(retry)
	r.call(t)
	if err := r.answer(t); err != nil {
		t.Fatalf("renewal after the lock was released: %v", err)
	}
	clock.waitArmed(t, 2)
	if ctx.Err() != nil {
		t.Fatalf("the lease was given up while another transaction held its lock: %v", context.Cause(ctx))
	}
}

// WithLock and WithLease report how long they held the lease's lock, on
// the manager's clock.
func TestLockHeldIsReported(t *testing.T) {
	t.Parallel()
	var held []time.Duration
	clock := newFakeClock(time.Now())
	b := setup(t, Timings(testkit.Timings()), WithClock(clock), WithLockHeld(func(d time.Duration) { held = append(held, d) }))
	if err := b.m.WithLock(context.Background(), func(*store.Tx) error { clock.Advance(50 * time.Millisecond); return nil }); err != nil {
		t.Fatal(err)
	}
	l := mustAcquire(t, b.m, Operator)
	if err := b.m.WithLease(context.Background(), l.Owner, func(*store.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{50 * time.Millisecond, 0}; !slices.Equal(held, want) {
		t.Fatalf("holds reported: %v, want %v", held, want)
	}
}
