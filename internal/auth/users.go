package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/upcheck/upcheck/internal/store"
)

// CreateUser creates an account. The email is kept as typed (trimmed) and
// compared without case; a taken email is store.ErrConflict.
func (s *Service) CreateUser(ctx context.Context, email, role, password string) (store.User, error) {
	email = strings.TrimSpace(email)
	if !validEmail(email) {
		return store.User{}, ErrInvalidEmail
	}
	if !ValidRole(role) {
		return store.User{}, fmt.Errorf("%w %q: want %s or %s", ErrInvalidRole, role, RoleAdmin, RoleViewer)
	}
	if err := ValidatePassword(password); err != nil {
		return store.User{}, err
	}
	hash, err := s.hash(ctx, password)
	if err != nil {
		return store.User{}, err
	}
	var u store.User
	err = s.st.WithTx(ctx, func(tx *store.Tx) error {
		var err error
		if u, err = tx.UserCreate(ctx, email, role, hash); err != nil {
			return err
		}
		return tx.AuditAppend(ctx, 0, AuditUserCreate, map[string]any{"user_id": u.ID, "email": u.Email, "role": u.Role})
	})
	if err != nil {
		return store.User{}, dbError("create user", err)
	}
	s.logger.InfoContext(ctx, "user created", "user_id", u.ID, "email", u.Email, "role", u.Role)
	return u, nil
}

// PasswordChange is what SetPassword did.
type PasswordChange struct {
	User store.User
	// SessionsEnded counts the browser sessions the change ended.
	SessionsEnded int64
	// LiveTokens counts the account's API tokens that still work: a
	// password change leaves them alone.
	LiveTokens int
}

// SetPassword gives the account with this email a new password (the same
// rule as CreateUser) and ends every one of its browser sessions in the
// same transaction, so that whoever knew the old password is signed out
// everywhere: on this instance at once, on others within
// PrincipalCacheTTL. API tokens keep working (scripts and monitoring would
// break); PasswordChange counts them so the caller can say so.
// store.ErrNotFound if there is no such account.
func (s *Service) SetPassword(ctx context.Context, email, password string) (PasswordChange, error) {
	if err := ValidatePassword(password); err != nil {
		return PasswordChange{}, err
	}
	u, err := s.st.UserByEmail(ctx, strings.TrimSpace(email))
	if err != nil {
		return PasswordChange{}, dbError(fmt.Sprintf("set password: user %q", email), err)
	}
	hash, err := s.hash(ctx, password)
	if err != nil {
		return PasswordChange{}, err
	}
	change := PasswordChange{User: u}
	err = s.st.WithTx(ctx, func(tx *store.Tx) error {
		if err := tx.UserSetPasswordHash(ctx, u.ID, hash); err != nil {
			return err
		}
		var err error
		if change.SessionsEnded, err = tx.SessionDeleteForUser(ctx, u.ID); err != nil {
			return err
		}
		return tx.AuditAppend(ctx, actor(ctx), AuditUserPassword, map[string]any{"user_id": u.ID, "sessions_ended": change.SessionsEnded})
	})
	if err != nil {
		return PasswordChange{}, dbError("set password", err)
	}
	s.cache.drop(func(p Principal) bool { return p.UserID == u.ID && !p.ViaToken })
	tokens, err := s.st.APITokensWithOwner(ctx, u.ID)
	if err != nil {
		return change, dbError("set password: count tokens", err)
	}
	for _, t := range tokens {
		if !t.Revoked && !t.Expired {
			change.LiveTokens++
		}
	}
	s.logger.InfoContext(ctx, "password changed", "user_id", u.ID, "sessions_ended", change.SessionsEnded)
	return change, nil
}

// PasswordIs reports whether password is the current one of the account
// with this email (false when there is no such account). It is for the
// operator's own tools, such as serve --demo deciding whether
// UPCHECK_ADMIN_PASSWORD changes anything; it is not throttled, so no
// request may reach it.
func (s *Service) PasswordIs(ctx context.Context, email, password string) (bool, error) {
	creds, err := s.st.UserCredentials(ctx, strings.TrimSpace(email))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, dbError("check password", err)
	}
	ok, err := s.verify(ctx, creds.PasswordHash, password)
	if err != nil {
		return false, fmt.Errorf("check password: user %d: %w", creds.ID, err)
	}
	return ok, nil
}

// validEmail is deliberately loose (one "@", something either side, no
// spaces or control characters): the address is an account name, never
// mailed to.
func validEmail(email string) bool {
	local, domain, ok := strings.Cut(email, "@")
	return ok && local != "" && domain != "" && !strings.Contains(domain, "@") &&
		len(email) <= maxEmailBytes && utf8.ValidString(email) &&
		!strings.ContainsFunc(email, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
}
