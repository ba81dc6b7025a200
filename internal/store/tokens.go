package store

import (
	"context"
	"fmt"
	"math"
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
	// ReadOnly limits the token to its owner's view permissions.
	ReadOnly bool
}

// TokenUser is an API token that is not revoked, and its user, who is not
// disabled.
type TokenUser struct {
	Token APIToken
	User  User
	// Expired is set when the token's end has passed (on the database
	// clock): it is there, but no longer works.
	Expired bool
	// ExpiresIn is the time left before its end, on the database clock;
	// math.MaxInt64 (the largest Duration) for a token without one.
	ExpiresIn time.Duration
	// UserSites and TokenSites are the sites the owner and the token are
	// limited to: the token sees where both allow.
	UserSites, TokenSites SiteLimit
}

// NewAPIToken is what APITokenCreate stores.
type NewAPIToken struct {
	UserID int64
	Name   string
	Hash   []byte
	// TTL is the token's lifetime from now; 0: it does not expire.
	TTL      time.Duration
	ReadOnly bool
}

// APITokenCreate stores a token by its hash.
func (e *Executor) APITokenCreate(ctx context.Context, n NewAPIToken) (APIToken, error) {
	r, err := e.q.APITokenCreate(ctx, e.dbtx, db.APITokenCreateParams{
		UserID: n.UserID, Name: n.Name, TokenHash: n.Hash, TtlSeconds: n.TTL.Seconds(), ReadOnly: n.ReadOnly,
	})
	if err != nil {
		return APIToken{}, mapAuthError(fmt.Errorf("create api token: %w", err))
	}
	return APIToken(r), nil
}

// APITokenAuthenticate returns the token with this hash and its user if the
// token is not revoked and its user not disabled; TokenUser.Expired says
// whether it has expired. It moves last_used_at of a token that has not
// expired when the stored one is older than touch. ErrNotFound when there
// is no such token.
func (e *Executor) APITokenAuthenticate(ctx context.Context, hash []byte, touch time.Duration) (TokenUser, error) {
	r, err := e.q.APITokenAuthenticate(ctx, e.dbtx, db.APITokenAuthenticateParams{TokenHash: hash, TouchSeconds: touch.Seconds()})
	if err != nil {
		return TokenUser{}, mapError(fmt.Errorf("authenticate api token: %w", err))
	}
	return TokenUser{
		Token: APIToken{
			ID: r.ID, UserID: r.UserID, Name: r.Name, CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt,
			ExpiresAt: r.ExpiresAt, Revoked: r.Revoked, ReadOnly: r.ReadOnly,
		},
		User:       User{ID: r.UserID, Email: r.Email, Role: r.Role, Disabled: r.UserDisabled, CreatedAt: r.UserCreatedAt},
		Expired:    r.Expired,
		ExpiresIn:  secondsDuration(r.ExpiresInSeconds),
		UserSites:  SiteLimit{Limited: r.UserSitesLimited, IDs: r.UserSiteIds},
		TokenSites: SiteLimit{Limited: r.TokenSitesLimited, IDs: r.TokenSiteIds},
	}, nil
}

// secondsDuration is a number of seconds as a Duration, capped at the
// largest one (Infinity included).
func secondsDuration(secs float64) time.Duration {
	if secs >= float64(math.MaxInt64)/float64(time.Second) {
		return math.MaxInt64
	}
	return time.Duration(secs * float64(time.Second))
}

// APITokenRevoke revokes a token and returns its owner; ErrNotFound if there
// is no such token. Revoking twice is not an error.
func (e *Executor) APITokenRevoke(ctx context.Context, id int64) (userID int64, err error) {
	userID, err = e.q.APITokenRevoke(ctx, e.dbtx, id)
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
	// SitesLimited: the token sees only the sites listed for it
	// (TokenSiteNames), within its owner's.
	SitesLimited bool
}

// APITokensWithOwner lists every token, or the tokens of one user when
// userID is not 0, revoked and expired ones included, oldest first.
func (e *Executor) APITokensWithOwner(ctx context.Context, userID int64) ([]TokenListing, error) {
	rows, err := e.q.APITokenListWithOwner(ctx, e.dbtx, optionalID(userID))
	if err != nil {
		return nil, mapError(fmt.Errorf("list api tokens: %w", err))
	}
	out := make([]TokenListing, len(rows))
	for i, r := range rows {
		out[i] = tokenListingRow(r).listing()
	}
	return out, nil
}

// APITokenWithOwner returns one token as APITokensWithOwner lists it;
// ErrNotFound if there is no such token.
func (e *Executor) APITokenWithOwner(ctx context.Context, id int64) (TokenListing, error) {
	r, err := e.q.APITokenGetWithOwner(ctx, e.dbtx, id)
	if err != nil {
		return TokenListing{}, mapError(fmt.Errorf("get api token %d: %w", id, err))
	}
	return tokenListingRow(r).listing(), nil
}

// tokenListingRow is the row both listing queries return.
type tokenListingRow db.APITokenGetWithOwnerRow

func (r tokenListingRow) listing() TokenListing {
	return TokenListing{
		APIToken: APIToken{
			ID: r.ID, UserID: r.UserID, Name: r.Name, CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt,
			ExpiresAt: r.ExpiresAt, Revoked: r.Revoked, ReadOnly: r.ReadOnly,
		},
		OwnerEmail: r.OwnerEmail, Expired: r.Expired, SitesLimited: r.SitesLimited,
	}
}
