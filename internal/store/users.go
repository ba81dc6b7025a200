package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/upcheck/upcheck/internal/db"
)

// ErrConflict is returned when a write would break a uniqueness rule, such
// as a second account with the same email.
var ErrConflict = errors.New("already exists")

// User is an account. The password hash is not part of it: only login reads
// it, through UserCredentials.
type User struct {
	ID        int64
	Email     string
	Role      string
	Disabled  bool
	CreatedAt time.Time
}

// Credentials are a user and their encoded password hash.
type Credentials struct {
	User
	PasswordHash string
}

// mapAuthError adds unique violations to mapError: account and token writes
// can collide with existing rows, and callers must be able to tell that
// from a failure.
func mapAuthError(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.UniqueViolation {
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return mapError(err)
}

// UserCreate inserts an account; ErrConflict when the email (compared
// without case) is taken.
func (e *Executor) UserCreate(ctx context.Context, email, role, passwordHash string) (User, error) {
	r, err := e.q.UserCreate(ctx, e.dbtx, db.UserCreateParams{Email: email, Role: role, PasswordHash: passwordHash})
	if err != nil {
		return User{}, mapAuthError(fmt.Errorf("create user: %w", err))
	}
	return User{ID: r.ID, Email: r.Email, Role: r.Role, Disabled: r.Disabled, CreatedAt: r.CreatedAt}, nil
}

// UserByEmail finds an account by email, without case; ErrNotFound if none.
func (e *Executor) UserByEmail(ctx context.Context, email string) (User, error) {
	r, err := e.q.UserGetByEmail(ctx, e.dbtx, email)
	if err != nil {
		return User{}, mapError(fmt.Errorf("get user: %w", err))
	}
	return User{ID: r.ID, Email: r.Email, Role: r.Role, Disabled: r.Disabled, CreatedAt: r.CreatedAt}, nil
}

// UserCredentials reads an account and its password hash for login;
// ErrNotFound if there is no such email.
func (e *Executor) UserCredentials(ctx context.Context, email string) (Credentials, error) {
	r, err := e.q.UserGetCredentials(ctx, e.dbtx, email)
	if err != nil {
		return Credentials{}, mapError(fmt.Errorf("get credentials: %w", err))
	}
	return Credentials{
		User:         User{ID: r.ID, Email: r.Email, Role: r.Role, Disabled: r.Disabled, CreatedAt: r.CreatedAt},
		PasswordHash: r.PasswordHash,
	}, nil
}

// Users lists every account, ordered by email.
func (e *Executor) Users(ctx context.Context) ([]User, error) {
	rows, err := e.q.UserList(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(fmt.Errorf("list users: %w", err))
	}
	out := make([]User, len(rows))
	for i, r := range rows {
		out[i] = User{ID: r.ID, Email: r.Email, Role: r.Role, Disabled: r.Disabled, CreatedAt: r.CreatedAt}
	}
	return out, nil
}

// UserSetPasswordHash replaces an account's password hash; ErrNotFound if
// the account does not exist.
func (e *Executor) UserSetPasswordHash(ctx context.Context, id int64, passwordHash string) error {
	n, err := e.q.UserSetPasswordHash(ctx, e.dbtx, db.UserSetPasswordHashParams{ID: id, PasswordHash: passwordHash})
	return affectedOne(n, err, "set password")
}

// UserUpgradePasswordHash replaces an account's password hash with one of
// the same password made with new parameters, only while oldHash is still
// the stored one; it reports whether it did. A password changed meanwhile
// stays changed.
func (e *Executor) UserUpgradePasswordHash(ctx context.Context, id int64, oldHash, newHash string) (bool, error) {
	n, err := e.q.UserUpgradePasswordHash(ctx, e.dbtx, db.UserUpgradePasswordHashParams{ID: id, OldHash: oldHash, NewHash: newHash})
	if err != nil {
		return false, mapError(fmt.Errorf("upgrade password hash: %w", err))
	}
	return n == 1, nil
}

// UserPasswordHashForShare reads an account's password hash again and
// keeps its row from changing until the transaction ends; ErrNotFound if
// the account is gone.
func (t *Tx) UserPasswordHashForShare(ctx context.Context, id int64) (string, error) {
	h, err := t.q.UserPasswordHashForShare(ctx, t.tx, id)
	if err != nil {
		return "", mapError(fmt.Errorf("read password hash: %w", err))
	}
	return h, nil
}

// UserSetDisabled disables or re-enables an account. A disabled account's
// sessions and tokens stop working at once (authentication checks the flag)
// and come back if it is re-enabled before they expire.
func (e *Executor) UserSetDisabled(ctx context.Context, id int64, disabled bool) error {
	n, err := e.q.UserSetDisabled(ctx, e.dbtx, db.UserSetDisabledParams{ID: id, Disabled: disabled})
	return affectedOne(n, err, "set disabled")
}

// affectedOne turns an update that touched no row into ErrNotFound.
func affectedOne(n int64, err error, what string) error {
	if err != nil {
		return mapError(fmt.Errorf("%s: %w", what, err))
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return nil
}
