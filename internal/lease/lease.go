package lease

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// ErrLeaseLost means this process no longer holds the lease: it expired, was
// taken over, or could not be confirmed. Nothing was written.
var ErrLeaseLost = errors.New("update check lease lost")

// Name is the lease row every check competes for.
const Name = "check"

// Trigger says why a check wants the lease; it decides which rules apply
// (readmodel.Trigger, the one vocabulary).
type Trigger = readmodel.Trigger

// The triggers.
const (
	// Scheduled runs once per period: skipped when a check completed since
	// the period began (see WithPeriodStart).
	Scheduled = readmodel.TriggerScheduled
	// Manual is the AdminCP button and `upcheck check --manual`: subject to
	// the cooldown, which it stamps when it acquires.
	Manual = readmodel.TriggerManual
	// Operator is `upcheck check` without --manual: no cooldown, no skip.
	Operator = readmodel.TriggerOperator
	// Import is a document imported by hand (`upcheck source import`, the
	// Sources page's upload form): no cooldown, no skip, and its release
	// completes no period, since it checked no publisher.
	Import = readmodel.TriggerImport
)

// Outcome is the answer to an acquire.
type Outcome string

// The outcomes.
const (
	Acquired Outcome = "acquired"
	Busy     Outcome = Outcome(readmodel.CheckBusy)
	Cooldown Outcome = Outcome(readmodel.CheckCooldown)
	Skipped  Outcome = Outcome(readmodel.CheckSkipped)
)

// Timings are the lease's durations. Production uses DefaultTimings; tests
// shorten them through UPCHECK_TEST_TIMINGS.
type Timings struct {
	Lease     time.Duration // how long an acquisition or renewal holds
	Heartbeat time.Duration // pause between one renewal's answer and the next
	Cooldown  time.Duration // minimum time between two manual acquisitions
	// Period is the period of a scheduled acquisition that names no start
	// (WithPeriodStart): the window of this length, aligned to the Unix
	// epoch, that contains the database's now.
	Period time.Duration
	// TxTimeout bounds lock waits, statements and idleness inside lease
	// transactions; zero derives it from Lease.
	TxTimeout time.Duration
}

// DefaultTimings are the production constants.
func DefaultTimings() Timings {
	return Timings{Lease: 5 * time.Minute, Heartbeat: time.Minute, Cooldown: readmodel.ManualCooldown, Period: 24 * time.Hour}
}

// txTimeout is well below the lease so that a holder stuck inside a fenced
// transaction is cut off long before its lease would run out.
func (t Timings) txTimeout() time.Duration {
	if t.TxTimeout > 0 {
		return t.TxTimeout
	}
	return min(max(t.Lease/3, 250*time.Millisecond), 10*time.Second)
}

// trustWindow is how long after a successful renewal was sent this process
// may act as the holder: the lease less a margin for clock rate differences
// and the time the answer took to travel.
func (t Timings) trustWindow() time.Duration { return t.Lease - t.Lease/10 }

// Validate reports timings that cannot work together.
func (t Timings) Validate() error {
	switch {
	case t.Lease <= 0 || t.Heartbeat <= 0 || t.Cooldown < 0 || t.Period <= 0:
		return fmt.Errorf("lease timings must be positive (lease %s, heartbeat %s, cooldown %s, period %s)", t.Lease, t.Heartbeat, t.Cooldown, t.Period)
	case t.Heartbeat >= t.trustWindow():
		return fmt.Errorf("heartbeat %s must be shorter than the lease's trust window %s", t.Heartbeat, t.trustWindow())
	}
	return nil
}

// Lease is a held lease.
type Lease struct {
	Owner uuid.UUID
	Epoch int64
	// sentAt is when the acquisition was sent (in a Heartbeat's Lease, the
	// last confirmed renewal): the trust window and the expiry count from
	// there.
	sentAt time.Time
}

