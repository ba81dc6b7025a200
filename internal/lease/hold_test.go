package lease

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/upcheck/upcheck/internal/store"
)

// A renewal that timed out waiting for a lock is tried again within the
// trust window: another transaction holding the lease's lock for a while is
// not a lost lease.
func TestHeartbeatRetriesALockTimeout(t *testing.T) {
	t.Parallel()
	lockTimeout := func(context.Context) error {
		return fmt.Errorf("renew lease: %w", store.ErrLockTimeout)
	}
	var ok atomic.Int32
	success := func(context.Context) error { ok.Add(1); return nil }
	r := &scriptedRenewer{steps: []func(context.Context) error{lockTimeout, lockTimeout, lockTimeout, success, success}}
	ctx, hb := startHeartbeat(context.Background(), r, Lease{Owner: uuid.New(), sentAt: time.Now()},
		50*time.Millisecond, 2*time.Second, systemClock{}, slog.Default())
	defer hb.Stop()
	deadline := time.Now().Add(2 * time.Second)
	for ok.Load() < 2 {
		if ctx.Err() != nil {
			t.Fatalf("the check was cancelled after a lock timeout: %v", context.Cause(ctx))
		}
		if time.Now().After(deadline) {
			t.Fatal("no renewal succeeded after the lock timeouts")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The same against the database: a transaction holds the lease's lock for
// longer than a renewal may wait, but less than the trust window; the
// heartbeat keeps the lease.
func TestHeartbeatSurvivesALongLockHold(t *testing.T) {
	t.Parallel()
	timings := Timings{Lease: 4 * time.Second, Heartbeat: 200 * time.Millisecond, Cooldown: time.Second,
		Period: 24 * time.Hour, TxTimeout: 300 * time.Millisecond}
	b := setup(t, timings)
	l := mustAcquire(t, b.m, Operator)
	ctx, hb := b.m.StartHeartbeat(context.Background(), l)
	defer hb.Stop()

	blocker, err := b.db.Pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := blocker.Exec(context.Background(), "SELECT pg_advisory_xact_lock($1)", b.m.key); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * timings.TxTimeout) // several renewals time out meanwhile
	if err := blocker.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * timings.Heartbeat)
	if ctx.Err() != nil {
		t.Fatalf("the lease was given up while another transaction held its lock: %v", context.Cause(ctx))
	}
	if err := b.m.Renew(context.Background(), l.Owner); err != nil {
		t.Fatalf("the lease is not held after the lock was released: %v", err)
	}
}

// WithLock and WithLease report how long they held the lease's lock.
func TestLockHeldIsReported(t *testing.T) {
	t.Parallel()
	var held []time.Duration
	b := setup(t, testTimings(), WithLockHeld(func(d time.Duration) { held = append(held, d) }))
	if err := b.m.WithLock(context.Background(), func(*store.Tx) error { time.Sleep(50 * time.Millisecond); return nil }); err != nil {
		t.Fatal(err)
	}
	l := mustAcquire(t, b.m, Operator)
	if err := b.m.WithLease(context.Background(), l.Owner, func(*store.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if len(held) != 2 || held[0] < 50*time.Millisecond || held[1] >= held[0] {
		t.Fatalf("holds reported: %v, want two, the first at least 50ms", held)
	}
}
