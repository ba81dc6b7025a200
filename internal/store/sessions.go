package store

import (
	"context"
	"fmt"
	"time"

	"github.com/upcheck/upcheck/internal/db"
)

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
	// UserSites are the sites the user is limited to.
	UserSites SiteLimit
}

// SessionCreate stores a new session.
func (e *Executor) SessionCreate(ctx context.Context, n NewSession) (Session, error) {
	r, err := e.q.SessionCreate(ctx, e.dbtx, db.SessionCreateParams{
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
func (e *Executor) SessionAuthenticate(ctx context.Context, id []byte, idle, touch time.Duration) (SessionUser, error) {
	r, err := e.q.SessionAuthenticate(ctx, e.dbtx, db.SessionAuthenticateParams{
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
		User:      User{ID: r.UserID, Email: r.Email, Role: r.Role, Disabled: r.UserDisabled, CreatedAt: r.UserCreatedAt},
		UserSites: SiteLimit{Limited: r.UserSitesLimited, IDs: r.UserSiteIds},
	}, nil
}

// SessionDelete ends a session; it reports whether one was there.
func (e *Executor) SessionDelete(ctx context.Context, id []byte) (bool, error) {
	n, err := e.q.SessionDelete(ctx, e.dbtx, id)
	if err != nil {
		return false, mapError(fmt.Errorf("delete session: %w", err))
	}
	return n > 0, nil
}

// SessionDeleteForUser ends every session of a user.
func (e *Executor) SessionDeleteForUser(ctx context.Context, userID int64) (int64, error) {
	n, err := e.q.SessionDeleteForUser(ctx, e.dbtx, userID)
	return n, mapError(err)
}

// SessionDeleteDead deletes sessions past their expiry or idle longer than
// idle; userID 0 means every user's.
func (e *Executor) SessionDeleteDead(ctx context.Context, userID int64, idle time.Duration) (int64, error) {
	n, err := e.q.SessionDeleteDead(ctx, e.dbtx, db.SessionDeleteDeadParams{UserID: userID, IdleSeconds: idle.Seconds()})
	return n, mapError(err)
}

func sessionFromRow(r db.Session) Session {
	return Session{
		ID: r.ID, UserID: r.UserID, CSRFToken: r.CsrfToken, CreatedAt: r.CreatedAt, LastSeenAt: r.LastSeenAt,
		ExpiresAt: r.ExpiresAt, UserAgent: deref(r.UserAgent), IP: deref(r.Ip),
	}
}
