package auth

import (
	"context"
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

// validEmail is deliberately loose (one "@", something either side, no
// spaces or control characters): the address is an account name, never
// mailed to.
func validEmail(email string) bool {
	local, domain, ok := strings.Cut(email, "@")
	return ok && local != "" && domain != "" && !strings.Contains(domain, "@") &&
		len(email) <= maxEmailBytes && utf8.ValidString(email) &&
		!strings.ContainsFunc(email, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
}
