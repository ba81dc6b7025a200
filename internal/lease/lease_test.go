package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/testkit"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// bundle is one test's database and lease manager.
type bundle struct {
	db    *pgtest.DB
	store *store.Store
	m     *Manager
}

func setup(t *testing.T, timings Timings, opts ...Option) *bundle {
	t.Helper()
	d := pgtest.New(t)
	st := store.New(d.Pool)
	m, err := New(st, timings, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{db: d, store: st, m: m}
}

// manager returns another Manager on the same database: another instance.
func (b *bundle) manager(t *testing.T, opts ...Option) *Manager {
	t.Helper()
	m, err := New(b.store, b.m.timings, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (b *bundle) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	b.db.MustExec(t, sql, args...)
}

// expiresAt is the lease's expiry, on the database clock.
func (b *bundle) expiresAt(t *testing.T) (at time.Time) {
	t.Helper()
	b.db.QueryRow(t, "SELECT expires_at FROM core_update_lock WHERE name = 'check'").Scan(&at)
	return at
}

// waitPast waits until the database clock is past at.
func (b *bundle) waitPast(t *testing.T, at time.Time) {
	t.Helper()
	wait.True(t, "the database clock passes "+at.String(), guard, func() (past bool) {
		b.db.QueryRow(t, "SELECT clock_timestamp() > $1", at).Scan(&past)
		return past
	})
}

// waitLockQueue waits until a session of this test's database waits for an
// advisory lock (the lease's: the only one the tests take).
func (b *bundle) waitLockQueue(t *testing.T) {
	t.Helper()
	wait.True(t, "a session queues on the lease's lock", guard, func() (queued bool) {
		b.db.QueryRow(t, `SELECT count(*) > 0 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE l.locktype = 'advisory' AND NOT l.granted AND a.datname = current_database()`).Scan(&queued)
		return queued
	})
}

// expire moves the lease's expiry into the past on the database clock, as if
// its holder had stopped renewing long ago.
func (b *bundle) expire(t *testing.T) {
	t.Helper()
	b.exec(t, "UPDATE core_update_lock SET expires_at = clock_timestamp() - interval '1 second' WHERE name = 'check' AND owner IS NOT NULL")
}

func (b *bundle) row(t *testing.T) (owner uuid.NullUUID, epoch int64) {
	t.Helper()
	b.db.QueryRow(t, "SELECT owner, epoch FROM core_update_lock WHERE name = 'check'").Scan(&owner, &epoch)
	return owner, epoch
}

func mustAcquire(t *testing.T, m *Manager, trigger Trigger) Lease {
	t.Helper()
	a, err := m.Acquire(context.Background(), trigger)
	if err != nil {
		t.Fatal(err)
	}
	if a.Outcome != Acquired {
		t.Fatalf("acquire %s: got %s, want acquired", trigger, a.Outcome)
	}
	return a.Lease
}

func wantOutcome(t *testing.T, m *Manager, trigger Trigger, want Outcome) Acquisition {
	t.Helper()
	a, err := m.Acquire(context.Background(), trigger)
	if err != nil {
		t.Fatal(err)
	}
	if a.Outcome != want {
		t.Fatalf("acquire %s: got %s, want %s", trigger, a.Outcome, want)
	}
	return a
}

// Property 1: over an expired row, eight contenders on eight connections
// produce exactly one winner, every round.
func TestAcquireRaceExactlyOneWinner(t *testing.T) {
	t.Parallel()
	b := setup(t, Timings(testkit.Timings()))
	const contenders, rounds = 8, 100
	managers := make([]*Manager, contenders)
	for i := range managers {
		managers[i] = b.manager(t)
	}
	// Hold eight connections open so every contender really has its own.
	b.db.Pool.Config().MaxConns = contenders + 2
	mustAcquire(t, b.m, Operator)

	for round := range rounds {
		b.expire(t)
		var winners atomic.Int32
		var start, done sync.WaitGroup
		start.Add(1)
		errs := make(chan error, contenders)
		for _, m := range managers {
			done.Add(1)
			go func() {
				defer done.Done()
				start.Wait()
				a, err := m.Acquire(context.Background(), Operator)
				if err != nil {
					errs <- err
					return
				}
				if a.Outcome == Acquired {
					winners.Add(1)
				}
			}()
		}
		start.Done()
		done.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
		if n := winners.Load(); n != 1 {
			t.Fatalf("round %d: %d winners, want exactly 1", round, n)
		}
	}
}

// The control for property 1: the same race, with a plain SELECT-then-UPDATE
// whose UPDATE does not repeat the "free" condition, does produce several
// winners. It proves the race above is real and that the test can catch it.
func TestAcquireRaceControlNaiveDoubleWins(t *testing.T) {
	t.Parallel()
	b := setup(t, Timings(testkit.Timings()))
	const contenders, rounds = 8, 20
	b.db.Pool.Config().MaxConns = contenders + 2
	mustAcquire(t, b.m, Operator)

	naive := func(ctx context.Context, selected *sync.WaitGroup, proceed <-chan struct{}) (bool, error) {
		won := false
		err := pgx.BeginFunc(ctx, b.db.Pool, func(tx pgx.Tx) error {
			var free bool
			err := tx.QueryRow(ctx, "SELECT owner IS NULL OR expires_at <= clock_timestamp() FROM core_update_lock WHERE name = 'check'").Scan(&free)
			selected.Done()
			if err != nil || !free {
				return err
			}
			<-proceed // every contender has read the row before anyone writes
			tag, err := tx.Exec(ctx, "UPDATE core_update_lock SET owner = $1, epoch = epoch + 1, expires_at = clock_timestamp() + interval '1 minute' WHERE name = 'check'", uuid.New())
			won = err == nil && tag.RowsAffected() == 1
			return err
		})
		return won, err
	}

	doubleWins := 0
	for range rounds {
		b.expire(t)
		var winners atomic.Int32
		var selected, done sync.WaitGroup
		proceed := make(chan struct{})
		selected.Add(contenders)
		for range contenders {
			done.Add(1)
			go func() {
				defer done.Done()
				if won, err := naive(context.Background(), &selected, proceed); err != nil {
					t.Error(err)
				} else if won {
					winners.Add(1)
				}
			}()
		}
		selected.Wait()
		close(proceed)
		done.Wait()
		if winners.Load() > 1 {
			doubleWins++
		}
	}
	if doubleWins == 0 {
		t.Fatalf("the naive SELECT-then-UPDATE never produced two winners in %d rounds: the race test could not catch the bug", rounds)
	}
	t.Logf("naive acquire: rounds with several winners: %d of %d", doubleWins, rounds)
}

// The UPDATE's repeated "free" condition holds on its own: the same staged
// race as the control, with the production UPDATE and no advisory lock,
// still has exactly one winner.
func TestLeaseTakeRepeatsFreeCondition(t *testing.T) {
	t.Parallel()
	b := setup(t, Timings(testkit.Timings()))
	const contenders = 8
	b.db.Pool.Config().MaxConns = contenders + 2
	mustAcquire(t, b.m, Operator)
	for round := range 10 {
		b.expire(t)
		var winners atomic.Int32
		var selected, done sync.WaitGroup
		proceed := make(chan struct{})
		selected.Add(contenders)
		for range contenders {
			done.Add(1)
			go func() {
				defer done.Done()
				err := b.store.WithTx(context.Background(), func(tx *store.Tx) error {
					selected.Done()
					<-proceed
					_, err := tx.LeaseTake(context.Background(), Name, store.LeaseTake{Owner: uuid.New(), Trigger: "operator", Lease: time.Minute})
					if err == nil {
						winners.Add(1)
					}
					if errors.Is(err, store.ErrNotFound) {
						return nil
					}
					return err
				})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		selected.Wait()
		close(proceed)
		done.Wait()
		if n := winners.Load(); n != 1 {
			t.Fatalf("round %d: %d winners, want 1", round, n)
		}
	}
}

// Property 2: renew and release belong to the live owner only.
func TestRenewAndReleaseOwnership(t *testing.T) {
	t.Parallel()
	b := setup(t, Timings(testkit.Timings()))
	ctx := context.Background()
	l := mustAcquire(t, b.m, Operator)

	if err := b.m.Renew(ctx, uuid.New()); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("renew by a non-owner: got %v, want ErrLeaseLost", err)
	}
	if ok, err := b.m.Release(ctx, uuid.New(), true); err != nil || ok {
		t.Fatalf("release by a non-owner: released=%v err=%v, want false", ok, err)
	}
	if owner, _ := b.row(t); owner.UUID != l.Owner {
		t.Fatalf("release by a non-owner changed the owner to %v", owner)
	}
	if err := b.m.Renew(ctx, l.Owner); err != nil {
		t.Fatalf("renew by the owner: %v", err)
	}

	b.expire(t)
	if err := b.m.Renew(ctx, l.Owner); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("renew after expiry: got %v, want ErrLeaseLost", err)
	}

	// A newer owner takes over; the old owner's late release must not free it.
	newer := mustAcquire(t, b.m, Operator)
	if newer.Epoch != l.Epoch+1 {
		t.Fatalf("epoch after takeover = %d, want %d", newer.Epoch, l.Epoch+1)
	}
	if ok, err := b.m.Release(ctx, l.Owner, true); err != nil || ok {
		t.Fatalf("late release by the old owner: released=%v err=%v", ok, err)
	}
	if owner, _ := b.row(t); owner.UUID != newer.Owner {
		t.Fatalf("late release freed the newer owner's lease (owner now %v)", owner)
	}
	wantOutcome(t, b.m, Operator, Busy)
	if ok, err := b.m.Release(ctx, newer.Owner, false); err != nil || !ok {
		t.Fatalf("release by the owner: released=%v err=%v", ok, err)
	}
	mustAcquire(t, b.m, Operator)
}

// The store answers a fence or renewal by anyone but the live owner with
// ErrLeaseNotHeld, its own error: not ErrNotFound, which the web layer
// would turn into a 404.
func TestStoreSaysLeaseNotHeld(t *testing.T) {
	t.Parallel()
	b := setup(t, Timings(testkit.Timings()))
	ctx := context.Background()
	l := mustAcquire(t, b.m, Operator)
	for name, stmt := range map[string]func(tx *store.Tx, owner uuid.UUID) error{
		"fence": func(tx *store.Tx, owner uuid.UUID) error {
			_, err := tx.LeaseBeginFence(ctx, b.m.key, Name, owner, time.Second, time.Second, time.Second)
			return err
		},
		"renew": func(tx *store.Tx, owner uuid.UUID) error {
			_, err := tx.LeaseRenew(ctx, Name, owner, time.Minute)
			return err
		},
	} {
		if err := b.store.WithTx(ctx, func(tx *store.Tx) error { return stmt(tx, l.Owner) }); err != nil {
			t.Fatalf("%s by the owner: %v", name, err)
		}
		err := b.store.WithTx(ctx, func(tx *store.Tx) error { return stmt(tx, uuid.New()) })
		if !errors.Is(err, store.ErrLeaseNotHeld) || errors.Is(err, store.ErrNotFound) {
			t.Fatalf("%s by another owner: %v, want store.ErrLeaseNotHeld alone", name, err)
		}
	}
}

// mark is a write the tests can observe, made the way a check writes:
// through a named store method in the transaction it is given. The mark is
// a component whose code is the mark.
func mark(ctx context.Context, tx *store.Tx, code string) error {
	_, err := tx.ComponentUpsertMany(ctx, store.LocalSite, []store.Component{{Code: code, Name: code, InstalledVersion: "1.0.0"}})
	return err
}

// writeMarker is a fenced write of one mark.
func writeMarker(ctx context.Context, m *Manager, owner uuid.UUID, code string) error {
	return m.WithLease(ctx, owner, func(tx *store.Tx) error { return mark(ctx, tx, code) })
}

// marks are the marks written and committed, oldest first.
func (b *bundle) marks(t *testing.T) []string {
	t.Helper()
	rows, err := b.db.Pool.Query(context.Background(), "SELECT code FROM components ORDER BY created_at, code")
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Property 3: after a takeover the old owner's fenced write is refused and
// writes nothing; a takeover that starts while a fenced transaction is open
// waits for it, and the old owner's next write is refused.
func TestFencedWriteAfterTakeover(t *testing.T) {
	t.Parallel()
	b := setup(t, Timings(testkit.Timings()))
	ctx := context.Background()

	old := mustAcquire(t, b.m, Operator)
	if err := writeMarker(ctx, b.m, old.Owner, "old-1"); err != nil {
		t.Fatal(err)
	}
	b.expire(t)
	mustAcquire(t, b.manager(t), Operator)
	if err := writeMarker(ctx, b.m, old.Owner, "old-2"); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("fenced write after takeover: got %v, want ErrLeaseLost", err)
	}
	if got := b.marks(t); len(got) != 1 || got[0] != "old-1" {
		t.Fatalf("marks = %v, want only old-1", got)
	}
}

func TestTakeoverWaitsForOpenFencedTransaction(t *testing.T) {
	t.Parallel()
	timings := Timings(testkit.Timings())
	timings.TxTimeout = 5 * time.Second // the open transaction outlives the lease on purpose
	b := setup(t, timings)
	ctx := context.Background()
	other := b.manager(t)

	old := mustAcquire(t, b.m, Operator)
	expiresAt := b.expiresAt(t)
	inside := make(chan struct{})
	commit := make(chan struct{})
	fenced := make(chan error, 1)
	go func() {
		fenced <- b.m.WithLease(ctx, old.Owner, func(tx *store.Tx) error {
			close(inside)
			<-commit
			return mark(ctx, tx, "old-in-flight")
		})
	}()
	<-inside
	// Let the lease expire on the database clock while the transaction is open.
	b.waitPast(t, expiresAt)

	type result struct {
		a   Acquisition
		err error
		at  time.Time
	}
	taken := make(chan result, 1)
	go func() {
		a, err := other.Acquire(ctx, Operator)
		taken <- result{a, err, time.Now()}
	}()
	// The taker queues on the lock the open transaction holds: it cannot
	// have an answer yet.
	b.waitLockQueue(t)
	select {
	case r := <-taken:
		t.Fatalf("takeover did not wait for the open fenced transaction: %+v", r)
	default:
	}
	committedAt := time.Now()
	close(commit)
	if err := <-fenced; err != nil {
		t.Fatalf("the in-flight fenced write checked before expiry must commit: %v", err)
	}
	r := <-taken
	if r.err != nil || r.a.Outcome != Acquired {
		t.Fatalf("takeover after the fenced commit: %+v %v", r.a, r.err)
	}
	if r.at.Before(committedAt) {
		t.Fatalf("takeover finished before the fenced transaction committed")
	}
	if err := writeMarker(ctx, b.m, old.Owner, "old-next"); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("old owner's next write: got %v, want ErrLeaseLost", err)
	}
	if got := b.marks(t); len(got) != 1 || got[0] != "old-in-flight" {
		t.Fatalf("marks = %v", got)
	}
}

// Property 4, the now() trap: a fenced transaction that began before expiry
// but waited on the locks until after it must be refused. now() would still
// say "before expiry"; clock_timestamp() does not.
func TestFencedWriteThatWaitedPastExpiryIsRefused(t *testing.T) {
	t.Parallel()
	timings := Timings(testkit.Timings())
	timings.TxTimeout = 10 * time.Second
	b := setup(t, timings)
	ctx := context.Background()
	l := mustAcquire(t, b.m, Operator)

	// Another session holds the lease's advisory lock past the expiry.
	blocker, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Rollback(ctx)
	if _, err := blocker.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", b.m.key); err != nil {
		t.Fatal(err)
	}
	expiresAt := b.expiresAt(t)

	fenced := make(chan error, 1)
	go func() {
		// The fenced transaction opens now, before expiry, then waits.
		fenced <- b.m.WithLease(ctx, l.Owner, func(tx *store.Tx) error {
			return mark(ctx, tx, "late")
		})
	}()
	// Wait until the fenced transaction is really queued on the lock, and
	// check that it began before the expiry (else the test proves nothing).
	b.waitLockQueue(t)
	var txStartBeforeExpiry bool
	b.db.QueryRow(t, `SELECT a.xact_start < $1 FROM pg_stat_activity a
		JOIN pg_locks l ON l.pid = a.pid AND l.locktype = 'advisory' AND NOT l.granted
		WHERE a.datname = current_database()`, expiresAt).Scan(&txStartBeforeExpiry)
	if !txStartBeforeExpiry {
		t.Fatal("the waiting fenced transaction did not start before expiry; the test would prove nothing")
	}
	// Hold the lock until the lease has expired on the database clock.
	b.waitPast(t, expiresAt)
	if err := blocker.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-fenced; !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("fenced write that waited past expiry: got %v, want ErrLeaseLost", err)
	}
	if got := b.marks(t); len(got) != 0 {
		t.Fatalf("marks = %v, want none", got)
	}
}

