package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/upcheck/upcheck/internal/store"
)

// CreateToken creates an API token for the user with this email and returns
// it; only its hash is stored, so this is the one time it can be shown. The
// token acts with the user's role, needs no CSRF token, and lasts until
// revoked (or Config.TokenTTL). An empty name is "api". The audit row names
// who acted: the principal in ctx (an admin in the AdminCP), or nobody (the
// command line).
func (s *Service) CreateToken(ctx context.Context, email, name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		name = defaultName
	}
	if len(name) > maxNameBytes || !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl) {
		return "", fmt.Errorf("%w: at most %d printable bytes", ErrInvalidTokenName, maxNameBytes)
	}
	u, err := s.st.UserByEmail(ctx, strings.TrimSpace(email))
	if err != nil {
		return "", dbError(fmt.Sprintf("create token: user %q", email), err)
	}
	if u.Disabled {
		return "", fmt.Errorf("create token: user %q: %w", email, ErrDisabled)
	}
	raw, hash := newToken(TokenPrefix)
	err = s.st.WithTx(ctx, func(tx *store.Tx) error {
		t, err := tx.APITokenCreate(ctx, u.ID, name, hash, s.cfg.TokenTTL)
		if err != nil {
			return err
		}
		return tx.AuditAppend(ctx, actor(ctx), AuditTokenCreate, map[string]any{"token_id": t.ID, "name": t.Name, "user_id": u.ID})
	})
	if err != nil {
		return "", dbError("create token", err)
	}
	s.logger.InfoContext(ctx, "api token created", "user_id", u.ID, "name", name, "by", actor(ctx))
	return raw, nil
}

// AuthenticateToken returns the principal of an API token (ViaToken set).
// Errors as for Authenticate.
func (s *Service) AuthenticateToken(ctx context.Context, raw string) (Principal, error) {
	hash, ok := tokenHash(raw, TokenPrefix)
	if !ok {
		return Principal{}, ErrUnauthenticated
	}
	if p, ok := s.cache.get(hash); ok {
		return p, nil
	}
	tu, err := s.st.APITokenAuthenticate(ctx, hash, touchInterval)
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, ErrUnauthenticated
	}
	if err != nil {
		return Principal{}, dbError("authenticate api token", err)
	}
	p := Principal{UserID: tu.User.ID, Email: tu.User.Email, Role: tu.User.Role, ViaToken: true, TokenID: tu.Token.ID}
	s.cache.put(hash, p)
	return p, nil
}

// RevokeToken revokes an API token by id (Principal.TokenID, or Tokens);
// store.ErrNotFound if there is none. It stops working at its next request
// on this instance, and within PrincipalCacheTTL on the others. Revoking a
// revoked token again is not an error. The audit row names who acted, as
// for CreateToken.
func (s *Service) RevokeToken(ctx context.Context, id int64) error {
	s.cache.drop(func(p Principal) bool { return p.ViaToken && p.TokenID == id })
	err := s.st.WithTx(ctx, func(tx *store.Tx) error {
		owner, err := tx.APITokenRevoke(ctx, id)
		if err != nil {
			return err
		}
		return tx.AuditAppend(ctx, actor(ctx), AuditTokenRevoke, map[string]any{"token_id": id, "user_id": owner})
	})
	if err != nil {
		return dbError(fmt.Sprintf("revoke token %d", id), err)
	}
	s.logger.InfoContext(ctx, "api token revoked", "token_id", id, "by", actor(ctx))
	return nil
}

// Tokens lists the API tokens of the user with this email, or every
// user's when email is empty, revoked and expired ones included, oldest
// first. The secrets are not there: only their hashes are stored.
func (s *Service) Tokens(ctx context.Context, email string) ([]store.TokenListing, error) {
	var userID int64
	if email = strings.TrimSpace(email); email != "" {
		u, err := s.st.UserByEmail(ctx, email)
		if err != nil {
			return nil, dbError(fmt.Sprintf("list tokens: user %q", email), err)
		}
		userID = u.ID
	}
	ts, err := s.st.APITokensWithOwner(ctx, userID)
	if err != nil {
		return nil, dbError("list tokens", err)
	}
	return ts, nil
}

// actor is the user an audit row names as having acted: the principal of
// the request ctx belongs to, 0 (nobody) from the command line.
func actor(ctx context.Context) int64 {
	p, _ := principalFromContext(ctx)
	return p.UserID
}

// BearerToken returns the token of an "Authorization: Bearer" header.
func BearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// newToken returns a random token (prefix + 32 bytes, base64url) and the
// SHA-256 that identifies it in the database. A fast hash is enough: with
// 256 random bits there is nothing to guess, and lookups stay cheap.
func newToken(prefix string) (token string, hash []byte) {
	b := make([]byte, randomBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it crashes the program instead)
	token = prefix + base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(token))
	return token, sum[:]
}

// tokenHash checks a presented token's shape before any database work and
// returns its hash.
func tokenHash(token, prefix string) ([]byte, bool) {
	body, ok := strings.CutPrefix(token, prefix)
	if !ok || len(body) != encodedLen {
		return nil, false
	}
	if b, err := base64.RawURLEncoding.Strict().DecodeString(body); err != nil || len(b) != randomBytes {
		return nil, false
	}
	sum := sha256.Sum256([]byte(token))
	return sum[:], true
}
