package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

type bundle struct {
	db *pgtest.DB
	st *store.Store
	// held is how long the last writeTreeAt's transaction took.
	held time.Duration
}

func setup(t *testing.T) *bundle {
	t.Helper()
	d := pgtest.New(t)
	return &bundle{db: d, st: store.New(d.Pool)}
}

func (b *bundle) exec(t *testing.T, sql string) {
	t.Helper()
	if _, err := b.db.Pool.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func (b *bundle) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := b.db.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func TestUserCreateConflict(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	u, err := b.st.UserCreate(ctx, "Ada@example.org", "admin", "$argon2id$x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.UserCreate(ctx, "ada@EXAMPLE.org", "viewer", "$argon2id$x"); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("duplicate email: %v, want ErrConflict", err)
	}
	if _, err := b.st.UserCreate(ctx, "eve@example.org", "root", "$argon2id$x"); err == nil || errors.Is(err, store.ErrConflict) {
		t.Fatalf("unknown role: %v, want a check violation", err)
	}
	got, err := b.st.UserByEmail(ctx, "ADA@example.org")
	if err != nil || got != u {
		t.Fatalf("UserByEmail: %+v, %v; want %+v", got, err, u)
	}
	if _, err := b.st.UserByEmail(ctx, "nobody@example.org"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown email: %v, want ErrNotFound", err)
	}
	if err := b.st.UserSetDisabled(ctx, 424242, true); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("disable unknown user: %v, want ErrNotFound", err)
	}
}

// A login's rehash of the old password never undoes a password change
// that committed since the login read the hash.
func TestUserUpgradePasswordHashKeepsAChangedPassword(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	u, err := b.st.UserCreate(ctx, "ada@example.org", "admin", "$argon2id$old")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.WithTx(ctx, func(tx *store.Tx) error { return tx.UserSetPasswordHash(ctx, u.ID, "$argon2id$changed") }); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.st.UserUpgradePasswordHash(ctx, u.ID, "$argon2id$old", "$argon2id$old-rehashed"); err != nil || ok {
		t.Fatalf("upgrade over a changed password: %v, %v; want refused", ok, err)
	}
	if n := b.count(t, "SELECT count(*) FROM users WHERE password_hash = '$argon2id$changed'"); n != 1 {
		t.Fatal("the changed password was overwritten")
	}
	if ok, err := b.st.UserUpgradePasswordHash(ctx, u.ID, "$argon2id$changed", "$argon2id$changed-rehashed"); err != nil || !ok {
		t.Fatalf("upgrade of the current hash: %v, %v", ok, err)
	}
	if err := b.st.WithTx(ctx, func(tx *store.Tx) error { return tx.UserSetPasswordHash(ctx, 424242, "$argon2id$x") }); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("set the password of an unknown user: %v, want ErrNotFound", err)
	}
}

// The throttling statement, step by step on the database clock; the
// attempt that locks the key writes the lock's one audit row.
func TestLoginAttemptRegister(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	limit := store.LoginLimit{MaxFailures: 3, Window: 10 * time.Minute, Lockout: 5 * time.Minute}
	audit := store.LoginLockAudit{Action: "user.lockout", Detail: map[string]any{"email": "a@example.org"}}
	locks := 0
	register := func() time.Duration {
		t.Helper()
		a, err := b.st.LoginAttemptRegister(ctx, "email:a@example.org", limit, audit)
		if err != nil {
			t.Fatal(err)
		}
		if a.Locked {
			locks++
		}
		return a.RetryAfter
	}
	for i := range 3 {
		if wait := register(); wait != 0 {
			t.Fatalf("attempt %d refused for %v", i+1, wait)
		}
	}
	if wait := register(); wait <= 4*time.Minute || wait > 5*time.Minute {
		t.Fatalf("fourth attempt: wait %v, want the 5 minute lockout", wait)
	}
	if wait := register(); wait <= 4*time.Minute {
		t.Fatalf("attempt while locked: wait %v", wait)
	}
	if n := b.count(t, "SELECT failures FROM login_attempts"); n != 4 {
		t.Fatalf("failures %d: refused attempts during a lock must not count", n)
	}
	var audited int
	var detail string
	b.db.QueryRow(t, `SELECT count(*), coalesce(max(detail->>'email' || ' ' || (detail->>'attempts') || ' ' ||
		((detail->>'locked_until')::timestamptz > clock_timestamp() + interval '4 minutes')::text), '')
		FROM audit_log WHERE action = 'user.lockout'`).Scan(&audited, &detail)
	if audited != 1 || locks != 1 || detail != "a@example.org 4 true" {
		t.Fatalf("after one lock: %d audit rows (%q), %d attempts said Locked; want one of each, with 4 attempts and the lock's end", audited, detail, locks)
	}
	// A success cannot lift a lock that attempts in parallel just set.
	if err := b.st.LoginAttemptReset(ctx, "email:a@example.org"); err != nil {
		t.Fatal(err)
	}
	if wait := register(); wait == 0 {
		t.Fatal("reset lifted a lock")
	}
	// When the lock ends, a new window starts.
	b.exec(t, "UPDATE login_attempts SET locked_until = clock_timestamp() - interval '1 second'")
	if wait := register(); wait != 0 {
		t.Fatalf("first attempt after the lock: wait %v", wait)
	}
	if n := b.count(t, "SELECT failures FROM login_attempts"); n != 1 {
		t.Fatalf("failures after the lock: %d, want 1", n)
	}
	if n := b.count(t, "SELECT count(*) FROM audit_log WHERE action = 'user.lockout'"); n != 1 || locks != 1 {
		t.Fatalf("%d lock audit rows, %d locks said: a refused attempt or a reset must not audit a lock", n, locks)
	}
	if err := b.st.LoginAttemptGiveBack(ctx, "email:a@example.org"); err != nil {
		t.Fatal(err)
	}
	if n := b.count(t, "SELECT failures FROM login_attempts"); n != 0 {
		t.Fatalf("failures after give back: %d, want 0", n)
	}
	if err := b.st.LoginAttemptReset(ctx, "email:a@example.org"); err != nil {
		t.Fatal(err)
	}
	if n := b.count(t, "SELECT count(*) FROM login_attempts"); n != 0 {
		t.Fatal("reset of an unlocked key left its row")
	}
	// A second lock is a second audit row.
	for range 4 {
		register()
	}
	if n := b.count(t, "SELECT count(*) FROM audit_log WHERE action = 'user.lockout'"); n != 2 || locks != 2 {
		t.Fatalf("after a second lock: %d audit rows, %d locks said; want 2", n, locks)
	}
}
