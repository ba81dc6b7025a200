package auth

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

const newPassword = "a brand new passphrase"

// A new password signs the account out everywhere: every session ends
// (also one this instance has cached), the old password stops working, and
// other accounts and the account's API tokens are left alone.
func TestSetPasswordEndsTheAccountsSessions(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{PrincipalCacheTTL: time.Hour})
	ctx := context.Background()
	ada := b.user(t, "ada@example.org", RoleAdmin)
	b.user(t, "bob@example.org", RoleAdmin)
	first, _ := b.login(t, "ada@example.org")
	second, _ := b.login(t, "ada@example.org")
	bobs, _ := b.login(t, "bob@example.org")
	token, err := b.svc.CreateToken(ctx, "ada@example.org", "monitoring")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.Authenticate(ctx, first); err != nil { // now cached for an hour
		t.Fatal(err)
	}

	change, err := b.svc.SetPassword(ctx, "ADA@example.org", newPassword)
	if err != nil {
		t.Fatal(err)
	}
	if change.User.ID != ada.ID || change.SessionsEnded != 2 || change.LiveTokens != 1 {
		t.Fatalf("change = %+v, want ada's 2 sessions ended and 1 live token", change)
	}
	for _, s := range []string{first, second} {
		p, err := b.svc.Authenticate(ctx, s)
		wantUnauthenticated(t, p, err)
	}
	if _, err := b.svc.Authenticate(ctx, bobs); err != nil {
		t.Fatalf("another account's session ended: %v", err)
	}
	if _, err := b.svc.AuthenticateToken(ctx, token); err != nil {
		t.Fatalf("the API token stopped working: %v", err)
	}
	if _, _, err := b.svc.Login(ctx, "ada@example.org", goodPassword, "192.0.2.9", ""); !errors.Is(err, ErrInvalidCredentials) {
		t.Fatalf("login with the old password: %v", err)
	}
	if _, _, err := b.svc.Login(ctx, "ada@example.org", newPassword, "192.0.2.9", ""); err != nil {
		t.Fatalf("login with the new password: %v", err)
	}
	var audits int
	b.db.QueryRow(t, "SELECT count(*) FROM audit_log WHERE action = $1 AND (detail->>'user_id')::bigint = $2 AND (detail->>'sessions_ended')::int = 2",
		AuditUserPassword, ada.ID).Scan(&audits)
	if audits != 1 {
		t.Fatalf("password audit rows: %d, want 1", audits)
	}
}

// The rule is the one of account creation, and a refused password changes
// nothing.
func TestSetPasswordRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	ctx := context.Background()
	b.user(t, "ada@example.org", RoleViewer)
	session, _ := b.login(t, "ada@example.org")
	for _, pw := range []string{"", "short"} {
		if _, err := b.svc.SetPassword(ctx, "ada@example.org", pw); !errors.Is(err, ErrPasswordTooShort) {
			t.Fatalf("password %q: %v, want ErrPasswordTooShort", pw, err)
		}
	}
	if _, err := b.svc.SetPassword(ctx, "nobody@example.org", newPassword); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown account: %v, want ErrNotFound", err)
	}
	if _, err := b.svc.Authenticate(ctx, session); err != nil {
		t.Fatalf("a refused change ended the session: %v", err)
	}
	if ok, err := b.svc.PasswordIs(ctx, "ada@example.org", goodPassword); err != nil || !ok {
		t.Fatalf("PasswordIs(old) after refusals = %v, %v; want the old password kept", ok, err)
	}
	if ok, err := b.svc.PasswordIs(ctx, "nobody@example.org", goodPassword); err != nil || ok {
		t.Fatalf("PasswordIs for an unknown account = %v, %v", ok, err)
	}
}

