package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/store"
)

const testLeaseKey = 0x75706368_74657374

// inTx runs fn in a transaction of its own connection and rolls it back.
func (f *fdb) inTx(t *testing.T, fn func(tx pgx.Tx)) {
	t.Helper()
	ctx := context.Background()
	tx, err := f.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	fn(tx)
}

// advisoryLockFree says whether another session could take the lease's
// advisory lock now.
func (f *fdb) advisoryLockFree(t *testing.T) bool {
	t.Helper()
	return f.bool(t, `SELECT pg_try_advisory_xact_lock($1)`, int64(testLeaseKey))
}

// The preamble sets the three timeouts for the transaction alone and takes
// the lease's advisory lock until the transaction ends.
func testLeaseBegin(t *testing.T, f *fdb) {
	ctx := context.Background()
	f.inTx(t, func(tx pgx.Tx) {
		if _, err := tx.Exec(ctx, `SELECT upcheck_lease_begin($1, '1500ms', '2500ms', '3500ms')`, int64(testLeaseKey)); err != nil {
			t.Fatal(err)
		}
		var lock, stmt, idle string
		if err := tx.QueryRow(ctx, `SELECT current_setting('lock_timeout'), current_setting('statement_timeout'),
			current_setting('idle_in_transaction_session_timeout')`).Scan(&lock, &stmt, &idle); err != nil {
			t.Fatal(err)
		}
		if lock != "1500ms" || stmt != "2500ms" || idle != "3500ms" {
			t.Errorf("in the transaction: lock_timeout %s, statement_timeout %s, idle timeout %s; want 1500ms, 2500ms, 3500ms", lock, stmt, idle)
		}
		if f.advisoryLockFree(t) {
			t.Error("another session took the lease's advisory lock while the preamble's transaction is open")
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	})
	if !f.advisoryLockFree(t) {
		t.Error("the advisory lock outlived the transaction")
	}
	f.inTx(t, func(tx pgx.Tx) {
		var lock string
		if err := tx.QueryRow(ctx, `SELECT current_setting('lock_timeout')`).Scan(&lock); err != nil {
			t.Fatal(err)
		}
		if lock == "1500ms" {
			t.Error("lock_timeout outlived the transaction that set it")
		}
	})
}

// fence calls upcheck_lease_fence for owner in tx.
func fence(ctx context.Context, tx pgx.Tx, owner uuid.UUID) (int64, error) {
	var epoch int64
	err := tx.QueryRow(ctx, `SELECT upcheck_lease_fence($1, 'check', $2, '1s', '2s', '3s')`, int64(testLeaseKey), owner).Scan(&epoch)
	return epoch, err
}

// The fence answers the epoch of its owner's live lease, holding the
// advisory lock and the row's lock; otherwise (another owner, a released
// lease, one that ran out by the wall clock, even within a transaction
// whose start it would outlive) it raises UL001.
func testLeaseFence(t *testing.T, f *fdb) {
	ctx := context.Background()
	owner := uuid.New()
	f.exec(t, `UPDATE core_update_lock SET owner = $1, epoch = 7, expires_at = clock_timestamp() + interval '1 minute' WHERE name = 'check'`, owner)
	f.inTx(t, func(tx pgx.Tx) {
		epoch, err := fence(ctx, tx, owner)
		if err != nil || epoch != 7 {
			t.Fatalf("fence of the live owner: %d, %v; want epoch 7", epoch, err)
		}
		var stmt string
		if err := tx.QueryRow(ctx, `SELECT current_setting('statement_timeout')`).Scan(&stmt); err != nil || stmt != "2s" {
			t.Errorf("statement_timeout after the fence: %q, %v; want 2s", stmt, err)
		}
		if f.advisoryLockFree(t) {
			t.Error("the fence does not hold the advisory lock")
		}
		_, err = f.Pool.Exec(ctx, `SELECT 1 FROM core_update_lock WHERE name = 'check' FOR UPDATE NOWAIT`)
		if sqlState(err) == "" {
			t.Error("another session locked the lease's row behind the fence")
		}
	})
	for what, setup := range map[string]string{
		"another owner's lease": `UPDATE core_update_lock SET owner = gen_random_uuid() WHERE name = 'check'`,
		"a released lease":      `UPDATE core_update_lock SET owner = NULL, expires_at = NULL WHERE name = 'check'`,
		"an expired lease":      `UPDATE core_update_lock SET owner = $1, expires_at = clock_timestamp() - interval '1 millisecond' WHERE name = 'check'`,
	} {
		f.exec(t, `UPDATE core_update_lock SET owner = $1, expires_at = clock_timestamp() + interval '1 minute' WHERE name = 'check'`, owner)
		var args []any
		if what == "an expired lease" {
			args = append(args, owner)
		}
		f.exec(t, setup, args...)
		f.inTx(t, func(tx pgx.Tx) {
			if epoch, err := fence(ctx, tx, owner); sqlState(err) != store.SQLStateLeaseNotHeld {
				t.Errorf("fence of %s: %d, %v; want SQLSTATE %s", what, epoch, err, store.SQLStateLeaseNotHeld)
			}
		})
	}
	// Judged by clock_timestamp(), never now(): a lease that ends after
	// the transaction began but before the fence runs is not held.
	f.inTx(t, func(tx pgx.Tx) {
		var expires time.Time
		if err := tx.QueryRow(ctx, `UPDATE core_update_lock SET owner = $1, expires_at = clock_timestamp() WHERE name = 'check' RETURNING expires_at`, owner).Scan(&expires); err != nil {
			t.Fatal(err)
		}
		var afterStart bool
		if err := tx.QueryRow(ctx, `SELECT $1::timestamptz > now()`, expires).Scan(&afterStart); err != nil || !afterStart {
			t.Fatalf("the lease does not end after the transaction's start (%v): nothing to tell now() from clock_timestamp()", err)
		}
		if epoch, err := fence(ctx, tx, owner); sqlState(err) != store.SQLStateLeaseNotHeld {
			t.Errorf("fence of a lease that ended within the transaction: %d, %v; want SQLSTATE %s", epoch, err, store.SQLStateLeaseNotHeld)
		}
	})
}

// Every change of epoch records the acquisition and the row it replaced;
// a renewal or a release (same epoch) records nothing.
func testLeaseAcquired(t *testing.T, f *fdb) {
	first, second := uuid.New(), uuid.New()
	f.exec(t, `UPDATE core_update_lock SET owner = $1, epoch = epoch + 1, trigger = 'manual',
		acquired_at = clock_timestamp(), expires_at = clock_timestamp() + interval '5 minutes' WHERE name = 'check'`, first)
	f.exec(t, `UPDATE core_update_lock SET expires_at = expires_at + interval '1 minute' WHERE name = 'check'`) // a renewal
	// A takeover that leaves acquired_at unset is stamped with the clock.
	f.exec(t, `UPDATE core_update_lock SET owner = $1, epoch = epoch + 1, trigger = 'scheduled',
		acquired_at = NULL, expires_at = clock_timestamp() + interval '5 minutes' WHERE name = 'check'`, second)
	f.exec(t, `UPDATE core_update_lock SET owner = NULL, expires_at = NULL WHERE name = 'check'`) // a release
	if n := f.int(t, `SELECT count(*) FROM lease_acquisitions`); n != 2 {
		t.Fatalf("%d acquisitions recorded, want 2 (renewals and releases record none)", n)
	}
	var ok bool
	f.QueryRow(t, `SELECT owner = $1 AND trigger = 'manual' AND previous_owner IS NULL AND previous_epoch = 0
		AND previous_expires_at IS NULL AND acquired_at IS NOT NULL AND expires_at IS NOT NULL
		FROM lease_acquisitions WHERE epoch = 1`, first).Scan(&ok)
	if !ok {
		t.Error("the first acquisition does not record a released lease before it")
	}
	f.QueryRow(t, `SELECT a.owner = $1 AND a.trigger = 'scheduled' AND a.previous_owner = $2 AND a.previous_epoch = 1
		AND a.previous_expires_at = b.expires_at + interval '1 minute' AND a.acquired_at IS NOT NULL
		FROM lease_acquisitions a, lease_acquisitions b WHERE a.epoch = 2 AND b.epoch = 1`, second, first).Scan(&ok)
	if !ok {
		t.Error("the takeover does not record the renewed lease it replaced, or has no acquired_at")
	}
}