// Property 5: a holder stuck inside an open fenced transaction is cut off by
// the idle timeout, and a taker gets the lease within a few seconds.
func TestStuckFencedTransactionIsCutOff(t *testing.T) {
	t.Parallel()
	timings := Timings(testkit.Timings())
	timings.TxTimeout = 700 * time.Millisecond
	b := setup(t, timings)
	ctx := context.Background()
	other := b.manager(t)
	l := mustAcquire(t, b.m, Operator)

	stuck := make(chan struct{})
	defer close(stuck)
	fenced := make(chan error, 1)
	inside := make(chan struct{})
	go func() {
		fenced <- b.m.WithLease(ctx, l.Owner, func(tx *store.Tx) error {
			if err := mark(ctx, tx, "stuck"); err != nil {
				return err
			}
			close(inside)
			<-stuck // paused: no statement, transaction open, locks held
			return nil
		})
	}()
	<-inside
	start := time.Now()
	wait.True(t, "the taker gets the lease", guard, func() bool {
		a, err := other.Acquire(ctx, Operator)
		if err != nil {
			t.Fatalf("taker: %v", err)
		}
		return a.Outcome == Acquired
	})
	t.Logf("taker got the lease %s after the holder got stuck", time.Since(start).Round(time.Millisecond))
	stuck <- struct{}{}
	if err := <-fenced; err == nil {
		t.Fatal("the stuck fenced transaction committed after being cut off")
	}
	if got := b.marks(t); len(got) != 0 {
		t.Fatalf("marks = %v, the stuck write must have rolled back", got)
	}
}

