package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

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

// Session is a browser session. ID is the SHA-256 of the cookie token; the
// token itself is never stored.
type Session struct {
	ID         []byte
	UserID     int64
	CSRFToken  string
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time // absolute; the idle timeout may end it sooner
	UserAgent  string
	IP         string
}

// NewSession is a session to create; its expiry is TTL from now on the
// database clock.
type NewSession struct {
	ID        []byte
	UserID    int64
	CSRFToken string
	TTL       time.Duration
	UserAgent string
	IP        string
}

// SessionUser is a live session and its user.
type SessionUser struct {
	Session Session
	User    User
}

// APIToken is an API token's metadata; its hash stays in the database.
type APIToken struct {
	ID         int64
	UserID     int64
	Name       string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	ExpiresAt  *time.Time // nil: does not expire
	Revoked    bool
}

// TokenUser is a live API token and its user.
type TokenUser struct {
	Token APIToken
	User  User
}

// AuditEntry is one row of the audit log. UserID is 0 when no user acted (or
// the user was deleted since); Detail is JSON.
type AuditEntry struct {
	ID     int64
	At     time.Time
	UserID int64
	Action string
	Detail []byte
}

// Audit actions written by this package.
const (
	AuditAdvisoryDismiss   = "advisory.dismiss"
	AuditAdvisoryUndismiss = "advisory.undismiss"
)

// mapAuthError adds unique violations to mapError: account and token writes
// can collide with existing rows, and callers must be able to tell that
// from a failure.
func mapAuthError(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" { // unique_violation
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return mapError(err)
}

// --- users ---

// UserCreate inserts an account; ErrConflict when the email (compared
// without case) is taken.
func (s *Store) UserCreate(ctx context.Context, email, role, passwordHash string) (User, error) {
	return userCreate(ctx, s.q, s.pool, email, role, passwordHash)
}

// UserCreate inserts an account in the transaction; see Store.UserCreate.
func (t *Tx) UserCreate(ctx context.Context, email, role, passwordHash string) (User, error) {
	return userCreate(ctx, t.q, t.tx, email, role, passwordHash)
}

func userCreate(ctx context.Context, q *db.Queries, dbtx db.DBTX, email, role, passwordHash string) (User, error) {
	r, err := q.UserCreate(ctx, dbtx, db.UserCreateParams{Email: email, Role: role, PasswordHash: passwordHash})
	if err != nil {
		return User{}, mapAuthError(fmt.Errorf("create user: %w", err))
	}
	return User{ID: r.ID, Email: r.Email, Role: r.Role, Disabled: r.Disabled, CreatedAt: r.CreatedAt}, nil
}

// UserByEmail finds an account by email, without case; ErrNotFound if none.
func (s *Store) UserByEmail(ctx context.Context, email string) (User, error) {
	r, err := s.q.UserGetByEmail(ctx, s.pool, email)
	if err != nil {
		return User{}, mapError(fmt.Errorf("get user: %w", err))
	}
	return User{ID: r.ID, Email: r.Email, Role: r.Role, Disabled: r.Disabled, CreatedAt: r.CreatedAt}, nil
}

// UserCredentials reads an account and its password hash for login;
// ErrNotFound if there is no such email.
func (s *Store) UserCredentials(ctx context.Context, email string) (Credentials, error) {
	r, err := s.q.UserGetCredentials(ctx, s.pool, email)
	if err != nil {
		return Credentials{}, mapError(fmt.Errorf("get credentials: %w", err))
	}
	return Credentials{
		User:         User{ID: r.ID, Email: r.Email, Role: r.Role, Disabled: r.Disabled, CreatedAt: r.CreatedAt},
		PasswordHash: r.PasswordHash,
	}, nil
}