// A login that checked the old password while the change was being made
// gets no session: the change commits while the login waits on the
// account's row, and the login then sees the new hash and fails. Without
// the re-read under the lock the login would open a session that outlives
// the change.
func TestLoginRacingAPasswordChangeGetsNoSession(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	ctx := context.Background()
	ada := b.user(t, "ada@example.org", RoleAdmin)
	newHash, err := b.svc.cfg.Hasher.Hash(newPassword)
	if err != nil {
		t.Fatal(err)
	}

	// The change, as SetPassword makes it, held open.
	change, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer change.Rollback(ctx)
	if _, err := change.Exec(ctx, "UPDATE users SET password_hash = $1 WHERE id = $2", newHash, ada.ID); err != nil {
		t.Fatal(err)
	}
	loginDone := make(chan error, 1)
	go func() {
		_, _, err := b.svc.Login(ctx, "ada@example.org", goodPassword, "192.0.2.1", "")
		loginDone <- err
	}()
	// Wait until the login waits on the row lock (it read the old hash,
	// which the open change does not hide, and verified it).
	wait.True(t, "the login waits on the account's row lock", wait.Guard, func() bool {
		var waiting int
		b.db.QueryRow(t, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").Scan(&waiting)
		return waiting > 0
	})
	if _, err := change.Exec(ctx, "DELETE FROM sessions WHERE user_id = $1", ada.ID); err != nil {
		t.Fatal(err)
	}
	if err := change.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-loginDone; !errors.Is(err, ErrInvalidCredentials) {
		t.Fatalf("login racing the change: %v, want ErrInvalidCredentials", err)
	}
	var sessions int
	b.db.QueryRow(t, "SELECT count(*) FROM sessions WHERE user_id = $1", ada.ID).Scan(&sessions)
	if sessions != 0 {
		t.Fatalf("%d sessions outlive the password change", sessions)
	}
}

// Using a token records when, but at most once a minute: a busy token does
// not write on every request.
func TestTokenLastUsedIsRecordedAtMostOnceAMinute(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	ctx := context.Background()
	b.user(t, "ada@example.org", RoleViewer)
	raw, err := b.svc.CreateToken(ctx, "ada@example.org", "ci")
	if err != nil {
		t.Fatal(err)
	}
	// age is how long ago the token was last used, in seconds; -1: never.
	age := func() float64 {
		t.Helper()
		var seconds float64
		b.db.QueryRow(t, "SELECT coalesce(extract(epoch FROM clock_timestamp() - last_used_at)::float8, -1) FROM api_tokens").Scan(&seconds)
		return seconds
	}
	if a := age(); a != -1 {
		t.Fatalf("a new token was used %.0fs ago; want never", a)
	}
	use := func() {
		t.Helper()
		if _, err := b.svc.AuthenticateToken(ctx, raw); err != nil {
			t.Fatal(err)
		}
	}
	use()
	if a := age(); a < 0 || a > 5 {
		t.Fatalf("first use recorded %.0fs ago; want now", a)
	}
	b.exec(t, "UPDATE api_tokens SET last_used_at = clock_timestamp() - interval '50 seconds'")
	use()
	if a := age(); a < 49 {
		t.Fatalf("last_used_at rewritten %.0fs after the previous write; want at most once a minute", 50-a)
	}
	b.exec(t, "UPDATE api_tokens SET last_used_at = clock_timestamp() - interval '61 seconds'")
	use()
	if a := age(); a < 0 || a > 5 {
		t.Fatalf("last_used_at is %.0fs old after a use a minute later; want it moved", a)
	}
	tokens, err := b.svc.Tokens(ctx, "")
	if err != nil || len(tokens) != 1 || tokens[0].LastUsedAt == nil {
		t.Fatalf("tokens %+v, %v: want the last use listed", tokens, err)
	}
}

// Tokens lists everyone's tokens with their owners, or one user's; revoked
// and expired ones are listed as such.
func TestTokensListsOwnersAndStates(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	ctx := context.Background()
	b.user(t, "ada@example.org", RoleAdmin)
	b.user(t, "bob@example.org", RoleViewer)
	for _, c := range []struct{ email, name string }{{"ada@example.org", "deploy"}, {"bob@example.org", "metrics"}, {"bob@example.org", "old"}} {
		if _, err := b.svc.CreateToken(ctx, c.email, c.name); err != nil {
			t.Fatal(err)
		}
	}
	b.exec(t, "UPDATE api_tokens SET expires_at = clock_timestamp() - interval '1 second' WHERE name = 'old'")
	all, err := b.svc.Tokens(ctx, "")
	if err != nil || len(all) != 3 {
		t.Fatalf("all tokens: %+v, %v", all, err)
	}
	if err := b.svc.RevokeToken(ctx, all[0].ID); err != nil {
		t.Fatal(err)
	}
	all, err = b.svc.Tokens(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, tk := range all {
		got = append(got, tk.Name+" "+tk.OwnerEmail+" "+map[bool]string{true: "revoked", false: "-"}[tk.Revoked]+" "+map[bool]string{true: "expired", false: "-"}[tk.Expired])
	}
	want := []string{"deploy ada@example.org revoked -", "metrics bob@example.org - -", "old bob@example.org - expired"}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("tokens = %q, want %q", got, want)
	}
	bobs, err := b.svc.Tokens(ctx, "bob@example.org")
	if err != nil || len(bobs) != 2 {
		t.Fatalf("bob's tokens: %+v, %v", bobs, err)
	}
	if _, err := b.svc.Tokens(ctx, "nobody@example.org"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("tokens of an unknown user: %v", err)
	}
}

// In the AdminCP the signed-in admin acted: the audit rows name them, and
// the token's owner in their detail.
func TestTokenAuditNamesThePrincipal(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	admin := b.user(t, "ada@example.org", RoleAdmin)
	bob := b.user(t, "bob@example.org", RoleViewer)
	ctx := WithPrincipal(context.Background(), Principal{UserID: admin.ID, Email: admin.Email, Role: admin.Role})
	if _, err := b.svc.CreateToken(ctx, "bob@example.org", "metrics"); err != nil {
		t.Fatal(err)
	}
	tokens, err := b.svc.Tokens(ctx, "bob@example.org")
	if err != nil || len(tokens) != 1 {
		t.Fatalf("tokens %+v, %v", tokens, err)
	}
	if err := b.svc.RevokeToken(ctx, tokens[0].ID); err != nil {
		t.Fatal(err)
	}
	rows, err := b.db.Pool.Query(context.Background(), "SELECT action FROM audit_log WHERE user_id = $1 AND (detail->>'user_id')::bigint = $2 ORDER BY id", admin.ID, bob.ID)
	if err != nil {
		t.Fatal(err)
	}
	actions, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(actions) != 2 || actions[0] != string(AuditTokenCreate) || actions[1] != string(AuditTokenRevoke) {
		t.Fatalf("audit rows by the admin about bob: %q, %v", actions, err)
	}
}
