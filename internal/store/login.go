package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// LoginLimit is one throttling rule: more than MaxFailures attempts within
// Window lock the key for Lockout.
type LoginLimit struct {
	MaxFailures int
	Window      time.Duration
	Lockout     time.Duration
}

// LoginLockAudit is the audit row a lock of a key writes, in the statement
// that sets the lock: its action and detail (encoded as JSON), to which the
// database adds "attempts" (counted in the window) and "locked_until" (RFC
// 3339, UTC).
type LoginLockAudit struct {
	Action readmodel.AuditAction
	Detail map[string]any
}

// LoginAttempt is what LoginAttemptRegister decided.
type LoginAttempt struct {
	// RetryAfter is 0 when the attempt may go on, or how long the key stays
	// locked (whole seconds, at least one) when it may not.
	RetryAfter time.Duration
	// Locked is set when this attempt locked the key, and its lock was
	// audited.
	Locked bool
}

// LoginAttemptRegister counts one login attempt against key before its
// password is checked. The attempt that passes the limit sets the lock,
// writes audit (one row per lock) and is itself refused; an attempt while
// the key is locked changes nothing and is refused.
func (e *Executor) LoginAttemptRegister(ctx context.Context, key string, l LoginLimit, audit LoginLockAudit) (LoginAttempt, error) {
	detail, err := json.Marshal(audit.Detail)
	if err != nil {
		return LoginAttempt{}, fmt.Errorf("register login attempt: encode audit detail: %w", err)
	}
	r, err := e.q.LoginAttemptRegister(ctx, e.dbtx, db.LoginAttemptRegisterParams{
		Key: key, MaxFailures: int32(l.MaxFailures), WindowSeconds: l.Window.Seconds(), LockoutSeconds: l.Lockout.Seconds(),
		AuditAction: string(audit.Action), AuditDetail: detail,
	})
	if errors.Is(err, pgx.ErrNoRows) {
		// Locked already: nothing was counted. The lock may have ended
		// since; the attempt stays refused, for at least a second.
		secs, err := e.q.LoginAttemptLockedFor(ctx, e.dbtx, key)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return LoginAttempt{}, mapError(fmt.Errorf("read login lock: %w", err))
		}
		return LoginAttempt{RetryAfter: time.Duration(max(secs, 1)) * time.Second}, nil
	}
	if err != nil {
		return LoginAttempt{}, mapError(fmt.Errorf("register login attempt: %w", err))
	}
	return LoginAttempt{RetryAfter: time.Duration(r.RetryAfterSeconds) * time.Second, Locked: r.LockedNow}, nil
}

// LoginAttemptReset clears a key's count after a successful login, unless
// the key was locked meanwhile.
func (e *Executor) LoginAttemptReset(ctx context.Context, key string) error {
	return mapError(e.q.LoginAttemptReset(ctx, e.dbtx, key))
}

// LoginAttemptGiveBack takes back the attempt a successful login registered
// against key, without forgetting the failures around it.
func (e *Executor) LoginAttemptGiveBack(ctx context.Context, key string) error {
	return mapError(e.q.LoginAttemptGiveBack(ctx, e.dbtx, key))
}

// LoginAttemptPurge deletes throttling rows that no longer hold anything
// back.
func (e *Executor) LoginAttemptPurge(ctx context.Context, window time.Duration) (int64, error) {
	n, err := e.q.LoginAttemptPurge(ctx, e.dbtx, window.Seconds())
	return n, mapError(err)
}

// LoginAddressKnown reports whether the address (key) signed in to the
// account (key) within the last known period.
func (e *Executor) LoginAddressKnown(ctx context.Context, accountKey, addressKey string, known time.Duration) (bool, error) {
	ok, err := e.q.LoginKnownAddressCheck(ctx, e.dbtx, db.LoginKnownAddressCheckParams{
		AccountKey: accountKey, AddressKey: addressKey, KnownSeconds: known.Seconds(),
	})
	if err != nil {
		return false, mapError(fmt.Errorf("check known login address: %w", err))
	}
	return ok, nil
}

// LoginAddressRemember records a successful sign-in of the address to the
// account, now.
func (e *Executor) LoginAddressRemember(ctx context.Context, accountKey, addressKey string) error {
	err := e.q.LoginKnownAddressRemember(ctx, e.dbtx, db.LoginKnownAddressRememberParams{AccountKey: accountKey, AddressKey: addressKey})
	return mapError(err)
}

// LoginAddressPurge forgets sign-ins older than known.
func (e *Executor) LoginAddressPurge(ctx context.Context, known time.Duration) (int64, error) {
	n, err := e.q.LoginKnownAddressPurge(ctx, e.dbtx, known.Seconds())
	return n, mapError(err)
}
