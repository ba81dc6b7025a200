package lease

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/testkit"
)

// auditMarks counts the audit rows a test's record wrote.
func (b *bundle) auditMarks(t *testing.T) (n int) {
	t.Helper()
	b.db.QueryRow(t, "SELECT count(*) FROM audit_log WHERE action = 'settle.test'").Scan(&n)
	return n
}

func settleMark(ctx context.Context, tx *store.Tx) error {
	return tx.AuditAppend(ctx, 0, "settle.test", nil)
}

// Settle gives the lease back and writes the record in one transaction;
// when the database refuses the record, the lease is still given back (a
// run that cannot be recorded must not keep the lease) and the refusal is
// returned.
func TestSettleReleasesAndRecords(t *testing.T) {
	t.Parallel()
	b := setup(t, Timings(testkit.Timings()))
	ctx := context.Background()
	l := mustAcquire(t, b.m, Operator)
	released, attempts, err := b.m.Settle(ctx, l, false, settleMark)
	if err != nil || !released || attempts != 1 || b.auditMarks(t) != 1 {
		t.Fatalf("settle: released %v, %d attempts, %v; %d records", released, attempts, err, b.auditMarks(t))
	}
	if st, _ := b.m.Status(ctx, time.Hour); st.Owner != uuid.Nil {
		t.Fatalf("lease after settle: %+v", st)
	}

	l = mustAcquire(t, b.m, Operator)
	refused := errors.New("refused")
	released, _, err = b.m.Settle(ctx, l, false, func(ctx context.Context, tx *store.Tx) error {
		if err := settleMark(ctx, tx); err != nil {
			return err
		}
		return refused
	})
	if !errors.Is(err, refused) || !released || b.auditMarks(t) != 1 {
		t.Fatalf("settle with a refused record: released %v, %v; %d records (its write must roll back)", released, err, b.auditMarks(t))
	}
	if a := mustAcquireOutcome(t, b.manager(t), Operator); a != Acquired {
		t.Fatalf("acquire after a refused record: %s", a)
	}
}

// A late Settle of a lease that ran out and was taken by another owner
// frees nothing: the release names the owner, the successor keeps its
// lease. The record is still written.
func TestSettleNeverReleasesASuccessor(t *testing.T) {
	t.Parallel()
	b := setup(t, Timings(testkit.Timings()))
	ctx := context.Background()
	old := mustAcquire(t, b.m, Operator)
	b.waitPast(t, b.expiresAt(t))
	next := mustAcquire(t, b.manager(t), Operator)
	released, _, err := b.m.Settle(ctx, old, false, settleMark)
	if err != nil || released || b.auditMarks(t) != 1 {
		t.Fatalf("late settle: released %v, %v; %d records", released, err, b.auditMarks(t))
	}
	if err := b.m.Renew(ctx, next.Owner); err != nil {
		t.Fatalf("the successor's lease after the late settle: %v", err)
	}
}

// With the database unreachable, Settle tries again and again until the
// lease could have expired, then gives up; it never outlives that bound.
func TestSettleGivesUpWhenTheLeaseCouldHaveExpired(t *testing.T) {
	t.Parallel()
	b := setup(t, Timings(testkit.Timings()))
	pool := poolOf(t, b.db.URL)
	m, err := New(store.New(pool), b.m.timings)
	if err != nil {
		t.Fatal(err)
	}
	l := mustAcquire(t, m, Operator)
	pool.Close() // the database is gone for this process
	began := time.Now()
	released, attempts, err := m.Settle(context.Background(), l, false, settleMark)
	took := time.Since(began)
	if err == nil || released || attempts < 3 {
		t.Fatalf("settle with the database gone: released %v, %d attempts, %v", released, attempts, err)
	}
	if left := time.Until(m.Expiry(l)); left > 0 || took > m.timings.Lease+settleRetryMax {
		t.Fatalf("gave up %s before the lease could have expired, after %s", left, took)
	}
	// Its own process gave up; the lease is left to expire by itself.
	if st, _ := b.m.Status(context.Background(), time.Hour); st.Owner != l.Owner {
		t.Fatalf("lease after settle gave up: %+v", st)
	}
}

// Once its context is done (shutdown), Settle goes on for SettleGrace at
// most, however long the lease has left.
func TestSettleAfterShutdownIsBounded(t *testing.T) {
	t.Parallel()
	timings := Timings(testkit.Timings())
	timings.Lease = time.Minute
	b := setup(t, timings)
	pool := poolOf(t, b.db.URL)
	m, err := New(store.New(pool), timings)
	if err != nil {
		t.Fatal(err)
	}
	l := mustAcquire(t, m, Operator)
	pool.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	began := time.Now()
	_, attempts, err := m.Settle(ctx, l, false, settleMark)
	if took := time.Since(began); err == nil || attempts < 2 || took < SettleGrace-time.Second || took > SettleGrace+settleRetryMax {
		t.Fatalf("settle during shutdown: %d attempts in %s, %v; want about %s", attempts, took, err, SettleGrace)
	}
}

func mustAcquireOutcome(t *testing.T, m *Manager, trigger Trigger) Outcome {
	t.Helper()
	a, err := m.Acquire(context.Background(), trigger)
	if err != nil {
		t.Fatal(err)
	}
	return a.Outcome
}
