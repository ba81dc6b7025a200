package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/upcheck/upcheck/internal/store"
)

// Renewer renews a held lease; *Manager is the production one.
type Renewer interface {
	Renew(ctx context.Context, owner uuid.UUID) error
}

// Heartbeat keeps a held lease alive while a check runs. See doc.go for the
// trust window.
type Heartbeat struct {
	renewer  Renewer
	lease    Lease     // its sentAt moves to each confirmed renewal's send
	owner    uuid.UUID // lease.Owner, read without the lease the loop rewrites
	interval time.Duration
	window   time.Duration
	clock    Clock
	logger   *slog.Logger

	parent context.Context
	cancel context.CancelCauseFunc
	stop   chan struct{}
	once   sync.Once
	done   chan struct{}
}

// StartHeartbeat starts renewing l and returns the context the check must
// run under: it is cancelled with a cause wrapping ErrLeaseLost as soon as
// the lease cannot be confirmed. Call Stop when the check ends.
func (m *Manager) StartHeartbeat(ctx context.Context, l Lease) (context.Context, *Heartbeat) {
	return startHeartbeat(ctx, m, l, m.timings.Heartbeat, m.timings.trustWindow(), m.clock, m.logger)
}

func startHeartbeat(ctx context.Context, r Renewer, l Lease, interval, window time.Duration, clock Clock, logger *slog.Logger) (context.Context, *Heartbeat) {
	checkCtx, cancel := context.WithCancelCause(ctx)
	h := &Heartbeat{
		renewer: r, lease: l, owner: l.Owner, interval: interval, window: window, clock: clock, logger: logger,
		parent: ctx, cancel: cancel, stop: make(chan struct{}), done: make(chan struct{}),
	}
	go h.run(l.sentAt.Add(window))
	return checkCtx, h
}

// Stop ends the heartbeat, waits for a renewal still on its way, and
// releases the check context (with no lease-lost cause if none was set).
// It is safe to call more than once.
func (h *Heartbeat) Stop() {
	h.once.Do(func() { close(h.stop) })
	<-h.done
	h.cancel(context.Canceled)
}

// Lease is the lease as the heartbeat last confirmed it: its trust and its
// expiry count from the send of the last renewal that succeeded (the
// acquisition's when none did). Call it after Stop; Manager.Settle bounds
// its retries by it.
func (h *Heartbeat) Lease() Lease {
	<-h.done
	return h.lease
}

// run is the heartbeat's only goroutine. trustUntil is the instant, on the
// process clock, after which the lease may have expired.
func (h *Heartbeat) run(trustUntil time.Time) {
	defer close(h.done)
	trust := h.clock.NewTimer(trustUntil.Sub(h.clock.Now()))
	defer trust.Stop()
	next := h.clock.NewTimer(h.interval)
	defer next.Stop()

	for {
		select {
		case <-h.stop:
			return
		case <-h.parent.Done():
			return
		case <-trust.C():
			h.lose(fmt.Errorf("%w: no renewal confirmed the lease within %s", ErrLeaseLost, h.window))
			return
		case <-next.C():
		}

		sent := h.clock.Now()
		trustExpired, err := h.renew(trust)
		switch {
		case h.parent.Err() != nil:
			return // shutting down: not a lost lease
		case trustExpired:
			return // renew has cancelled the check
		case errors.Is(err, store.ErrLockTimeout):
			// Another transaction held the lease's lock for longer than a
			// renewal may wait. The database did not say the lease is gone:
			// try again soon, as long as the trust window lasts (the trust
			// timer keeps running from the last renewal that succeeded).
			h.logger.Warn("lease renewal timed out waiting for a lock; retrying", "owner", h.owner, "error", err)
			next.Reset(h.retryDelay())
			continue
		case err != nil:
			h.lose(fmt.Errorf("%w: %w", ErrLeaseLost, err))
			return
		}
		// Trust counts from the send: the database extended the lease at
		// some moment after it, never before.
		trustUntil = sent.Add(h.window)
		h.lease.sentAt = sent // read after done is closed (Lease)
		trust.Reset(trustUntil.Sub(h.clock.Now()))
		next.Reset(h.interval)
	}
}

// renew runs one renewal, bounded by what is left of the trust window: the
// trust timer. If the window closes first, it cancels the check at once (a
// hung database must not keep it running) and the renewal, then still waits
// for the renewal to return so no goroutine outlives the heartbeat, and
// reports trustExpired.
func (h *Heartbeat) renew(trust Timer) (trustExpired bool, err error) {
	ctx, cancel := context.WithCancel(h.parent)
	defer cancel()
	answer := make(chan error, 1)
	go func() { answer <- h.renewer.Renew(ctx, h.owner) }()
	select {
	case err = <-answer:
		return false, err
	case <-trust.C():
		// Stop the check now; a hung database must not keep it running.
		h.lose(fmt.Errorf("%w: renewal did not answer within the trust window %s", ErrLeaseLost, h.window))
		cancel()
		<-answer
		return true, nil
	}
}

// retryDelay is the pause before a renewal is tried again after a lock
// wait timed out: short, since trust is running out.
func (h *Heartbeat) retryDelay() time.Duration { return max(h.interval/4, 10*time.Millisecond) }

// lose cancels the check with cause. The first cause wins.
func (h *Heartbeat) lose(cause error) {
	h.logger.Warn("update check lease lost", "owner", h.owner, "reason", cause.Error())
	h.cancel(cause)
}
