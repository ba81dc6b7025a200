package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/db"
)

// ErrLeaseNotHeld means the owner named does not hold a live lease: another
// owner took it, it expired, or it was released. It is an answer about the
// lease, not a missing row (ErrNotFound), and internal/lease turns it into
// its ErrLeaseLost.
var ErrLeaseNotHeld = errors.New("lease not held by this owner")

// LeaseRow is the locked lease row as acquire sees it, judged by the
// database clock at the moment the row lock was granted.
type LeaseRow struct {
	Owner             uuid.UUID // uuid.Nil when released
	Epoch             int64
	Live              bool  // an owner holds it and it has not expired
	CompletedInPeriod bool  // a check completed since the period's start (see LeaseGetForUpdate)
	CooldownLeft      int64 // whole seconds until a manual acquire may succeed
}

// LeaseTake is one acquisition's parameters.
type LeaseTake struct {
	Owner    uuid.UUID
	Trigger  string
	Manual   bool
	Lease    time.Duration
	Cooldown time.Duration
}

// LeaseStatus is the lease as a status display sees it (no lock taken).
type LeaseStatus struct {
	Owner           uuid.UUID
	Epoch           int64
	Live            bool
	ExpiresAt       *time.Time
	LastManualAt    *time.Time
	LastCompletedAt *time.Time
	Trigger         string
	// CompletionOlder: no check completed within the max age asked for.
	CompletionOlder bool
}

// LeaseBegin opens a lease transaction: it bounds lock waits, statements and
// idleness, then takes the advisory lock on the lease, in one round trip. The
// row lock comes next, from LeaseGetForUpdate or the UPDATEs,
// always in that order so that no two lease transactions can deadlock.
func (t *Tx) LeaseBegin(ctx context.Context, key int64, lockTimeout, statementTimeout, idleTimeout time.Duration) error {
	err := t.q.LeaseBegin(ctx, t.tx, db.LeaseBeginParams{
		Key:              key,
		LockTimeout:      pgDuration(lockTimeout),
		StatementTimeout: pgDuration(statementTimeout),
		IdleTimeout:      pgDuration(idleTimeout),
	})
	if err != nil {
		return mapError(fmt.Errorf("lease advisory lock: %w", err))
	}
	return nil
}

// LeaseBeginFence is LeaseBegin followed by the row lock and the ownership
// check (owner, expires_at > clock_timestamp()), in one round trip:
// the fenced write's whole preamble. It returns the held lease's epoch, or
// ErrLeaseNotHeld. Batch.Fence sends the same statement first in a batch.
func (t *Tx) LeaseBeginFence(ctx context.Context, key int64, name string, owner uuid.UUID, lockTimeout, statementTimeout, idleTimeout time.Duration) (int64, error) {
	epoch, err := t.q.LeaseBeginFence(ctx, t.tx, db.LeaseBeginFenceParams{
		Key: key, Name: name, Owner: owner,
		LockTimeout:      pgDuration(lockTimeout),
		StatementTimeout: pgDuration(statementTimeout),
		IdleTimeout:      pgDuration(idleTimeout),
	})
	if err != nil {
		// upcheck_lease_fence raises UL001 when owner's
		// lease is not live: mapError makes that ErrLeaseNotHeld.
		return 0, mapError(fmt.Errorf("lease fence: %w", err))
	}
	// The query turns a null epoch into -1 (epochs start at 1): the fence
	// raises instead of answering null, and -1 would be refused here too.
	if epoch < 1 {
		return 0, ErrLeaseNotHeld
	}
	return epoch, nil
}

// LeaseGetForUpdate locks the lease row and reports its state. The period
// starts at periodStart when it is not nil; otherwise at the start of the
// window of length period, aligned to the Unix epoch, that contains the
// database's now.
func (t *Tx) LeaseGetForUpdate(ctx context.Context, name string, period time.Duration, periodStart *time.Time, cooldown time.Duration) (LeaseRow, error) {
	r, err := t.q.LeaseGetForUpdate(ctx, t.tx, db.LeaseGetForUpdateParams{
		Name:            name,
		PeriodStart:     periodStart,
		PeriodSeconds:   period.Seconds(),
		CooldownSeconds: cooldown.Seconds(),
	})
	if err != nil {
		return LeaseRow{}, mapError(fmt.Errorf("lock lease row: %w", err))
	}
	return LeaseRow{
		Owner:             r.Owner.UUID,
		Epoch:             r.Epoch,
		Live:              r.Live,
		CompletedInPeriod: r.CompletedInPeriod,
		CooldownLeft:      r.CooldownLeft,
	}, nil
}

// LeaseTake takes a free lease; ErrNotFound means it was not free.
func (t *Tx) LeaseTake(ctx context.Context, name string, p LeaseTake) (epoch int64, err error) {
	epoch, err = t.q.LeaseTake(ctx, t.tx, db.LeaseTakeParams{
		Name:            name,
		Owner:           p.Owner,
		Trigger:         p.Trigger,
		Manual:          p.Manual,
		LeaseSeconds:    p.Lease.Seconds(),
		CooldownSeconds: p.Cooldown.Seconds(),
	})
	return epoch, mapError(err)
}

// LeaseRenew extends a live lease held by owner; ErrLeaseNotHeld means it is
// not (or no longer) owner's.
func (t *Tx) LeaseRenew(ctx context.Context, name string, owner uuid.UUID, lease time.Duration) (epoch int64, err error) {
	epoch, err = t.q.LeaseRenew(ctx, t.tx, db.LeaseRenewParams{Name: name, Owner: owner, LeaseSeconds: lease.Seconds()})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, ErrLeaseNotHeld
	}
	return epoch, mapError(err)
}

// LeaseRelease frees the lease if owner still holds it; completed stamps the
// period's completion when the lease had not expired.
func (t *Tx) LeaseRelease(ctx context.Context, name string, owner uuid.UUID, completed bool) (bool, error) {
	n, err := t.q.LeaseRelease(ctx, t.tx, db.LeaseReleaseParams{Name: name, Owner: owner, Completed: completed})
	return n == 1, mapError(err)
}

// LeaseStatus reads the lease without locking it; CompletionOlder compares
// the last completion with maxAge on the database clock.
func (e *Executor) LeaseStatus(ctx context.Context, name string, maxAge time.Duration) (LeaseStatus, error) {
	r, err := e.q.LeaseState(ctx, e.dbtx, db.LeaseStateParams{Name: name, MaxAgeSeconds: maxAge.Seconds()})
	if err != nil {
		return LeaseStatus{}, mapError(fmt.Errorf("read lease: %w", err))
	}
	return LeaseStatus{
		Owner:           r.Owner.UUID,
		Epoch:           r.Epoch,
		Live:            r.Live,
		ExpiresAt:       r.ExpiresAt,
		LastManualAt:    r.LastManualAt,
		LastCompletedAt: r.LastCompletedAt,
		Trigger:         deref(r.Trigger),
		CompletionOlder: r.CompletionOlder,
	}, nil
}

// pgDuration formats d for a PostgreSQL time setting, in milliseconds
// (rounded up so a short but non-zero timeout never becomes 0, "no limit").
func pgDuration(d time.Duration) string {
	ms := (d + time.Millisecond - 1) / time.Millisecond
	return fmt.Sprintf("%dms", ms)
}
