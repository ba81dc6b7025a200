package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/upcheck/upcheck/internal/store"
)

// Token scopes, in the words of the lists, the audit log and the command
// line.
const (
	// ScopeFull: the token has every permission of its owner's role.
	ScopeFull = "full"
	// ScopeReadOnly: the token has only the view permissions of its
	// owner's role (ViewPermissions), and makes no state change.
	ScopeReadOnly = "read-only"
)

// NoExpiry, as TokenRequest.Expires, asks for a token that lasts until it
// is revoked, whatever Config.TokenTTL says.
const NoExpiry time.Duration = -1

// Bounds of a token's chosen lifetime: shorter is a typo more often than
// a wish, longer is what NoExpiry says.
const (
	MinTokenLifetime = time.Minute
	MaxTokenLifetime = 100 * 365 * 24 * time.Hour
)

// TokenRequest is a token to create.
type TokenRequest struct {
	// Email is the owner's: the token acts as this account.
	Email string
	// Name says what uses the token; empty: "api".
	Name string
	// ReadOnly limits the token to its owner's view permissions.
	ReadOnly bool
	// Expires is the token's lifetime from its creation, between
	// MinTokenLifetime and MaxTokenLifetime; NoExpiry: until revoked; 0:
	// Config.TokenTTL (until revoked when that is 0).
	Expires time.Duration
	// Sites limits the token to these sites (by name), which its owner
	// must be able to see; empty: it sees what its owner sees.
	Sites []string
}

// CreateToken creates a token of full scope for the user with this email
// under Config.TokenTTL, as CreateTokenFor does, and returns its secret.
func (s *Service) CreateToken(ctx context.Context, email, name string) (string, error) {
	raw, _, err := s.CreateTokenFor(ctx, TokenRequest{Email: email, Name: name})
	return raw, err
}

// CreateTokenFor creates an API token as req says and returns its secret
// and what was stored; only its hash is stored, so this is the one time the
// secret can be shown. The token acts with its owner's role (only its view
// permissions when read-only), needs no CSRF token, and lasts until it
// expires or is revoked. The audit row names who acted (the principal in
// ctx, an admin in the AdminCP, or nobody from the command line), the
// token's scope and its expiry.
func (s *Service) CreateTokenFor(ctx context.Context, req TokenRequest) (string, store.APIToken, error) {
	name := strings.TrimSpace(req.Name)
	if name == "" {
		name = defaultName
	}
	if len(name) > maxNameBytes || !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl) {
		return "", store.APIToken{}, fmt.Errorf("%w: at most %d printable bytes", ErrInvalidTokenName, maxNameBytes)
	}
	ttl := req.Expires
	switch {
	case ttl == 0:
		ttl = s.cfg.TokenTTL
	case ttl == NoExpiry:
		ttl = 0
	case ttl < MinTokenLifetime || ttl > MaxTokenLifetime:
		return "", store.APIToken{}, fmt.Errorf("%w: %s", ErrInvalidTokenLifetime, ttl)
	}
	email := req.Email
	u, err := s.st.UserByEmail(ctx, strings.TrimSpace(email))
	if err != nil {
		return "", store.APIToken{}, dbError(fmt.Sprintf("create token: user %q", email), err)
	}
	if u.Disabled {
		return "", store.APIToken{}, fmt.Errorf("create token: user %q: %w", email, ErrDisabled)
	}
	siteIDs, err := s.tokenSites(ctx, u, req.Sites)
	if err != nil {
		return "", store.APIToken{}, err
	}
	raw, hash := newToken(TokenPrefix)
	var t store.APIToken
	err = s.st.WithTx(ctx, func(tx *store.Tx) error {
		var err error
		t, err = tx.APITokenCreate(ctx, store.NewAPIToken{UserID: u.ID, Name: name, Hash: hash, TTL: ttl, ReadOnly: req.ReadOnly})
		if err != nil {
			return err
		}
		detail := map[string]any{
			"token_id": t.ID, "name": t.Name, "user_id": u.ID,
			"scope": TokenScope(t.ReadOnly), "expires_at": expiryText(t.ExpiresAt),
		}
		if siteIDs != nil {
			if err := tx.TokenSetSites(ctx, t.ID, siteIDs); err != nil {
				return err
			}
			detail["sites"] = strings.Join(req.Sites, ", ")
		}
		return tx.AuditAppend(ctx, actor(ctx), AuditTokenCreate, detail)
	})
	if err != nil {
		return "", store.APIToken{}, dbError("create token", err)
	}
	s.logger.InfoContext(ctx, "api token created", "user_id", u.ID, "name", name, "token_id", t.ID,
		"scope", TokenScope(t.ReadOnly), "expires_at", expiryText(t.ExpiresAt), "by", actor(ctx))
	return raw, t, nil
}

