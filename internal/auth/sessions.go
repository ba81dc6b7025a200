package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/store"
)

// Login checks an email and password and opens a new session. The token
// returned goes into the session cookie and nowhere else; the session's id
// is its hash, fresh at every login, so that an id planted before login
// (session fixation) is never promoted.
//
// Failures are ErrInvalidCredentials, whatever the reason: an unknown email
// costs the same argon2 run as a wrong password. A *ThrottledError refuses
// the attempt unheard while its address, its account from that address, or
// (for an address that has not signed in to it lately) its account is
// locked out; see throttle.go. ip is the client address (ClientAddress), ""
// for none.
func (s *Service) Login(ctx context.Context, email, password, ip, userAgent string) (string, store.Session, error) {
	email = strings.TrimSpace(email)
	if !validEmail(email) || len(password) > MaxPasswordBytes {
		// Such a request can never succeed; refusing it before any work
		// says nothing about which accounts exist.
		return "", store.Session{}, ErrInvalidCredentials
	}
	counted, err := s.throttle(ctx, "email:"+strings.ToLower(email), addressKey(ip))
	if err != nil {
		return "", store.Session{}, err
	}

	creds, err := s.st.UserCredentials(ctx, email)
	if errors.Is(err, store.ErrNotFound) {
		if err := s.burnHash(ctx, password); err != nil {
			return "", store.Session{}, err
		}
		s.logger.InfoContext(ctx, "login failed", "email", email, "ip", ip, "reason", "unknown email")
		return "", store.Session{}, ErrInvalidCredentials
	}
	if err != nil {
		return "", store.Session{}, dbError("login", err)
	}
	ok, err := s.verify(ctx, creds.PasswordHash, password)
	if err != nil {
		return "", store.Session{}, fmt.Errorf("login: user %d: %w", creds.ID, err)
	}
	if !ok || creds.Disabled {
		reason := "wrong password"
		if ok {
			reason = "account disabled"
		}
		s.logger.InfoContext(ctx, "login failed", "email", email, "ip", ip, "user_id", creds.ID, "reason", reason)
		return "", store.Session{}, ErrInvalidCredentials
	}

	token, id := newToken("")
	var sess store.Session
	err = s.st.WithTx(ctx, func(tx *store.Tx) error {
		// The password must still be the account's when the session opens:
		// a change (upcheck user passwd) that committed since it was checked
		// ends every session and this one must not outlive it. The row lock
		// makes a later change wait for this session, and end it too.
		if err := s.stillTheirPassword(ctx, tx, creds, password); err != nil {
			return err
		}
		// Dead sessions of this user go now, so that the table stays small
		// without a sweeper; Purge does the same for users who never return.
		if _, err := tx.SessionDeleteDead(ctx, creds.ID, s.cfg.IdleTimeout); err != nil {
			return err
		}
		csrf, _ := newToken("")
		var err error
		sess, err = tx.SessionCreate(ctx, store.NewSession{
			ID: id, UserID: creds.ID, CSRFToken: csrf, TTL: s.cfg.SessionTTL,
			UserAgent: clean(userAgent, maxUABytes), IP: clean(ip, 64),
		})
		return err
	})
	if errors.Is(err, errPasswordChanged) {
		s.logger.InfoContext(ctx, "login failed", "email", email, "ip", ip, "user_id", creds.ID, "reason", "password changed during the login")
		return "", store.Session{}, ErrInvalidCredentials
	}
	if err != nil {
		return "", store.Session{}, dbError("login: create session", err)
	}
	s.succeeded(ctx, creds, password, counted)
	s.logger.InfoContext(ctx, "login", "user_id", creds.ID, "email", creds.Email, "ip", ip)
	return token, sess, nil
}

// succeeded is the bookkeeping after a good password: the attempt is given
// back (forgotten) where it was counted and its address remembered for the
// account (forgive), and a hash made with old parameters is
// upgraded. None of it may fail the login that already has its session.
func (s *Service) succeeded(ctx context.Context, creds store.Credentials, password string, counted attempt) {
	s.forgive(ctx, counted)
	if !s.cfg.Hasher.NeedsRehash(creds.PasswordHash) {
		return
	}
	hash, err := s.hash(ctx, password)
	upgraded := false
	if err == nil {
		upgraded, err = s.st.UserUpgradePasswordHash(ctx, creds.ID, creds.PasswordHash, hash)
	}
	if err != nil {
		s.logger.WarnContext(ctx, "upgrade password hash", "user_id", creds.ID, "error", err)
		return
	}
	if upgraded {
		s.logger.InfoContext(ctx, "password hash upgraded", "user_id", creds.ID)
	}
}