// Property 6: the manual cooldown.
func TestManualCooldown(t *testing.T) {
	t.Parallel()
	timings := Timings(testkit.Timings())
	timings.Cooldown = 120 * time.Second
	b := setup(t, timings)
	ctx := context.Background()

	// A scheduled acquisition writes no cooldown stamp.
	s := mustAcquire(t, b.m, Scheduled)
	if _, err := b.m.Release(ctx, s.Owner, false); err != nil {
		t.Fatal(err)
	}
	var stamp *time.Time
	if b.db.QueryRow(t, "SELECT last_manual_at FROM core_update_lock").Scan(&stamp); stamp != nil {
		t.Fatalf("scheduled acquire stamped the cooldown: %v", stamp)
	}

	m1 := mustAcquire(t, b.m, Manual)
	if _, err := b.m.Release(ctx, m1.Owner, true); err != nil {
		t.Fatal(err)
	}
	a := wantOutcome(t, b.m, Manual, Cooldown)
	if a.RetryAfter < 118*time.Second || a.RetryAfter > 120*time.Second {
		t.Fatalf("retry after %s, want about 120s", a.RetryAfter)
	}
	// Refused attempts do not move the stamp: pretend 100 s passed.
	b.exec(t, "UPDATE core_update_lock SET last_manual_at = last_manual_at - interval '100 seconds'")
	a = wantOutcome(t, b.m, Manual, Cooldown)
	if a.RetryAfter < 18*time.Second || a.RetryAfter > 20*time.Second {
		t.Fatalf("retry after %s, want about 20s", a.RetryAfter)
	}
	// Scheduled and operator triggers ignore the cooldown.
	op := mustAcquire(t, b.m, Operator)
	if _, err := b.m.Release(ctx, op.Owner, false); err != nil {
		t.Fatal(err)
	}
	b.exec(t, "UPDATE core_update_lock SET last_completed_at = NULL")
	sc := mustAcquire(t, b.m, Scheduled)
	if _, err := b.m.Release(ctx, sc.Owner, false); err != nil {
		t.Fatal(err)
	}
	// Past the cooldown, manual acquires again and restamps.
	b.exec(t, "UPDATE core_update_lock SET last_manual_at = last_manual_at - interval '21 seconds'")
	mustAcquire(t, b.m, Manual)
	var fresh bool
	if b.db.QueryRow(t, "SELECT last_manual_at > clock_timestamp() - interval '5 seconds' FROM core_update_lock").Scan(&fresh); !fresh {
		t.Fatal("manual acquire did not restamp the cooldown")
	}
}

