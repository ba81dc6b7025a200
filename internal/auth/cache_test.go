package auth

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/testing/wait"
)

// With the principal cache, a burst of requests costs one query (the
// second authentication succeeds without the database), while a logout or
// a revocation on this instance takes effect at once and the cache never
// outlives its TTL.
func TestPrincipalCache(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{PrincipalCacheTTL: 300 * time.Millisecond})
	ctx := context.Background()
	if _, err := b.svc.CreateUser(ctx, "a@example.test", RoleAdmin, "a long enough password"); err != nil {
		t.Fatal(err)
	}
	session, _, err := b.svc.Login(ctx, "a@example.test", "a long enough password", "127.0.0.1", "test")
	if err != nil {
		t.Fatal(err)
	}
	token, err := b.svc.CreateToken(ctx, "a@example.test", "t")
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.svc.Authenticate(ctx, session)
	if err != nil {
		t.Fatal(err)
	}
	cached := time.Now() // no later than the token's entry is made
	tp, err := b.svc.AuthenticateToken(ctx, token)
	if err != nil {
		t.Fatal(err)
	}

	// Another instance revokes the token and ends the session behind this
	// one's back: this instance trusts its cache for at most the TTL.
	b.db.MustExec(t, "UPDATE api_tokens SET revoked = true")
	b.db.MustExec(t, "DELETE FROM sessions")
	if _, err := b.svc.AuthenticateToken(ctx, token); err != nil {
		t.Fatalf("within the TTL the cached token should answer without the database: %v", err)
	}
	// Past the TTL both are refused: asked until they are, the first
	// refusal no sooner than the TTL after the token was cached.
	wait.For(t, "the token revoked elsewhere refused", wait.Guard, func() (bool, error) {
		switch _, err := b.svc.AuthenticateToken(ctx, token); {
		case errors.Is(err, ErrUnauthenticated):
			return true, nil
		case err != nil:
			return false, err
		}
		return false, nil
	})
	if since := time.Since(cached); since < 300*time.Millisecond {
		t.Fatalf("the cached token was refused %s after it was cached, within the TTL", since)
	}
	if _, err := b.svc.Authenticate(ctx, session); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("session ended elsewhere, after the TTL: %v, want ErrUnauthenticated", err)
	}

	// On this instance, logout and revocation drop the cache at once.
	session2, _, err := b.svc.Login(ctx, "a@example.test", "a long enough password", "127.0.0.1", "test")
	if err != nil {
		t.Fatal(err)
	}
	p, err = b.svc.Authenticate(ctx, session2)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.svc.Logout(ctx, p.SessionID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.Authenticate(ctx, session2); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("after logout: %v", err)
	}
	token2, _ := b.svc.CreateToken(ctx, "a@example.test", "t2")
	tp, err = b.svc.AuthenticateToken(ctx, token2)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.svc.RevokeToken(ctx, tp.TokenID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.AuthenticateToken(ctx, token2); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("after revocation: %v", err)
	}
}

// A cached token principal never outlives the token's end: with an hour of
// cache, a token that ends in a second is refused, as expired, soon after.
func TestPrincipalCacheStopsAtTheTokensEnd(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{PrincipalCacheTTL: time.Hour})
	ctx := context.Background()
	b.user(t, "a@example.test", RoleAdmin)
	token, tk, err := b.svc.CreateTokenFor(ctx, TokenRequest{Email: "a@example.test", Name: "short"})
	if err != nil {
		t.Fatal(err)
	}
	b.db.MustExec(t, "UPDATE api_tokens SET expires_at = clock_timestamp() + interval '1 second' WHERE id = $1", tk.ID)
	if _, err := b.svc.AuthenticateToken(ctx, token); err != nil {
		t.Fatal(err) // cached now, for an hour at most
	}
	wait.For(t, "a token past its end refused as expired, though cached for an hour", wait.Guard, func() (bool, error) {
		_, err := b.svc.AuthenticateToken(ctx, token)
		if errors.Is(err, ErrTokenExpired) {
			return true, nil
		}
		return false, err
	})
}
