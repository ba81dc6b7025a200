package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/pgtest"
	"github.com/upcheck/upcheck/internal/store"
)

type bundle struct {
	db *pgtest.DB
	st *store.Store
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

// A dismissal and its audit row commit together: when the audit row cannot
// be written, the dismissal is not there either.
func TestDismissAdvisoryAuditsInSameTransaction(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	u, err := b.st.UserCreate(ctx, "ada@example.org", "admin", "$argon2id$x")
	if err != nil {
		t.Fatal(err)
	}

	if err := b.st.DismissAdvisory(ctx, "blog", "ACME-2026-007", u.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.st.DismissAdvisory(ctx, "blog", "ACME-2026-007", u.ID); err != nil {
		t.Fatalf("second dismissal: %v", err)
	}
	if err := b.st.DismissAdvisory(ctx, "core", "CORE-1", 0); err != nil {
		t.Fatal(err)
	}
	// Rows written by one transaction carry its id in xmin.
	if n := b.count(t, `SELECT count(*) FROM advisory_dismissals d JOIN audit_log a
		ON a.xmin = d.xmin AND a.detail->>'component' = d.component_code AND a.detail->>'advisory' = d.advisory_id`); n != 2 {
		t.Fatalf("%d of 2 dismissals share their transaction with their audit row", n)
	}
	got, err := b.st.DismissalsFor(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got["blog"]["ACME-2026-007"] || !got["core"]["CORE-1"] || got["blog"]["CORE-1"] || got["shop"]["X"] {
		t.Fatalf("dismissals %v", got)
	}
	entries, err := b.st.AuditList(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("audit entries %+v; want one per change", entries)
	}
	var detail map[string]string
	if err := json.Unmarshal(entries[1].Detail, &detail); err != nil {
		t.Fatal(err)
	}
	if e := entries[1]; e.Action != store.AuditAdvisoryDismiss || e.UserID != u.ID || detail["component"] != "blog" || detail["advisory"] != "ACME-2026-007" {
		t.Fatalf("audit entry %+v %v", e, detail)
	}
	if entries[0].UserID != 0 {
		t.Fatalf("dismissal without a user audited as user %d", entries[0].UserID)
	}

	if err := b.st.UndismissAdvisory(ctx, "blog", "ACME-2026-007", u.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.st.UndismissAdvisory(ctx, "blog", "ACME-2026-007", u.ID); err != nil {
		t.Fatalf("second undismissal: %v", err)
	}
	if n := b.count(t, "SELECT count(*) FROM advisory_dismissals WHERE component_code = 'blog'"); n != 0 {
		t.Fatalf("%d dismissals left after undismiss", n)
	}
	if n := b.count(t, "SELECT count(*) FROM audit_log WHERE action = $1 AND user_id = $2", store.AuditAdvisoryUndismiss, u.ID); n != 1 {
		t.Fatalf("undismiss audit rows: %d, want 1", n)
	}

	// Make every audit insert fail: the dismissal must roll back with it.
	b.exec(t, `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit refused'; END $$`)
	b.exec(t, `CREATE TRIGGER refuse BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse()`)
	if err := b.st.DismissAdvisory(ctx, "shop", "SHOP-9", u.ID); err == nil {
		t.Fatal("dismissal succeeded although its audit row failed")
	}
	if n := b.count(t, "SELECT count(*) FROM advisory_dismissals WHERE component_code = 'shop'"); n != 0 {
		t.Fatal("dismissal committed without its audit row")
	}
	if err := b.st.UndismissAdvisory(ctx, "core", "CORE-1", u.ID); err == nil {
		t.Fatal("undismissal succeeded although its audit row failed")
	}
	if n := b.count(t, "SELECT count(*) FROM advisory_dismissals WHERE component_code = 'core'"); n != 1 {
		t.Fatal("undismissal committed without its audit row")
	}
}

// Deleting a user keeps what they dismissed and what they did.
func TestDeletedUserKeepsDismissalsAndAudit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	u, err := b.st.UserCreate(ctx, "ada@example.org", "admin", "$argon2id$x")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.DismissAdvisory(ctx, "blog", "A-1", u.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.st.AuditAppend(ctx, u.ID, "test.raw", json.RawMessage(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	b.exec(t, "DELETE FROM users")
	got, err := b.st.DismissalsFor(ctx)
	if err != nil || !got["blog"]["A-1"] {
		t.Fatalf("dismissals after user deletion: %v, %v", got, err)
	}
	if n := b.count(t, "SELECT count(*) FROM audit_log WHERE user_id IS NULL AND (action <> 'test.raw' OR detail = '{\"n\": 1}')"); n != 2 {
		t.Fatalf("audit rows kept: %d, want 2", n)
	}
}

// The throttling statement, step by step on the database clock.
func TestLoginAttemptRegister(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	limit := store.LoginLimit{MaxFailures: 3, Window: 10 * time.Minute, Lockout: 5 * time.Minute}
	register := func() time.Duration {
		t.Helper()
		wait, err := b.st.LoginAttemptRegister(ctx, "email:a@example.org", limit)
		if err != nil {
			t.Fatal(err)
		}
		return wait
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
}