// Property 7: two scheduled triggers a few seconds apart after a completed
// check make one run; a check that did not complete does not count.
func TestScheduledPeriodSkip(t *testing.T) {
	t.Parallel()
	b := setup(t, Timings(testkit.Timings()))
	ctx := context.Background()
	other := b.manager(t)

	// An interrupted run (released without completing) does not count.
	l := mustAcquire(t, b.m, Scheduled)
	if _, err := b.m.Release(ctx, l.Owner, false); err != nil {
		t.Fatal(err)
	}
	l = mustAcquire(t, other, Scheduled)
	if _, err := other.Release(ctx, l.Owner, true); err != nil {
		t.Fatal(err)
	}
	// The next triggers come seconds later: move the completion back two
	// seconds, though not out of its UTC day (the period).
	b.exec(t, `UPDATE core_update_lock SET last_completed_at = greatest(last_completed_at - interval '2 seconds',
		date_trunc('day', last_completed_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')`)
	wantOutcome(t, b.m, Scheduled, Skipped)
	wantOutcome(t, other, Scheduled, Skipped)
	// Unscheduled triggers do not skip.
	mustAcquire(t, b.m, Operator)

	// A completion in the previous period does not skip this one.
	b.exec(t, "UPDATE core_update_lock SET owner = NULL, expires_at = NULL, last_completed_at = clock_timestamp() - interval '1 day'")
	mustAcquire(t, other, Scheduled)
}