// Acquisition is the result of Acquire.
type Acquisition struct {
	Outcome    Outcome
	Lease      Lease         // set when Outcome is Acquired
	RetryAfter time.Duration // set when Outcome is Cooldown, whole seconds
}

// Observer hears the outcome of each acquisition and renewal (metrics).
type Observer interface {
	LeaseAcquire(result string)
	LeaseRenew(result string)
}

type noObserver struct{}

func (noObserver) LeaseAcquire(string) {}
func (noObserver) LeaseRenew(string)   {}

// Manager runs the lease statements against one database.
type Manager struct {
	store    *store.Store
	timings  Timings
	key      int64
	clock    Clock
	logger   *slog.Logger
	observer Observer
	held     func(time.Duration) // how long a WithLease or WithLock transaction held the lock
}

// Option configures a Manager.
type Option func(*Manager)

// WithClock replaces the process clock (tests skew it, or advance it step
// by step).
func WithClock(c Clock) Option { return func(m *Manager) { m.clock = c } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(m *Manager) { m.logger = l } }

// WithObserver reports acquisitions and renewals to o.
func WithObserver(o Observer) Option { return func(m *Manager) { m.observer = o } }

// WithLockHeld reports, after each WithLease and WithLock transaction, how
// long it held the lease's lock: from the moment the lock was granted to
// the end of the commit. Every renewal and every other writer waits that
// long; make bench reports the longest.
func WithLockHeld(f func(time.Duration)) Option { return func(m *Manager) { m.held = f } }

// New returns a Manager for the check lease.
func New(st *store.Store, timings Timings, opts ...Option) (*Manager, error) {
	if err := timings.Validate(); err != nil {
		return nil, err
	}
	m := &Manager{store: st, timings: timings, key: advisoryKey(Name), clock: systemClock{}, logger: slog.New(slog.DiscardHandler), observer: noObserver{}}
	for _, o := range opts {
		o(m)
	}
	return m, nil
}

// Timings returns the manager's timings.
func (m *Manager) Timings() Timings { return m.timings }

// advisoryKey maps the lease name to the bigint pg_advisory_xact_lock takes,
// in a namespace unlikely to collide with other users of advisory locks.
func advisoryKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("upcheck:lease:" + name))
	return int64(h.Sum64())
}

// begin sets the lease transaction's timeouts and takes the advisory lock.
func (m *Manager) begin(ctx context.Context, tx *store.Tx) error {
	d := m.timings.txTimeout()
	return tx.LeaseBegin(ctx, m.key, d, d, d)
}

// fence is begin plus the row lock and the ownership check, in one round
// trip; store.ErrLeaseNotHeld means owner does not hold a live lease.
func (m *Manager) fence(ctx context.Context, tx *store.Tx, owner uuid.UUID) error {
	d := m.timings.txTimeout()
	_, err := tx.LeaseBeginFence(ctx, m.key, Name, owner, d, d, d)
	return err
}

type periodStartKey struct{}

// WithPeriodStart returns a context under which a Scheduled acquisition's
// period begins at start: it is skipped only when a check completed at or
// after start. The scheduler gives its fire time this way so that it travels
// through RunLockedUpdateCheck, the one way a check runs, unchanged.
func WithPeriodStart(ctx context.Context, start time.Time) context.Context {
	return context.WithValue(ctx, periodStartKey{}, start)
}