// errPasswordChanged ends a login whose password was changed or whose
// account was deleted while it was being checked.
var errPasswordChanged = errors.New("password changed during the login")

// stillTheirPassword reads the account's hash again under a row lock in the
// login's transaction. Another hash is most often a password change, and
// then the login fails; it can also be the same password rehashed by a
// concurrent login, which the password still verifies.
func (s *Service) stillTheirPassword(ctx context.Context, tx *store.Tx, creds store.Credentials, password string) error {
	current, err := tx.UserPasswordHashForShare(ctx, creds.ID)
	if errors.Is(err, store.ErrNotFound) {
		return errPasswordChanged
	}
	if err != nil || current == creds.PasswordHash {
		return err
	}
	ok, err := s.verify(ctx, current, password)
	if err != nil || !ok {
		return errPasswordChanged
	}
	return nil
}

// Authenticate returns the principal of a session cookie's token.
// ErrUnauthenticated when the token is malformed or its session is unknown,
// expired (absolute or idle) or its user disabled; ErrUnavailable (or
// another error) when the database could not tell.
func (s *Service) Authenticate(ctx context.Context, token string) (Principal, error) {
	id, ok := tokenHash(token, "")
	if !ok {
		return Principal{}, ErrUnauthenticated
	}
	if p, ok := s.cache.get(id); ok {
		return p, nil
	}
	su, err := s.st.SessionAuthenticate(ctx, id, s.cfg.IdleTimeout, touchInterval)
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, ErrUnauthenticated
	}
	if err != nil {
		return Principal{}, dbError("authenticate session", err)
	}
	p := Principal{
		UserID: su.User.ID, Email: su.User.Email, Role: su.User.Role,
		SessionID: hex.EncodeToString(su.Session.ID), CSRFToken: su.Session.CSRFToken,
		Sites: sitesOf(su.UserSites, store.SiteLimit{}),
	}
	s.cache.put(id, p)
	return p, nil
}

// Logout ends a session (Principal.SessionID). Ending one that is already
// gone is not an error.
func (s *Service) Logout(ctx context.Context, sessionID string) error {
	id, err := hex.DecodeString(sessionID)
	if err != nil || len(id) != sha256.Size {
		return nil // no such session can exist
	}
	s.cache.drop(func(p Principal) bool { return p.SessionID == sessionID })
	if _, err := s.st.SessionDelete(ctx, id); err != nil {
		return dbError("logout", err)
	}
	return nil
}

// SessionToken returns the token the request's session cookie
// (Config.CookieName) carries, "" when there is none.
func (s *Service) SessionToken(r *http.Request) string {
	ck, err := r.Cookie(s.cfg.CookieName)
	if err != nil {
		return ""
	}
	return ck.Value
}

// SessionCookie is the cookie that sends a session token (from Login):
// HttpOnly so scripts cannot read it, SameSite=Lax so other sites' posts do
// not carry it, Secure on TLS (tls) or when Config.SecureCookie, and
// expiring with the session's absolute expiry.
func (s *Service) SessionCookie(token string, expires time.Time, tls bool) *http.Cookie {
	return &http.Cookie{
		Name: s.cfg.CookieName, Value: token, Path: "/", Expires: expires,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.cfg.SecureCookie || tls,
	}
}

// ExpiredSessionCookie tells the browser to drop the session cookie.
func (s *Service) ExpiredSessionCookie(tls bool) *http.Cookie {
	ck := s.SessionCookie("", time.Unix(0, 0), tls)
	ck.MaxAge = -1
	return ck
}

// SafeNext returns next if it is a path on this site, and "/" otherwise, so
// that the login page's ?next= cannot send a user to another site
// ("//evil.example", "/\evil.example", "https://…").
func SafeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, `/\`) ||
		strings.ContainsFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "/"
	}
	return next
}

// SecureCookies reports whether cookies are marked Secure even on plain
// HTTP (Config.SecureCookie: behind a TLS-terminating proxy).
func (s *Service) SecureCookies() bool { return s.cfg.SecureCookie }
