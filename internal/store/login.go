package store

import (
	"context"
	"fmt"
	"time"

	"github.com/upcheck/upcheck/internal/db"
)

// LoginLimit is one throttling rule: more than MaxFailures attempts within
// Window lock the key for Lockout.
type LoginLimit struct {
	MaxFailures int
	Window      time.Duration
	Lockout     time.Duration
}

// LoginAttemptRegister counts one login attempt against key before its
// password is checked. It returns 0 when the attempt may go on, or how long
// the key stays locked (whole seconds) when it may not; the attempt that
// passes the limit sets the lock and is itself refused.
func (s *Store) LoginAttemptRegister(ctx context.Context, key string, l LoginLimit) (time.Duration, error) {
	secs, err := s.q.LoginAttemptRegister(ctx, s.pool, db.LoginAttemptRegisterParams{
		Key: key, MaxFailures: int32(l.MaxFailures), WindowSeconds: l.Window.Seconds(), LockoutSeconds: l.Lockout.Seconds(),
	})
	if err != nil {
		return 0, mapError(fmt.Errorf("register login attempt: %w", err))
	}
	return time.Duration(secs) * time.Second, nil
}

// LoginAttemptReset clears a key's count after a successful login, unless
// the key was locked meanwhile.
func (s *Store) LoginAttemptReset(ctx context.Context, key string) error {
	return mapError(s.q.LoginAttemptReset(ctx, s.pool, key))
}

// LoginAttemptGiveBack takes back the attempt a successful login registered
// against key, without forgetting the failures around it.
func (s *Store) LoginAttemptGiveBack(ctx context.Context, key string) error {
	return mapError(s.q.LoginAttemptGiveBack(ctx, s.pool, key))
}

// LoginAttemptPurge deletes throttling rows that no longer hold anything
// back.
func (s *Store) LoginAttemptPurge(ctx context.Context, window time.Duration) (int64, error) {
	n, err := s.q.LoginAttemptPurge(ctx, s.pool, window.Seconds())
	return n, mapError(err)
}

// LoginAddressKnown reports whether the address (key) signed in to the
// account (key) within the last known period.
func (s *Store) LoginAddressKnown(ctx context.Context, accountKey, addressKey string, known time.Duration) (bool, error) {
	ok, err := s.q.LoginKnownAddressCheck(ctx, s.pool, db.LoginKnownAddressCheckParams{
		AccountKey: accountKey, AddressKey: addressKey, KnownSeconds: known.Seconds(),
	})
	if err != nil {
		return false, mapError(fmt.Errorf("check known login address: %w", err))
	}
	return ok, nil
}

// LoginAddressRemember records a successful sign-in of the address to the
// account, now.
func (s *Store) LoginAddressRemember(ctx context.Context, accountKey, addressKey string) error {
	err := s.q.LoginKnownAddressRemember(ctx, s.pool, db.LoginKnownAddressRememberParams{AccountKey: accountKey, AddressKey: addressKey})
	return mapError(err)
}

// LoginAddressPurge forgets sign-ins older than known.
func (s *Store) LoginAddressPurge(ctx context.Context, known time.Duration) (int64, error) {
	n, err := s.q.LoginKnownAddressPurge(ctx, s.pool, known.Seconds())
	return n, mapError(err)
}
