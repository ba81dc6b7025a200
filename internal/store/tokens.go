package store

import (
	"context"
	"fmt"
	"time"

	"github.com/upcheck/upcheck/internal/db"
)

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

// TokenListing is a token as the lists show it: with its owner's email and
// whether it has expired (on the database clock).
type TokenListing struct {
	APIToken
	OwnerEmail string
	Expired    bool
}

// APITokensWithOwner lists every token, or the tokens of one user when
// userID is not 0, revoked and expired ones included, oldest first.
func (s *Store) APITokensWithOwner(ctx context.Context, userID int64) ([]TokenListing, error) {
	rows, err := s.q.APITokenListWithOwner(ctx, s.pool, optionalID(userID))
	if err != nil {
		return nil, mapError(fmt.Errorf("list api tokens: %w", err))
	}
	out := make([]TokenListing, len(rows))
	for i, r := range rows {
		out[i] = TokenListing{
			APIToken: APIToken{
				ID: r.ID, UserID: r.UserID, Name: r.Name, CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt,
				ExpiresAt: r.ExpiresAt, Revoked: r.Revoked,
			},
			OwnerEmail: r.OwnerEmail, Expired: r.Expired,
		}
	}
	return out, nil
}