// tokenSites resolves the sites a new token of u is limited to: nil when
// none are named; ErrUnknownSite, or ErrSitesBeyondOwner for a site u may
// not see.
func (s *Service) tokenSites(ctx context.Context, u store.User, names []string) ([]int64, error) {
	if len(names) == 0 {
		return nil, nil
	}
	ids, err := s.siteIDs(ctx, names)
	if err != nil {
		return nil, err
	}
	limited, owners, err := s.st.UserSiteNames(ctx, u.ID)
	if err != nil {
		return nil, dbError("create token: owner's sites", err)
	}
	if limited {
		for _, n := range names {
			if n = strings.TrimSpace(n); n != "" && !slices.Contains(owners, n) {
				return nil, fmt.Errorf("%w: %s may not see %q", ErrSitesBeyondOwner, u.Email, n)
			}
		}
	}
	return ids, nil
}

// TokenScope is a token's scope in words: ScopeReadOnly or ScopeFull.
func TokenScope(readOnly bool) string {
	if readOnly {
		return ScopeReadOnly
	}
	return ScopeFull
}

// expiryText is an expiry as the audit log and the logs keep it: RFC 3339
// in UTC, or "never".
func expiryText(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}

// ParseTokenLifetime reads a token's lifetime as the command line and the
// AdminCP form give it: "never" (NoExpiry), a number of days ("90d") or of
// years of 365 days ("1y"), or a Go duration ("12h", "90m"), between
// MinTokenLifetime and MaxTokenLifetime. The empty string is 0: the
// default (Config.TokenTTL). Errors wrap ErrInvalidTokenLifetime and say
// what is wanted.
func ParseTokenLifetime(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "":
		return 0, nil
	case "never":
		return NoExpiry, nil
	}
	var d time.Duration
	if n, unit := s[:len(s)-1], s[len(s)-1]; unit == 'd' || unit == 'y' {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 || days > int(MaxTokenLifetime/(24*time.Hour)) {
			return 0, fmt.Errorf("%w: %q: want never, days (90d), years (1y) or a duration (12h)", ErrInvalidTokenLifetime, s)
		}
		if unit == 'y' {
			days *= 365
		}
		d = time.Duration(days) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%w: %q: want never, days (90d), years (1y) or a duration (12h)", ErrInvalidTokenLifetime, s)
		}
	}
	if d < MinTokenLifetime || d > MaxTokenLifetime {
		return 0, fmt.Errorf("%w: %q: at least a minute and at most 100 years, or never", ErrInvalidTokenLifetime, s)
	}
	return d, nil
}

// AuthenticateToken returns the principal of an API token (ViaToken set,
// ReadOnly as the token's scope). Errors as for Authenticate; a token that
// has expired is ErrTokenExpired, which is also ErrUnauthenticated.
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
	if tu.Expired {
		return Principal{}, fmt.Errorf("token %d: %w", tu.Token.ID, ErrTokenExpired)
	}
	p := Principal{UserID: tu.User.ID, Email: tu.User.Email, Role: tu.User.Role, ViaToken: true, TokenID: tu.Token.ID,
		ReadOnly: tu.Token.ReadOnly, Sites: sitesOf(tu.UserSites, tu.TokenSites)}
	s.cache.putFor(hash, p, tu.ExpiresIn)
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

// Token returns one API token as Tokens lists it; store.ErrNotFound if
// there is none.
func (s *Service) Token(ctx context.Context, id int64) (store.TokenListing, error) {
	t, err := s.st.APITokenWithOwner(ctx, id)
	if err != nil {
		return store.TokenListing{}, dbError(fmt.Sprintf("token %d", id), err)
	}
	return t, nil
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
