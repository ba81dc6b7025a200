package lease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/upcheck/upcheck/internal/store"
)

// SettleGrace is how long Settle goes on trying once its context is done
// (the process is shutting down): a shutdown waits for it at most this
// long, then leaves the lease to expire by itself.
const SettleGrace = 5 * time.Second

// settleAttempt bounds one attempt, connecting included: the statements
// themselves are bounded by the lease transaction's timeouts.
const settleAttempt = 10 * time.Second

// settleRetry is the first pause between two attempts; it doubles up to
// settleRetryMax.
const (
	settleRetry    = 50 * time.Millisecond
	settleRetryMax = time.Second
)

// Expiry is the instant, on the manager's clock, until which l cannot have
// expired if it is still held: the send of its acquisition or of its last
// confirmed renewal (Heartbeat.Lease) plus the lease. The database
// extended the lease at some moment after that send, never before.
func (m *Manager) Expiry(l Lease) time.Time { return l.sentAt.Add(m.timings.Lease) }

// Settle ends a check's hold: it releases l (as Release does, completed
// stamping the period's completion) and runs record (nil: nothing to
// record) in the same transaction, under the attempt's context, so that the run's end and the lease's
// release commit together. A check ends this way also when it lost the
// database: then its context is done and the database does not answer, so
// Settle runs under context.WithoutCancel(ctx) with its own deadlines and
// tries again, with a growing pause, for as long as the database does not
// answer (store.IsUnavailable) or a lock wait times out, until the lease
// could have expired (Expiry). Past that instant the lease is not l's to
// give back any more; the release names l's owner, so it could never free
// a successor's lease anyway, but the run is then shown as abandoned and a
// successor may be writing. Once ctx is done (shutdown), Settle tries for
// at most SettleGrace more.
//
// When record fails with an answer of the database (not an outage), the
// lease is released alone and record's error returned: a run that cannot be
// recorded must not keep the lease. attempts counts the transactions tried.
func (m *Manager) Settle(ctx context.Context, l Lease, completed bool, record func(context.Context, *store.Tx) error) (released bool, attempts int, err error) {
	until := m.Expiry(l)
	pause := settleRetry
	var refused error // record's error, when the database refused it
	for {
		attempts++
		released, err = m.settleOnce(ctx, l.Owner, completed, record, until)
		if err != nil && record != nil && !settleAgain(err) {
			// record was refused: give the lease back without it, tried
			// again like any release while the database does not answer.
			refused, record = err, nil
			continue
		}
		if err == nil || !settleAgain(err) {
			return released, attempts, errors.Join(refused, err)
		}
		if ctx.Err() != nil {
			if grace := m.clock.Now().Add(SettleGrace); grace.Before(until) {
				until = grace
			}
		}
		left := until.Sub(m.clock.Now())
		if left <= 0 {
			return false, attempts, errors.Join(refused, fmt.Errorf("gave up after %d attempts, the lease could have expired: %w", attempts, err))
		}
		m.logger.DebugContext(ctx, "lease settle failed; retrying", "owner", l.Owner, "attempt", attempts, "error", err)
		t := m.clock.NewTimer(min(pause, left))
		shutdown := ctx.Done()
		if ctx.Err() != nil {
			shutdown = nil // already counted: pause as usual
		}
		select {
		case <-t.C():
		case <-shutdown:
			// Shutting down: the grace applies from now, and the next
			// attempt comes at once.
		}
		t.Stop()
		pause = min(2*pause, settleRetryMax)
	}
}

// settleOnce is one attempt of Settle, bounded by until and settleAttempt.
func (m *Manager) settleOnce(ctx context.Context, owner uuid.UUID, completed bool, record func(context.Context, *store.Tx) error, until time.Time) (bool, error) {
	d := min(until.Sub(m.clock.Now()), settleAttempt)
	if d <= 0 {
		d = m.timings.txTimeout() // a last attempt, however short the lease left
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d)
	defer cancel()
	var released bool
	err := m.store.WithTx(actx, func(tx *store.Tx) error {
		var err error
		if released, err = m.release(actx, tx, owner, completed); err != nil || record == nil {
			return err
		}
		return record(actx, tx)
	})
	if err != nil {
		return false, fmt.Errorf("settle lease: %w", err)
	}
	return released, nil
}

// settleAgain: the database did not answer, or a lock wait timed out; the
// next attempt may succeed.
func settleAgain(err error) bool {
	return store.IsUnavailable(err) || errors.Is(err, store.ErrLockTimeout)
}