// Acquire tries to take the lease for trigger. Busy, Cooldown and Skipped
// are answers, not errors; an error means the database could not be asked.
func (m *Manager) Acquire(ctx context.Context, trigger Trigger) (Acquisition, error) {
	sent := m.clock.Now()
	owner := uuid.New()
	var periodStart *time.Time
	if start, ok := ctx.Value(periodStartKey{}).(time.Time); ok {
		periodStart = &start
	}
	var res Acquisition
	err := m.store.WithTx(ctx, func(tx *store.Tx) error {
		if err := m.begin(ctx, tx); err != nil {
			return err
		}
		row, err := tx.LeaseGetForUpdate(ctx, Name, m.timings.Period, periodStart, m.timings.Cooldown)
		if err != nil {
			return err
		}
		switch {
		case trigger == Scheduled && row.CompletedInPeriod:
			res = Acquisition{Outcome: Skipped}
			return nil
		case row.Live:
			res = Acquisition{Outcome: Busy}
			return nil
		case trigger == Manual && row.CooldownLeft > 0:
			res = Acquisition{Outcome: Cooldown, RetryAfter: time.Duration(row.CooldownLeft) * time.Second}
			return nil
		}
		epoch, err := tx.LeaseTake(ctx, Name, store.LeaseTake{
			Owner: owner, Trigger: string(trigger), Manual: trigger == Manual,
			Lease: m.timings.Lease, Cooldown: m.timings.Cooldown,
		})
		if errors.Is(err, store.ErrNotFound) {
			// Unreachable while the locks above are held; the UPDATE's own
			// condition is the second line of defence.
			res = Acquisition{Outcome: Busy}
			return nil
		}
		if err != nil {
			return err
		}
		res = Acquisition{Outcome: Acquired, Lease: Lease{Owner: owner, Epoch: epoch, sentAt: sent}}
		return nil
	})
	if errors.Is(err, store.ErrLockTimeout) {
		// Another lease transaction holds the locks for longer than ours may
		// wait: a holder is writing (or is stuck and about to be cut off).
		res, err = Acquisition{Outcome: Busy}, nil
	}
	if err != nil {
		m.observer.LeaseAcquire("error")
		return Acquisition{}, fmt.Errorf("acquire lease: %w", err)
	}
	m.observer.LeaseAcquire(string(res.Outcome))
	m.logger.DebugContext(ctx, "lease acquire", "trigger", trigger, "outcome", res.Outcome, "epoch", res.Lease.Epoch)
	return res, nil
}

// Renew extends owner's lease by the full lease length. It returns
// ErrLeaseLost when owner no longer holds a live lease: an owner whose lease
// ran out can never bring it back.
func (m *Manager) Renew(ctx context.Context, owner uuid.UUID) error {
	err := m.store.WithTx(ctx, func(tx *store.Tx) error {
		if err := m.fence(ctx, tx, owner); err != nil {
			return err
		}
		_, err := tx.LeaseRenew(ctx, Name, owner, m.timings.Lease)
		return err
	})
	if errors.Is(err, store.ErrLeaseNotHeld) {
		m.observer.LeaseRenew("lost")
		return ErrLeaseLost
	}
	if err != nil {
		m.observer.LeaseRenew("error")
		return fmt.Errorf("renew lease: %w", err)
	}
	m.observer.LeaseRenew("ok")
	return nil
}

