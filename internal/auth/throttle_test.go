package auth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func wantThrottled(t *testing.T, err error) *ThrottledError {
	t.Helper()
	var te *ThrottledError
	if !errors.As(err, &te) || !errors.Is(err, ErrThrottled) {
		t.Fatalf("err %v, want *ThrottledError", err)
	}
	if te.RetryAfter < time.Second || te.RetryAfter > 15*time.Minute || te.RetryAfter%time.Second != 0 {
		t.Fatalf("retry after %v, want whole seconds in (0, 15m]", te.RetryAfter)
	}
	return te
}

func (b *bundle) fail(t *testing.T, email, ip string) {
	t.Helper()
	_, _, err := b.svc.Login(context.Background(), email, "wrong password!", ip, "")
	if !errors.Is(err, ErrInvalidCredentials) {
		t.Fatalf("wrong password for %s from %s: %v, want ErrInvalidCredentials", email, ip, err)
	}
}

// try logs in from ip and returns only the error.
func (b *bundle) try(email, password, ip string) error {
	_, _, err := b.svc.Login(context.Background(), email, password, ip, "")
	return err
}

// Five failures against an account from one address stop that address
// guessing at it, even with the right password; the owner signs in from
// another address they never used before. When the lock ends, the pair gets
// a new window.
func TestThrottlePerAccountAndAddress(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	b.user(t, "ada@example.org", RoleViewer)
	for range 5 {
		b.fail(t, "ada@example.org", "192.0.2.1")
	}
	wantThrottled(t, b.try("Ada@Example.org", goodPassword, "192.0.2.1"))
	if err := b.try("ada@example.org", goodPassword, "198.51.100.1"); err != nil {
		t.Fatalf("the owner from another address: %v", err)
	}
	b.exec(t, "UPDATE login_attempts SET locked_until = clock_timestamp() - interval '1 second' WHERE key = 'email:ada@example.org ip:192.0.2.1'")
	if err := b.try("ada@example.org", goodPassword, "192.0.2.1"); err != nil {
		t.Fatalf("after the lock ended: %v", err)
	}
}

// A success clears the count of its account and address: four failures, a
// success, then five more failures are all heard before the lock.
func TestThrottleSuccessResetsAccount(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	b.user(t, "ada@example.org", RoleViewer)
	for range 4 {
		b.fail(t, "ada@example.org", "192.0.2.1")
	}
	b.login(t, "ada@example.org")
	for range 5 {
		b.fail(t, "ada@example.org", "192.0.2.1")
	}
	wantThrottled(t, b.try("ada@example.org", goodPassword, "192.0.2.1"))
}

// The window is judged on the database clock: failures older than it no
// longer count.
func TestThrottleWindowEnds(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	b.user(t, "ada@example.org", RoleViewer)
	for range 5 {
		b.fail(t, "ada@example.org", "192.0.2.1")
	}
	b.exec(t, "UPDATE login_attempts SET window_start = window_start - interval '15 minutes 1 second'")
	b.fail(t, "ada@example.org", "192.0.2.1") // a sixth attempt, but the first of a new window
	b.login(t, "ada@example.org")
}

// Twenty failures from one address (spread over accounts so that no pair
// is locked) lock the address, even for a right password; other addresses
// and the same /64 are judged apart and together respectively.
func TestThrottlePerAddress(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	b.user(t, "ada@example.org", RoleViewer)
	for i := range 20 {
		b.fail(t, fmt.Sprintf("user%d@example.org", i%5), "2001:db8:7:7::1")
	}
	wantThrottled(t, b.try("ada@example.org", goodPassword, "2001:db8:7:7:ffff::2")) // same /64
	if err := b.try("ada@example.org", goodPassword, "2001:db8:7:8::1"); err != nil {
		t.Fatalf("login from another address: %v", err)
	}
}

