package auth

import (
	"errors"
	"fmt"
	"time"

	"github.com/upcheck/upcheck/internal/store"
)

var (
	// ErrInvalidCredentials is the one answer to a failed login, whether the
	// email is unknown, the password wrong or the account disabled, so that a
	// login form does not tell which emails have accounts.
	ErrInvalidCredentials = errors.New("invalid email or password")
	// ErrThrottled matches every *ThrottledError (errors.Is).
	ErrThrottled = errors.New("too many login attempts")
	// ErrUnauthenticated means no valid session or token came with the
	// request: missing, malformed, unknown, expired, revoked or of a disabled
	// user. It never stands for a database failure.
	ErrUnauthenticated = errors.New("not authenticated")
	// ErrTokenExpired means the request's API token is there but its end
	// has passed. It wraps ErrUnauthenticated: the answer is 401, saying
	// why.
	ErrTokenExpired = fmt.Errorf("%w: API token expired", ErrUnauthenticated)
	// ErrForbidden means the principal lacks the permission asked for, or a
	// state change failed the CSRF checks.
	ErrForbidden = errors.New("forbidden")
	// ErrReadOnly refuses a state change made with a read-only API token
	// (CheckCSRF). It wraps ErrForbidden.
	ErrReadOnly = fmt.Errorf("%w: read-only API token", ErrForbidden)
	// ErrCrossSite means the browser says a state change comes from another
	// site (CheckCSRF, CheckSameOrigin). It wraps ErrForbidden.
	ErrCrossSite = fmt.Errorf("%w: cross-site request", ErrForbidden)
	// ErrUnavailable means the database could not be reached or did not
	// answer in time, so nobody could be authenticated either way; the web
	// layer answers 503, never 401.
	ErrUnavailable = errors.New("authentication unavailable: database unreachable")
	// ErrDisabled is returned when a token is asked for a disabled account.
	ErrDisabled = errors.New("account disabled")
	// ErrInvalidRole is returned for a role other than admin or viewer.
	ErrInvalidRole = errors.New("invalid role")
	// ErrInvalidEmail is returned for an email that cannot be an account's.
	ErrInvalidEmail = errors.New("invalid email")
	// ErrPasswordTooShort is returned for a new password under MinPasswordLength
	// characters.
	ErrPasswordTooShort = errors.New("password too short")
	// ErrPasswordTooLong is returned for a new password over MaxPasswordBytes.
	ErrPasswordTooLong = errors.New("password too long")
	// ErrInvalidTokenName is returned for an API token name that is too
	// long or holds control characters.
	ErrInvalidTokenName = errors.New("invalid token name")
	// ErrInvalidTokenLifetime is returned for an API token lifetime that
	// does not read (ParseTokenLifetime) or is out of bounds.
	ErrInvalidTokenLifetime = errors.New("invalid token lifetime")
)

// ThrottledError refuses a login attempt while its account or address is
// locked out. errors.Is(err, ErrThrottled) holds for it.
type ThrottledError struct {
	// RetryAfter is how long the lock still holds, in whole seconds (at
	// least one), for a Retry-After header.
	RetryAfter time.Duration
}

// Error says how long to wait; it names no account or address.
func (e *ThrottledError) Error() string {
	return fmt.Sprintf("too many login attempts: retry after %d seconds", int64(e.RetryAfter/time.Second))
}

// Unwrap lets errors.Is(err, ErrThrottled) match.
func (e *ThrottledError) Unwrap() error { return ErrThrottled }

// dbError wraps a database error for the caller: ErrUnavailable in front
// when the database was out of reach, so that the web layer can answer 503;
// as is otherwise (a 500).
func dbError(what string, err error) error {
	if unavailable(err) {
		return fmt.Errorf("%s: %w: %w", what, ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// unavailable reports whether err means "the database did not answer"
// rather than "the database said no"; the store owns that distinction.
func unavailable(err error) bool { return store.IsUnavailable(err) }