// Users lists every account, ordered by email.
func (s *Store) Users(ctx context.Context) ([]User, error) {
	rows, err := s.q.UserList(ctx, s.pool)
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
func (s *Store) UserSetPasswordHash(ctx context.Context, id int64, passwordHash string) error {
	n, err := s.q.UserSetPasswordHash(ctx, s.pool, db.UserSetPasswordHashParams{ID: id, PasswordHash: passwordHash})
	return affectedOne(n, err, "set password")
}

// UserSetDisabled disables or re-enables an account. A disabled account's
// sessions and tokens stop working at once (authentication checks the flag)
// and come back if it is re-enabled before they expire.
func (s *Store) UserSetDisabled(ctx context.Context, id int64, disabled bool) error {
	n, err := s.q.UserSetDisabled(ctx, s.pool, db.UserSetDisabledParams{ID: id, Disabled: disabled})
	return affectedOne(n, err, "set disabled")
}

// --- sessions ---

// SessionCreate stores a new session.
func (t *Tx) SessionCreate(ctx context.Context, n NewSession) (Session, error) {
	r, err := t.q.SessionCreate(ctx, t.tx, db.SessionCreateParams{
		ID: n.ID, UserID: n.UserID, CsrfToken: n.CSRFToken, TtlSeconds: n.TTL.Seconds(),
		UserAgent: ref(n.UserAgent), Ip: ref(n.IP),
	})
	if err != nil {
		return Session{}, mapAuthError(fmt.Errorf("create session: %w", err))
	}
	return sessionFromRow(r), nil
}

// SessionAuthenticate returns the session with this id and its user if the
// session is live: before its absolute expiry, seen within idle, its user not
// disabled. It moves last_seen_at when the stored one is older than touch.
// ErrNotFound when there is no live session.
func (s *Store) SessionAuthenticate(ctx context.Context, id []byte, idle, touch time.Duration) (SessionUser, error) {
	r, err := s.q.SessionAuthenticate(ctx, s.pool, db.SessionAuthenticateParams{
		ID: id, IdleSeconds: idle.Seconds(), TouchSeconds: touch.Seconds(),
	})
	if err != nil {
		return SessionUser{}, mapError(fmt.Errorf("authenticate session: %w", err))
	}
	return SessionUser{
		Session: Session{
			ID: r.ID, UserID: r.UserID, CSRFToken: r.CsrfToken, CreatedAt: r.CreatedAt, LastSeenAt: r.LastSeenAt,
			ExpiresAt: r.ExpiresAt, UserAgent: deref(r.UserAgent), IP: deref(r.Ip),
		},
		User: User{ID: r.UserID, Email: r.Email, Role: r.Role, Disabled: r.UserDisabled, CreatedAt: r.UserCreatedAt},
	}, nil
}

// SessionDelete ends a session; it reports whether one was there.
func (s *Store) SessionDelete(ctx context.Context, id []byte) (bool, error) {
	n, err := s.q.SessionDelete(ctx, s.pool, id)
	if err != nil {
		return false, mapError(fmt.Errorf("delete session: %w", err))
	}
	return n > 0, nil
}

// SessionDeleteForUser ends every session of a user.
func (s *Store) SessionDeleteForUser(ctx context.Context, userID int64) (int64, error) {
	n, err := s.q.SessionDeleteForUser(ctx, s.pool, userID)
	return n, mapError(err)
}

// SessionDeleteDead deletes sessions past their expiry or idle longer than
// idle; userID 0 means every user's.
func (s *Store) SessionDeleteDead(ctx context.Context, userID int64, idle time.Duration) (int64, error) {
	n, err := s.q.SessionDeleteDead(ctx, s.pool, db.SessionDeleteDeadParams{UserID: userID, IdleSeconds: idle.Seconds()})
	return n, mapError(err)
}

// SessionDeleteDead deletes dead sessions in the transaction; see
// Store.SessionDeleteDead.
func (t *Tx) SessionDeleteDead(ctx context.Context, userID int64, idle time.Duration) (int64, error) {
	n, err := t.q.SessionDeleteDead(ctx, t.tx, db.SessionDeleteDeadParams{UserID: userID, IdleSeconds: idle.Seconds()})
	return n, mapError(err)
}

func sessionFromRow(r db.Session) Session {
	return Session{
		ID: r.ID, UserID: r.UserID, CSRFToken: r.CsrfToken, CreatedAt: r.CreatedAt, LastSeenAt: r.LastSeenAt,
		ExpiresAt: r.ExpiresAt, UserAgent: deref(r.UserAgent), IP: deref(r.Ip),
	}
}

// --- API tokens ---

// APITokenCreate stores a token by its hash; ttl 0 means it does not expire.
func (t *Tx) APITokenCreate(ctx context.Context, userID int64, name string, hash []byte, ttl time.Duration) (APIToken, error) {
	r, err := t.q.APITokenCreate(ctx, t.tx, db.APITokenCreateParams{
		UserID: userID, Name: name, TokenHash: hash, TtlSeconds: ttl.Seconds(),
	})
	if err != nil {
		return APIToken{}, mapAuthError(fmt.Errorf("create api token: %w", err))
	}
	return APIToken(r), nil
}

// APITokenAuthenticate returns the token with this hash and its user if the
// token is live: not revoked, not expired, its user not disabled. It moves
// last_used_at when the stored one is older than touch. ErrNotFound when
// there is no live token.
func (s *Store) APITokenAuthenticate(ctx context.Context, hash []byte, touch time.Duration) (TokenUser, error) {
	r, err := s.q.APITokenAuthenticate(ctx, s.pool, db.APITokenAuthenticateParams{TokenHash: hash, TouchSeconds: touch.Seconds()})
	if err != nil {
		return TokenUser{}, mapError(fmt.Errorf("authenticate api token: %w", err))
	}
	return TokenUser{
		Token: APIToken{
			ID: r.ID, UserID: r.UserID, Name: r.Name, CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt,
			ExpiresAt: r.ExpiresAt, Revoked: r.Revoked,
		},
		User: User{ID: r.UserID, Email: r.Email, Role: r.Role, Disabled: r.UserDisabled, CreatedAt: r.UserCreatedAt},
	}, nil
}

// APITokenRevoke revokes a token and returns its owner; ErrNotFound if there
// is no such token. Revoking twice is not an error.
func (t *Tx) APITokenRevoke(ctx context.Context, id int64) (userID int64, err error) {
	userID, err = t.q.APITokenRevoke(ctx, t.tx, id)
	if err != nil {
		return 0, mapError(fmt.Errorf("revoke api token: %w", err))
	}
	return userID, nil
}

// APITokens lists a user's tokens, revoked ones included.
func (s *Store) APITokens(ctx context.Context, userID int64) ([]APIToken, error) {
	rows, err := s.q.APITokenList(ctx, s.pool, userID)
	if err != nil {
		return nil, mapError(fmt.Errorf("list api tokens: %w", err))
	}
	out := make([]APIToken, len(rows))
	for i, r := range rows {
		out[i] = APIToken(r)
	}
	return out, nil
}

// --- advisory dismissals and the audit log ---

// DismissAdvisory hides an advisory of a component, and records who did it
// in the audit log in the same transaction, so that no dismissal exists
// without its audit row. Dismissing an already dismissed advisory changes
// nothing and is not audited again. userID 0: no user (a script).
func (s *Store) DismissAdvisory(ctx context.Context, code, advisoryID string, userID int64) error {
	return s.WithTx(ctx, func(tx *Tx) error {
		n, err := tx.q.AdvisoryDismiss(ctx, tx.tx, db.AdvisoryDismissParams{
			ComponentCode: code, AdvisoryID: advisoryID, UserID: optionalID(userID),
		})
		if err != nil {
			return fmt.Errorf("dismiss advisory: %w", err)
		}
		if n == 0 {
			return nil
		}
		return tx.AuditAppend(ctx, userID, AuditAdvisoryDismiss, map[string]string{"component": code, "advisory": advisoryID})
	})
}

// UndismissAdvisory shows a dismissed advisory again, audited in the same
// transaction. An advisory that is not dismissed is left alone, unaudited.
func (s *Store) UndismissAdvisory(ctx context.Context, code, advisoryID string, userID int64) error {
	return s.WithTx(ctx, func(tx *Tx) error {
		n, err := tx.q.AdvisoryUndismiss(ctx, tx.tx, db.AdvisoryUndismissParams{ComponentCode: code, AdvisoryID: advisoryID})
		if err != nil {
			return fmt.Errorf("undismiss advisory: %w", err)
		}
		if n == 0 {
			return nil
		}
		return tx.AuditAppend(ctx, userID, AuditAdvisoryUndismiss, map[string]string{"component": code, "advisory": advisoryID})
	})
}

// DismissalsFor returns the dismissed advisories of every component:
// component code -> advisory id -> true. Components without dismissals are
// absent; indexing the nil inner map of an absent code reads false.
func (s *Store) DismissalsFor(ctx context.Context) (map[string]map[string]bool, error) {
	rows, err := s.q.AdvisoryDismissalList(ctx, s.pool)
	if err != nil {
		return nil, mapError(fmt.Errorf("list dismissals: %w", err))
	}
	out := make(map[string]map[string]bool)
	for _, r := range rows {
		if out[r.ComponentCode] == nil {
			out[r.ComponentCode] = make(map[string]bool)
		}
		out[r.ComponentCode][r.AdvisoryID] = true
	}
	return out, nil
}

// AuditAppend records an action. userID 0 means no user; detail is encoded
// as JSON (nil: an empty object; a json.RawMessage is stored as is).
func (s *Store) AuditAppend(ctx context.Context, userID int64, action string, detail any) error {
	return auditAppend(ctx, s.q, s.pool, userID, action, detail)
}

// AuditAppend records an action in the transaction, so that it commits or
// rolls back with the change it describes; see Store.AuditAppend.
func (t *Tx) AuditAppend(ctx context.Context, userID int64, action string, detail any) error {
	return auditAppend(ctx, t.q, t.tx, userID, action, detail)
}

func auditAppend(ctx context.Context, q *db.Queries, dbtx db.DBTX, userID int64, action string, detail any) error {
	b := []byte("{}")
	if detail != nil {
		var err error
		if b, err = json.Marshal(detail); err != nil {
			return fmt.Errorf("audit %s: encode detail: %w", action, err)
		}
	}
	if _, err := q.AuditAppend(ctx, dbtx, db.AuditAppendParams{UserID: optionalID(userID), Action: action, Detail: b}); err != nil {
		return mapError(fmt.Errorf("audit %s: %w", action, err))
	}
	return nil
}

// AuditList returns the newest limit entries, newest first.
func (s *Store) AuditList(ctx context.Context, limit int) ([]AuditEntry, error) {
	rows, err := s.q.AuditList(ctx, s.pool, int32(limit))
	if err != nil {
		return nil, mapError(fmt.Errorf("list audit log: %w", err))
	}
	out := make([]AuditEntry, len(rows))
	for i, r := range rows {
		out[i] = AuditEntry{ID: r.ID, At: r.At, Action: r.Action, Detail: r.Detail}
		if r.UserID != nil {
			out[i].UserID = *r.UserID
		}
	}
	return out, nil
}

// optionalID maps the id 0 ("nobody") to NULL.
func optionalID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
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