// A completion stamped by a holder whose lease had expired does not count.
func TestReleaseAfterExpiryDoesNotComplete(t *testing.T) {
	t.Parallel()
	b := setup(t, Timings(testkit.Timings()))
	l := mustAcquire(t, b.m, Scheduled)
	b.expire(t)
	if _, err := b.m.Release(context.Background(), l.Owner, true); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, b.m, Scheduled)
}

// Property 8: the server's clock does not matter. The same script of
// operations gives the same answers with the process clock hours ahead or
// behind.
func TestProcessClockSkewChangesNothing(t *testing.T) {
	t.Parallel()
	script := func(t *testing.T, offset time.Duration) []string {
		timings := Timings(testkit.Timings())
		timings.Cooldown = 60 * time.Second
		clock := newFakeClock(time.Now().Add(offset))
		b := setup(t, timings, WithClock(clock))
		ctx := context.Background()
		var log []string
		note := func(a Acquisition, err error) {
			if err != nil {
				t.Fatal(err)
			}
			// The cooldown left depends on how long the script took; only
			// "about a minute" is part of the answer.
			log = append(log, fmt.Sprintf("%s/%v", a.Outcome, a.RetryAfter > 50*time.Second))
		}
		a, err := b.m.Acquire(ctx, Manual)
		note(a, err)
		note(b.m.Acquire(ctx, Operator))
		hbCtx, hb := b.m.StartHeartbeat(ctx, a.Lease)
		for range 3 { // three renewals, each answered before the next
			clock.waitArmed(t, 2)
			clock.Advance(timings.Heartbeat)
		}
		clock.waitArmed(t, 2)
		log = append(log, fmt.Sprintf("heartbeat-ok=%v", hbCtx.Err() == nil))
		hb.Stop()
		if err := b.m.Renew(ctx, a.Lease.Owner); err != nil {
			log = append(log, "renew:"+err.Error())
		} else {
			log = append(log, "renew:ok")
		}
		released, err := b.m.Release(ctx, a.Lease.Owner, true)
		log = append(log, fmt.Sprintf("release:%v:%v", released, err))
		note(b.m.Acquire(ctx, Manual))
		note(b.m.Acquire(ctx, Scheduled))
		return log
	}
	base := fmt.Sprint(script(t, 0))
	want := "[acquired/false busy/false heartbeat-ok=true renew:ok release:true:<nil> cooldown/true skipped/false]"
	if base != want {
		t.Fatalf("unskewed script = %s, want %s", base, want)
	}
	for _, offset := range []time.Duration{-7 * time.Hour, 9 * time.Hour} {
		if got := fmt.Sprint(script(t, offset)); got != base {
			t.Errorf("clock skewed by %s: %s, want %s", offset, got, base)
		}
	}
}

// poolOf is a tiny helper for tests that need a pool they may close.
func poolOf(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A fenced write that cannot reach the database cannot confirm the lease:
// like a failed renewal, it tells the holder to stop (ErrLeaseLost).
func TestFencedWriteWithDatabaseUnreachableIsLeaseLost(t *testing.T) {
	t.Parallel()
	b := setup(t, Timings(testkit.Timings()))
	pool := poolOf(t, b.db.URL)
	m, err := New(store.New(pool), b.m.timings)
	if err != nil {
		t.Fatal(err)
	}
	l := mustAcquire(t, m, Operator)
	pool.Close()
	err = m.WithLease(context.Background(), l.Owner, func(*store.Tx) error { return nil })
	if !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("fenced write with the database unreachable: %v, want ErrLeaseLost", err)
	}
}