// Release frees the lease if owner still holds it and reports whether it
// did. completed records that the check finished, which makes later
// scheduled triggers in the same period skip. A late release from an old
// owner changes nothing.
func (m *Manager) Release(ctx context.Context, owner uuid.UUID, completed bool) (bool, error) {
	var released bool
	err := m.store.WithTx(ctx, func(tx *store.Tx) error {
		var err error
		released, err = m.release(ctx, tx, owner, completed)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("release lease: %w", err)
	}
	return released, nil
}

// release is Release's statements in tx: the locks in their order, then
// the UPDATE, which frees the lease only while owner holds it.
func (m *Manager) release(ctx context.Context, tx *store.Tx, owner uuid.UUID, completed bool) (bool, error) {
	if err := m.begin(ctx, tx); err != nil {
		return false, err
	}
	if _, err := tx.LeaseGetForUpdate(ctx, Name, m.timings.Period, nil, m.timings.Cooldown); err != nil {
		return false, err
	}
	return tx.LeaseRelease(ctx, Name, owner, completed)
}

// WithLease runs fn in one fenced transaction: it commits only if owner holds
// a live lease, checked under the lease's locks, which stay held until the
// commit. Otherwise it returns ErrLeaseLost and fn's writes are rolled back
// (fn is not called at all when the check fails up front).
func (m *Manager) WithLease(ctx context.Context, owner uuid.UUID, fn func(tx *store.Tx) error) error {
	var locked time.Time
	err := m.store.WithTx(ctx, func(tx *store.Tx) error {
		check := m.fence
		if fenceOff { // the fault workload's control only (fence_off.go)
			check = func(ctx context.Context, tx *store.Tx, _ uuid.UUID) error { return m.begin(ctx, tx) }
		}
		if err := check(ctx, tx, owner); err != nil {
			if errors.Is(err, store.ErrLeaseNotHeld) {
				return ErrLeaseLost
			}
			return err
		}
		locked = m.clock.Now()
		return fn(tx)
	})
	m.reportHeld(locked)
	return m.fencedError(ctx, err)
}

// SendFenced sends b behind the fence, in one round trip and one implicit
// transaction: the fence runs first, under the lease's locks, and raises
// when owner does not hold a live lease, which aborts the transaction before
// any write of b runs. So b commits only under owner's lease, and the locks
// are held until it has. The errors are WithLease's: ErrLeaseLost when the
// lease is not held (nothing was written), a statement timeout worded as
// such, ErrLeaseLost when the database could not be reached; any other
// error of b's statements (store.ErrEventsToQueue, say) comes back as it is,
// and nothing of b was written.
func (m *Manager) SendFenced(ctx context.Context, owner uuid.UUID, b *store.Batch) error {
	d := m.timings.txTimeout()
	if !fenceOff { // off in the fault workload's control only (fence_off.go)
		b.Fence(m.key, Name, owner, d, d, d)
	}
	// The lock is taken after the batch was sent and held to its end: the
	// hold reported is at most the batch's round trip.
	sent := m.clock.Now()
	err := m.store.SendBatch(ctx, b)
	m.reportHeld(sent)
	return m.fencedError(ctx, err)
}

// fencedError words the error of a fenced write.
func (m *Manager) fencedError(ctx context.Context, err error) error {
	switch {
	case err == nil, errors.Is(err, ErrLeaseLost):
		return err
	case errors.Is(err, store.ErrLeaseNotHeld):
		return ErrLeaseLost
	case errors.Is(err, store.ErrStatementTimeout) && ctx.Err() == nil:
		// The database answered: the write was too slow, the lease is not
		// in question. Say so rather than "lease lost".
		return fmt.Errorf("fenced write: a statement ran past the %s limit of lease transactions: %w", m.timings.txTimeout(), err)
	case store.IsUnavailable(err):
		// The lease can no longer be confirmed: as for a failed renewal,
		// the holder must stop.
		return fmt.Errorf("%w: database unreachable during a fenced write: %w", ErrLeaseLost, err)
	}
	return fmt.Errorf("fenced write: %w", err)
}

// WithLock runs fn in a transaction that holds the lease's advisory lock
// without owning the lease. Writes that must not interleave with a check's
// fenced writes (a manifest sync re-evaluating results) use it.
func (m *Manager) WithLock(ctx context.Context, fn func(tx *store.Tx) error) error {
	var locked time.Time
	err := m.store.WithTx(ctx, func(tx *store.Tx) error {
		if err := m.begin(ctx, tx); err != nil {
			return err
		}
		locked = m.clock.Now()
		return fn(tx)
	})
	m.reportHeld(locked)
	return err
}

// reportHeld reports a hold that began at locked (zero: never locked).
func (m *Manager) reportHeld(locked time.Time) {
	if m.held != nil && !locked.IsZero() {
		m.held(m.clock.Now().Sub(locked))
	}
}

// Status reads the lease for display, without taking any lock. Its
// CompletionOlder says whether the last completed check is older than
// maxAge, judged on the database clock.
func (m *Manager) Status(ctx context.Context, maxAge time.Duration) (store.LeaseStatus, error) {
	return m.store.LeaseStatus(ctx, Name, maxAge)
}