// Made-up emails from one address lock that address and nobody else: the
// owner signs in from another.
func TestMadeUpEmailsDoNotLockTheOwnerOut(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	b.user(t, "ada@example.org", RoleAdmin)
	throttled := 0
	for i := range 30 {
		err := b.try(fmt.Sprintf("nobody%d@example.org", i), "wrong password!", "203.0.113.7")
		switch {
		case errors.Is(err, ErrThrottled):
			throttled++
		case !errors.Is(err, ErrInvalidCredentials):
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	if throttled != 10 {
		t.Fatalf("%d of 30 made-up emails throttled, want the 10 past the address limit", throttled)
	}
	wantThrottled(t, b.try("ada@example.org", goodPassword, "203.0.113.7"))
	if err := b.try("ada@example.org", goodPassword, "198.51.100.1"); err != nil {
		t.Fatalf("the owner from another address: %v", err)
	}
}

// Guessing at one account from many addresses locks it, but only for
// addresses that have not signed in to it lately: the owner's usual address
// still gets in, a new one waits, and an address unused for longer than
// KnownAddressTTL is new again.
func TestDistributedGuessingSparesKnownAddresses(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	b.user(t, "ada@example.org", RoleAdmin)
	if err := b.try("ada@example.org", goodPassword, "198.51.100.1"); err != nil { // the owner's usual address
		t.Fatal(err)
	}
	for i := range 4 { // 4 addresses x 5 guesses: the account limit (20) is reached
		for range 5 {
			b.fail(t, "ada@example.org", fmt.Sprintf("203.0.113.%d", i+1))
		}
	}
	wantThrottled(t, b.try("ada@example.org", "wrong password!", "203.0.113.5"))
	wantThrottled(t, b.try("ada@example.org", goodPassword, "192.0.2.9")) // a new address waits
	if err := b.try("ada@example.org", goodPassword, "198.51.100.1"); err != nil {
		t.Fatalf("the owner's usual address during the attack: %v", err)
	}
	b.exec(t, "UPDATE login_known_addresses SET last_success_at = clock_timestamp() - interval '31 days'")
	wantThrottled(t, b.try("ada@example.org", goodPassword, "198.51.100.1"))
}

// guessAll sends every login at once (all goroutines released together) and
// counts how many were heard (a wrong password reported) and refused.
func (b *bundle) guessAll(t *testing.T, logins []func() error) (heard, throttled int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(logins))
	start := make(chan struct{})
	for _, login := range logins {
		wg.Go(func() {
			<-start
			errs <- login()
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		switch {
		case errors.Is(err, ErrInvalidCredentials):
			heard++
		case errors.Is(err, ErrThrottled):
			throttled++
		default:
			t.Fatalf("unexpected error: %v", err)
		}
	}
	return heard, throttled
}

// Guesses sent at once are counted under the row lock before any password
// is checked, so no more than a limit are ever heard: 5 from one address
// (account and address), 20 from as many addresses (account).
func TestThrottleHoldsUnderParallelGuesses(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	b.user(t, "ada@example.org", RoleViewer)
	b.user(t, "bob@example.org", RoleViewer)
	const guesses = 24
	var oneAddress, manyAddresses []func() error
	for i := range guesses {
		oneAddress = append(oneAddress, func() error { return b.try("ada@example.org", "wrong password!", "192.0.2.1") })
		manyAddresses = append(manyAddresses, func() error {
			return b.try("bob@example.org", "wrong password!", fmt.Sprintf("198.51.100.%d", i+1))
		})
	}
	if heard, throttled := b.guessAll(t, oneAddress); heard != 5 || throttled != guesses-5 {
		t.Errorf("one address: %d guesses heard, %d throttled; want 5 and %d", heard, throttled, guesses-5)
	}
	if heard, throttled := b.guessAll(t, manyAddresses); heard != 20 || throttled != guesses-20 {
		t.Errorf("%d addresses: %d guesses heard, %d throttled; want 20 and %d", guesses, heard, throttled, guesses-20)
	}
	// Three locks (the address, which counted all 24; ada from it; bob's
	// account), each audited once however many parallel guesses it
	// refused.
	var locks int
	var which string
	b.db.QueryRow(t, `SELECT count(*), string_agg(coalesce(detail->>'email', detail->>'address') || '|' || (detail->>'locked'), ', '
			ORDER BY coalesce(detail->>'email', detail->>'address') COLLATE "C")
		FROM audit_log WHERE action = 'user.lockout'`).Scan(&locks, &which)
	want := "192.0.2.1|" + LockAddress + ", ada@example.org|" + LockAccountAddress + ", bob@example.org|" + LockAccount
	if locks != 3 || which != want {
		t.Errorf("lock audit rows after parallel guesses: %d (%s), want one for each of the three locks (%s)", locks, which, want)
	}
}

// While one address floods the form with guesses at the owner's account and
// at made-up ones, the owner signs in from addresses never used before, at
// the same moment; the flood gets no more than its limits.
func TestOwnerSignsInDuringAParallelAttack(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	b.user(t, "ada@example.org", RoleAdmin)
	const attackers, owners = 64, 8
	type guess struct {
		atOwner bool
		err     error
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	attack := make(chan guess, attackers)
	owner := make(chan error, owners)
	for i := range attackers {
		email := "ada@example.org"
		if i%2 == 1 {
			email = fmt.Sprintf("nobody%d@example.org", i)
		}
		wg.Go(func() {
			<-start
			attack <- guess{atOwner: email == "ada@example.org", err: b.try(email, "wrong password!", "203.0.113.66")}
		})
	}
	for i := range owners {
		wg.Go(func() {
			<-start
			owner <- b.try("ada@example.org", goodPassword, fmt.Sprintf("2001:db8:%x::1", i+1))
		})
	}
	close(start)
	wg.Wait()
	close(attack)
	close(owner)
	for err := range owner {
		if err != nil {
			t.Errorf("the owner during the attack: %v", err)
		}
	}
	heard, heardAtOwner := 0, 0
	for g := range attack {
		switch {
		case errors.Is(g.err, ErrInvalidCredentials):
			heard++
			if g.atOwner {
				heardAtOwner++
			}
		case !errors.Is(g.err, ErrThrottled):
			t.Fatalf("attack: %v", g.err)
		}
	}
	if heard > 20 || heardAtOwner > 5 {
		t.Fatalf("the attacking address had %d guesses heard, %d at the owner; want at most 20 and 5", heard, heardAtOwner)
	}
	wantThrottled(t, b.try("nobody@example.org", "wrong password!", "203.0.113.66"))
}

func TestAddressKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                       "",
		"192.0.2.7":              "ip:192.0.2.7",
		"::ffff:192.0.2.7":       "ip:192.0.2.7",
		"2001:db8:1:2:3:4:5:6":   "ip:2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1":   "ip:2001:db8:1:2::/64",
		"fe80::1%eth0":           "ip:fe80::/64",
		"192.0.2.7:5678":         "ip:192.0.2.7",
		"[2001:db8:1:2::9]:443":  "ip:2001:db8:1:2::/64",
		"not an address":         "ip:invalid",
		"192.0.2.7, 198.51.100.": "ip:invalid",
	} {
		if got := addressKey(in); got != want {
			t.Errorf("addressKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// Each lock is one audit row, written by the attempt that sets it, never
// one per refused attempt: an account from one address, an address (IPv6
// by its /64), an account from many addresses. Each says what is locked,
// for how long, after how many attempts, and names nobody as the actor.
func TestLockoutsAreAudited(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	b.user(t, "ada@example.org", RoleViewer)
	type row struct{ locked, email, address, attempts, lockout, allowed, until string }
	rows := func() []row {
		t.Helper()
		r, err := b.db.Pool.Query(context.Background(), `SELECT detail->>'locked', coalesce(detail->>'email', ''), coalesce(detail->>'address', ''),
			detail->>'attempts', detail->>'lockout', detail->>'failures_allowed', detail->>'locked_until'
			FROM audit_log WHERE action = 'user.lockout' AND user_id IS NULL ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var out []row
		for r.Next() {
			var x row
			if err := r.Scan(&x.locked, &x.email, &x.address, &x.attempts, &x.lockout, &x.allowed, &x.until); err != nil {
				t.Fatal(err)
			}
			out = append(out, x)
		}
		return out
	}

	for range 5 {
		b.fail(t, "Ada@example.org", "192.0.2.1")
	}
	for range 3 { // the first locks, the others are refused while locked
		wantThrottled(t, b.try("ada@example.org", goodPassword, "192.0.2.1"))
	}
	got := rows()
	if len(got) != 1 {
		t.Fatalf("%d lockout audit rows after one lock and two refused attempts, want 1: %+v", len(got), got)
	}
	if r := got[0]; r.locked != LockAccountAddress || r.email != "ada@example.org" || r.address != "192.0.2.1" || r.attempts != "6" ||
		r.lockout != "15 minutes" || r.allowed != "5" {
		t.Fatalf("the lock of an account from one address audited as %+v", r)
	}
	if until, err := time.Parse(time.RFC3339, got[0].until); err != nil || time.Until(until) < 14*time.Minute || time.Until(until) > 16*time.Minute {
		t.Fatalf("locked_until %q, %v: want about 15 minutes from now", got[0].until, err)
	}

	for i := range 20 {
		b.fail(t, fmt.Sprintf("user%d@example.org", i%5), "2001:db8:7:7::1")
	}
	wantThrottled(t, b.try("ada@example.org", goodPassword, "2001:db8:7:7::2"))
	wantThrottled(t, b.try("ada@example.org", goodPassword, "2001:db8:7:7::3"))
	got = rows()
	if len(got) != 2 || got[1].locked != LockAddress || got[1].address != "2001:db8:7:7::/64" || got[1].email != "" || got[1].attempts != "21" {
		t.Fatalf("the lock of an address audited as %+v", got)
	}

	for i := range 20 {
		b.fail(t, "bob@example.org", fmt.Sprintf("198.51.100.%d", i+1))
	}
	wantThrottled(t, b.try("bob@example.org", "another guess!", "198.51.100.200"))
	got = rows()
	if len(got) != 3 || got[2].locked != LockAccount || got[2].email != "bob@example.org" || got[2].address != "" || got[2].attempts != "21" {
		t.Fatalf("the lock of an account from many addresses audited as %+v", got)
	}
}
