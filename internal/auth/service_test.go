package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/testkit"
)

const goodPassword = "correct horse battery staple"

// bundle is one test's database and service.
type bundle struct {
	db  *pgtest.DB
	st  *store.Store
	svc *Service
}

func setup(t *testing.T, cfg Config) *bundle {
	t.Helper()
	d := pgtest.New(t)
	st := store.New(d.Pool)
	if cfg.Hasher == (Hasher{}) {
		cfg.Hasher = Hasher(testkit.Hasher())
	}
	svc, err := New(st, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{db: d, st: st, svc: svc}
}

func (b *bundle) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := b.db.Pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func (b *bundle) user(t *testing.T, email, role string) store.User {
	t.Helper()
	u, err := b.svc.CreateUser(context.Background(), email, role, goodPassword)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func (b *bundle) login(t *testing.T, email string) (string, store.Session) {
	t.Helper()
	token, sess, err := b.svc.Login(context.Background(), email, goodPassword, "192.0.2.1", "test-agent")
	if err != nil {
		t.Fatalf("login %s: %v", email, err)
	}
	return token, sess
}

func wantUnauthenticated(t *testing.T, p Principal, err error) {
	t.Helper()
	if !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("got principal %+v, err %v; want ErrUnauthenticated", p, err)
	}
}

func TestCreateUser(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	ctx := context.Background()
	u, err := b.svc.CreateUser(ctx, "  Ada@Example.org ", RoleAdmin, goodPassword)
	if err != nil {
		t.Fatal(err)
	}
	if u.ID == 0 || u.Email != "Ada@Example.org" || u.Role != RoleAdmin || u.Disabled {
		t.Fatalf("user %+v", u)
	}
	if _, err := b.svc.CreateUser(ctx, "ada@example.ORG", RoleViewer, goodPassword); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("same email, other case: %v, want store.ErrConflict", err)
	}
	for name, c := range map[string]struct {
		email, role, password string
		want                  error
	}{
		"role":     {"b@example.org", "root", goodPassword, ErrInvalidRole},
		"short":    {"b@example.org", RoleViewer, "short pw", ErrPasswordTooShort},
		"long":     {"b@example.org", RoleViewer, strings.Repeat("x", 1025), ErrPasswordTooLong},
		"no at":    {"example.org", RoleViewer, goodPassword, ErrInvalidEmail},
		"space":    {"b c@example.org", RoleViewer, goodPassword, ErrInvalidEmail},
		"two ats":  {"b@c@example.org", RoleViewer, goodPassword, ErrInvalidEmail},
		"nul byte": {"b\x00@example.org", RoleViewer, goodPassword, ErrInvalidEmail},
	} {
		if _, err := b.svc.CreateUser(ctx, c.email, c.role, c.password); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	var stored string
	if err := b.db.Pool.QueryRow(ctx, "SELECT password_hash FROM users WHERE id = $1", u.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stored, "$argon2id$") || strings.Contains(stored, goodPassword) {
		t.Fatalf("stored password %q", stored)
	}
	var audits int
	b.db.QueryRow(t, "SELECT count(*) FROM audit_log WHERE action = $1 AND detail->>'email' = $2", AuditUserCreate, u.Email).Scan(&audits)
	if audits != 1 {
		t.Fatalf("user.create audit rows: %d, want 1", audits)
	}
}

// Every login opens a new session with its own id and CSRF token, and only
// the token's hash is stored.
func TestLoginCreatesNewSessionEachTime(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	ctx := context.Background()
	u := b.user(t, "ada@example.org", RoleAdmin)

	tok1, s1 := b.login(t, "ada@example.org")
	tok2, s2 := b.login(t, "ADA@example.org") // emails compare without case
	if tok1 == tok2 || string(s1.ID) == string(s2.ID) || s1.CSRFToken == s2.CSRFToken {
		t.Fatal("two logins share a token, session id or CSRF token")
	}
	for _, c := range []struct {
		token string
		sess  store.Session
	}{{tok1, s1}, {tok2, s2}} {
		sum := sha256.Sum256([]byte(c.token))
		if string(c.sess.ID) != string(sum[:]) {
			t.Fatal("session id is not the SHA-256 of its token")
		}
		p, err := b.svc.Authenticate(ctx, c.token)
		if err != nil {
			t.Fatal(err)
		}
		want := Principal{UserID: u.ID, Email: u.Email, Role: RoleAdmin, SessionID: hex.EncodeToString(c.sess.ID), CSRFToken: c.sess.CSRFToken}
		if !reflect.DeepEqual(p, want) {
			t.Fatalf("principal %+v, want %+v", p, want)
		}
		if c.sess.UserAgent != "test-agent" || c.sess.IP != "192.0.2.1" {
			t.Fatalf("session %+v", c.sess)
		}
		if d := c.sess.ExpiresAt.Sub(c.sess.CreatedAt); d < DefaultSessionTTL-time.Second || d > DefaultSessionTTL+time.Second {
			t.Fatalf("session lifetime %v, want %v", d, DefaultSessionTTL)
		}
	}
	var raw int
	err := b.db.Pool.QueryRow(ctx, "SELECT count(*) FROM sessions WHERE encode(id, 'escape') IN ($1, $2) OR csrf_token IN ($1, $2)", tok1, tok2).Scan(&raw)
	if err != nil || raw != 0 {
		t.Fatalf("raw tokens found in sessions: %d (%v)", raw, err)
	}
	for _, bad := range []string{"", "x", tok1 + "x", tok1[:len(tok1)-1] + "!", TokenPrefix + tok1} {
		p, err := b.svc.Authenticate(ctx, bad)
		wantUnauthenticated(t, p, err)
	}
}

// Expiry is judged on the database clock: moving the stored instants into
// the past ends the session, absolute and idle alike.
func TestSessionExpiry(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	ctx := context.Background()
	b.user(t, "ada@example.org", RoleViewer)

	absolute, s1 := b.login(t, "ada@example.org")
	idle, s2 := b.login(t, "ada@example.org")
	fresh, _ := b.login(t, "ada@example.org")

	b.exec(t, "UPDATE sessions SET expires_at = clock_timestamp() - interval '1 second' WHERE id = $1", s1.ID)
	p, err := b.svc.Authenticate(ctx, absolute)
	wantUnauthenticated(t, p, err)

	b.exec(t, "UPDATE sessions SET last_seen_at = clock_timestamp() - interval '2 hours 1 second' WHERE id = $1", s2.ID)
	p, err = b.svc.Authenticate(ctx, idle)
	wantUnauthenticated(t, p, err)

	if _, err := b.svc.Authenticate(ctx, fresh); err != nil {
		t.Fatalf("a live session of the same user: %v", err)
	}

	// Dead sessions are deleted at the user's next login and by Purge.
	b.login(t, "ada@example.org")
	var n int
	b.db.QueryRow(t, "SELECT count(*) FROM sessions WHERE id IN ($1, $2)", s1.ID, s2.ID).Scan(&n)
	if n != 0 {
		t.Fatalf("%d dead sessions left after login", n)
	}
}

// Use keeps a session alive, but writes last_seen_at at most once a minute.
func TestSessionIdleIsSlidingAndTouchedSparingly(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	ctx := context.Background()
	b.user(t, "ada@example.org", RoleViewer)
	token, sess := b.login(t, "ada@example.org")

	lastSeen := func() (ageSeconds float64) {
		t.Helper()
		err := b.db.Pool.QueryRow(ctx, "SELECT extract(epoch FROM clock_timestamp() - last_seen_at)::float8 FROM sessions WHERE id = $1", sess.ID).Scan(&ageSeconds)
		if err != nil {
			t.Fatal(err)
		}
		return ageSeconds
	}
	b.exec(t, "UPDATE sessions SET last_seen_at = clock_timestamp() - interval '30 seconds' WHERE id = $1", sess.ID)
	if _, err := b.svc.Authenticate(ctx, token); err != nil {
		t.Fatal(err)
	}
	if age := lastSeen(); age < 29 {
		t.Fatalf("last_seen_at rewritten %0.fs after the previous write; want at most once a minute", age)
	}
	b.exec(t, "UPDATE sessions SET last_seen_at = clock_timestamp() - interval '119 minutes' WHERE id = $1", sess.ID)
	if _, err := b.svc.Authenticate(ctx, token); err != nil {
		t.Fatal(err)
	}
	if age := lastSeen(); age > 5 {
		t.Fatalf("last_seen_at is %0.fs old after use; want it moved", age)
	}
}

func TestLogout(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	ctx := context.Background()
	b.user(t, "ada@example.org", RoleViewer)
	token, _ := b.login(t, "ada@example.org")
	other, _ := b.login(t, "ada@example.org")
	p, err := b.svc.Authenticate(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.svc.Logout(ctx, p.SessionID); err != nil {
		t.Fatal(err)
	}
	p2, err := b.svc.Authenticate(ctx, token)
	wantUnauthenticated(t, p2, err)
	if err := b.svc.Logout(ctx, p.SessionID); err != nil {
		t.Fatalf("second logout: %v", err)
	}
	if err := b.svc.Logout(ctx, "not hex"); err != nil {
		t.Fatalf("logout of a malformed id: %v", err)
	}
	if _, err := b.svc.Authenticate(ctx, other); err != nil {
		t.Fatalf("logout ended another session: %v", err)
	}
}

func TestLoginInvalidCredentials(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	ctx := context.Background()
	b.user(t, "ada@example.org", RoleViewer)
	dis := b.user(t, "bob@example.org", RoleViewer)
	if err := b.st.UserSetDisabled(ctx, dis.ID, true); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct{ email, password string }{
		"unknown email":  {"nobody@example.org", goodPassword},
		"wrong password": {"ada@example.org", goodPassword + "!"},
		"disabled":       {"bob@example.org", goodPassword},
		"empty":          {"", ""},
		"huge password":  {"ada@example.org", strings.Repeat("p", 2000)},
	} {
		token, _, err := b.svc.Login(ctx, c.email, c.password, "192.0.2.1", "")
		if !errors.Is(err, ErrInvalidCredentials) || token != "" {
			t.Errorf("%s: token %q, err %v; want ErrInvalidCredentials", name, token, err)
		}
	}
}

// A disabled user's sessions and tokens stop working at once.
func TestDisabledUserLosesAccess(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	ctx := context.Background()
	u := b.user(t, "ada@example.org", RoleAdmin)
	token, _ := b.login(t, "ada@example.org")
	raw, err := b.svc.CreateToken(ctx, "ada@example.org", "ci")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.UserSetDisabled(ctx, u.ID, true); err != nil {
		t.Fatal(err)
	}
	p, err := b.svc.Authenticate(ctx, token)
	wantUnauthenticated(t, p, err)
	p, err = b.svc.AuthenticateToken(ctx, raw)
	wantUnauthenticated(t, p, err)
	if _, err := b.svc.CreateToken(ctx, "ada@example.org", "ci"); !errors.Is(err, ErrDisabled) {
		t.Fatalf("token for a disabled user: %v", err)
	}
}

func TestAPITokens(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	ctx := context.Background()
	u := b.user(t, "ada@example.org", RoleViewer)

	raw, err := b.svc.CreateToken(ctx, "ADA@example.org", "ci")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(raw, TokenPrefix) || len(raw) != len(TokenPrefix)+43 {
		t.Fatalf("token %q: want upc_ and 43 base64url characters", raw)
	}
	var stored []byte
	if err := b.db.Pool.QueryRow(ctx, "SELECT token_hash FROM api_tokens WHERE user_id = $1", u.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(raw))
	if string(stored) == raw || strings.Contains(string(stored), raw[len(TokenPrefix):]) || string(stored) != string(sum[:]) {
		t.Fatal("api_tokens must hold the SHA-256 of the token, not the token")
	}

	p, err := b.svc.AuthenticateToken(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	if !p.ViaToken || p.UserID != u.ID || p.Role != RoleViewer || p.TokenID == 0 || p.SessionID != "" || p.CSRFToken != "" {
		t.Fatalf("principal %+v", p)
	}
	// A token is not a session and a session token is not an API token.
	p2, err := b.svc.Authenticate(ctx, raw)
	wantUnauthenticated(t, p2, err)
	sessionToken, _ := b.login(t, "ada@example.org")
	p2, err = b.svc.AuthenticateToken(ctx, sessionToken)
	wantUnauthenticated(t, p2, err)

	tokens, err := b.svc.Tokens(ctx, "ada@example.org")
	if err != nil || len(tokens) != 1 || tokens[0].Name != "ci" || tokens[0].ExpiresAt != nil ||
		tokens[0].OwnerEmail != "ada@example.org" || tokens[0].Revoked || tokens[0].Expired {
		t.Fatalf("tokens %+v, %v", tokens, err)
	}

	if err := b.svc.RevokeToken(ctx, p.TokenID); err != nil {
		t.Fatal(err)
	}
	p2, err = b.svc.AuthenticateToken(ctx, raw)
	wantUnauthenticated(t, p2, err)
	if err := b.svc.RevokeToken(ctx, 999999); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoke unknown token: %v", err)
	}
	var audits int
	// From the command line nobody is signed in: the rows name no actor,
	// and the token's owner in their detail.
	b.db.QueryRow(t, "SELECT count(*) FROM audit_log WHERE user_id IS NULL AND (detail->>'user_id')::bigint = $1 AND action IN ($2, $3)",
		u.ID, AuditTokenCreate, AuditTokenRevoke).Scan(&audits)
	if audits != 2 {
		t.Fatalf("token audit rows: %d, want 2", audits)
	}
	if _, err := b.svc.CreateToken(ctx, "nobody@example.org", "ci"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("token for an unknown user: %v", err)
	}
}

func TestAPITokenExpiry(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{TokenTTL: time.Hour})
	ctx := context.Background()
	b.user(t, "ada@example.org", RoleAdmin)
	raw, err := b.svc.CreateToken(ctx, "ada@example.org", "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.svc.AuthenticateToken(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	b.exec(t, "UPDATE api_tokens SET expires_at = clock_timestamp() - interval '1 second' WHERE id = $1", p.TokenID)
	p, err = b.svc.AuthenticateToken(ctx, raw)
	wantUnauthenticated(t, p, err)
}

// A database that is down is not a bad credential: the errors carry
// ErrUnavailable, never ErrUnauthenticated or ErrInvalidCredentials.
func TestDatabaseDownIsNotUnauthenticated(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	ctx := context.Background()
	b.user(t, "ada@example.org", RoleAdmin)
	session, _ := b.login(t, "ada@example.org")
	raw, err := b.svc.CreateToken(ctx, "ada@example.org", "ci")
	if err != nil {
		t.Fatal(err)
	}

	// A pool on a port where nothing listens: connections are refused.
	cfg, err := pgxpool.ParseConfig(b.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Port = 1
	cfg.ConnConfig.ConnectTimeout = 2 * time.Second
	refused, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer refused.Close()

	b.db.Pool.Close()
	for name, pool := range map[string]*pgxpool.Pool{"closed pool": b.db.Pool, "refused": refused} {
		svc, err := New(store.New(pool), Config{Hasher: Hasher(testkit.Hasher())}, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.Authenticate(ctx, session)
		if errors.Is(err, ErrUnauthenticated) || !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: Authenticate: %v; want ErrUnavailable", name, err)
		}
		_, err = svc.AuthenticateToken(ctx, raw)
		if errors.Is(err, ErrUnauthenticated) || !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: AuthenticateToken: %v; want ErrUnavailable", name, err)
		}
		_, _, err = svc.Login(ctx, "ada@example.org", goodPassword, "192.0.2.1", "")
		if errors.Is(err, ErrInvalidCredentials) || !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: Login: %v; want ErrUnavailable", name, err)
		}
	}
}

// Purge removes what can no longer matter and nothing else.
func TestPurge(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	ctx := context.Background()
	b.user(t, "ada@example.org", RoleViewer)
	live, _ := b.login(t, "ada@example.org")
	_, dead := b.login(t, "ada@example.org")
	b.exec(t, "UPDATE sessions SET expires_at = clock_timestamp() - interval '1 second' WHERE id = $1", dead.ID)
	b.fail(t, "old@example.org", "192.0.2.9")
	b.fail(t, "new@example.org", "192.0.2.9")
	b.exec(t, "UPDATE login_attempts SET window_start = clock_timestamp() - interval '16 minutes' WHERE key LIKE 'email:old@example.org%'")
	b.exec(t, "INSERT INTO login_known_addresses VALUES ('email:ada@example.org', 'ip:192.0.2.8', clock_timestamp() - interval '31 days')")

	if err := b.svc.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	count := func(sql string) int {
		t.Helper()
		var n int
		if err := b.db.Pool.QueryRow(ctx, sql).Scan(&n); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return n
	}
	sessions := count("SELECT count(*) FROM sessions")
	attempts := count("SELECT count(*) FROM login_attempts WHERE key LIKE 'email:old@example.org%' OR key LIKE 'email:new@example.org%'")
	known := count("SELECT count(*) FROM login_known_addresses")
	if sessions != 1 || attempts != 2 || known != 1 {
		t.Fatalf("after purge: %d sessions, %d attempt rows, %d known addresses; want 1, 2 (new@'s account and pair) and 1", sessions, attempts, known)
	}
	if _, err := b.svc.Authenticate(ctx, live); err != nil {
		t.Fatal(err)
	}
}

// A hash made with older parameters is replaced at the next login.
func TestLoginUpgradesOldHash(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{})
	ctx := context.Background()
	u := b.user(t, "ada@example.org", RoleViewer)
	old, err := Hasher{Memory: 32, Time: 1, Threads: 1}.Hash(goodPassword)
	if err != nil {
		t.Fatal(err)
	}
	b.exec(t, "UPDATE users SET password_hash = $1 WHERE id = $2", old, u.ID)
	b.login(t, "ada@example.org")
	creds, err := b.st.UserCredentials(ctx, "ada@example.org")
	if err != nil {
		t.Fatal(err)
	}
	if creds.PasswordHash == old || !strings.HasPrefix(creds.PasswordHash, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("hash not upgraded: %s", creds.PasswordHash)
	}
	b.login(t, "ada@example.org")
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]Config{
		"hasher":                       {Hasher: Hasher{Memory: 1, Time: 1, Threads: 1}},
		"limit":                        {AccountLimit: Limit{MaxFailures: 0, Window: time.Minute, Lockout: time.Minute}},
		"pair":                         {AccountAddressLimit: Limit{MaxFailures: 5, Window: -time.Minute, Lockout: time.Minute}},
		"known":                        {KnownAddressTTL: -time.Hour},
		"one address locks an account": {AccountLimit: Limit{MaxFailures: 9, Window: 15 * time.Minute, Lockout: time.Minute}},
		"ttl":                          {SessionTTL: -time.Second},
		"hashers":                      {MaxConcurrentHashes: -1},
	} {
		if _, err := New(nil, cfg, nil); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
	s, err := New(nil, Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Config()
	if c.SessionTTL != 12*time.Hour || c.IdleTimeout != 2*time.Hour || c.CookieName != DefaultCookieName || c.Hasher != DefaultHasher() ||
		c.AddressLimit.MaxFailures != 20 || c.AccountAddressLimit.MaxFailures != 5 || c.AccountLimit.MaxFailures != 20 || c.KnownAddressTTL != 30*24*time.Hour {
		t.Fatalf("defaults %+v", c)
	}
}

// An unknown email costs a password hash like a known one, so response
// times do not tell which accounts exist. The hash is made slow enough to
// stand out from the database round trips, the two kinds of login take
// turns, and the fastest of each is compared, which load on the machine
// only slows down. Not parallel: it times, so it runs before the parallel
// tests start.
func TestUnknownEmailCostsAHash(t *testing.T) {
	b := setup(t, Config{Hasher: Hasher{Memory: 8 * 1024, Time: 1, Threads: 1}})
	b.user(t, "ada@example.org", RoleViewer)
	try := func(email string, i int) time.Duration {
		start := time.Now()
		_, _, err := b.svc.Login(context.Background(), email, "wrong password!", fmt.Sprintf("192.0.2.%d", i), "")
		if !errors.Is(err, ErrInvalidCredentials) {
			t.Fatalf("login %s: %v", email, err)
		}
		return time.Since(start)
	}
	known, unknown := time.Hour, time.Hour
	for i := range 4 { // four: the account locks at the sixth failure
		known = min(known, try("ada@example.org", i))
		unknown = min(unknown, try("nobody@example.org", i))
	}
	t.Logf("fastest wrong password %v, unknown email %v", known, unknown)
	if unknown < known/3 {
		t.Fatalf("unknown email answered in %v, wrong password in %v: the miss skips the hash", unknown, known)
	}
}

// A token's scope and lifetime are stored as asked: read-only gives a
// principal with only the view permissions, a lifetime sets expires_at on
// the database clock, NoExpiry overrides Config.TokenTTL, no choice takes
// it; the token.create audit row says the scope and the expiry; an
// expired token is ErrTokenExpired (and ErrUnauthenticated), a revoked
// one only ErrUnauthenticated.
func TestTokenScopeAndLifetime(t *testing.T) {
	t.Parallel()
	b := setup(t, Config{TokenTTL: time.Hour})
	ctx := context.Background()
	b.user(t, "ada@example.org", RoleAdmin)
	create := func(req TokenRequest) (string, store.APIToken) {
		t.Helper()
		req.Email = "ada@example.org"
		raw, tk, err := b.svc.CreateTokenFor(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return raw, tk
	}
	lifetime := func(tk store.APIToken) time.Duration {
		t.Helper()
		if tk.ExpiresAt == nil {
			return 0
		}
		return tk.ExpiresAt.Sub(tk.CreatedAt).Round(time.Minute)
	}

	roRaw, ro := create(TokenRequest{Name: "grafana", ReadOnly: true, Expires: 30 * 24 * time.Hour})
	if !ro.ReadOnly || lifetime(ro) != 30*24*time.Hour {
		t.Fatalf("read-only 30-day token stored as %+v", ro)
	}
	p, err := b.svc.AuthenticateToken(ctx, roRaw)
	if err != nil || !p.ReadOnly || !p.Can(PermView) || !p.Can(PermAudit) || p.Can(PermManage) {
		t.Fatalf("read-only admin token's principal %+v, %v: want the admin's reads only", p, err)
	}
	if _, def := create(TokenRequest{Name: "default"}); def.ReadOnly || lifetime(def) != time.Hour {
		t.Fatalf("a token without a choice: %+v, want full scope and Config.TokenTTL", def)
	}
	fullRaw, never := create(TokenRequest{Name: "forever", Expires: NoExpiry})
	if never.ExpiresAt != nil {
		t.Fatalf("NoExpiry under a TokenTTL: expires %v, want never", never.ExpiresAt)
	}
	if p, err := b.svc.AuthenticateToken(ctx, fullRaw); err != nil || p.ReadOnly || !p.Can(PermManage) {
		t.Fatalf("full token's principal %+v, %v", p, err)
	}
	for _, bad := range []time.Duration{time.Second, MaxTokenLifetime + time.Hour} {
		if _, _, err := b.svc.CreateTokenFor(ctx, TokenRequest{Email: "ada@example.org", Expires: bad}); !errors.Is(err, ErrInvalidTokenLifetime) {
			t.Errorf("lifetime %v: %v, want ErrInvalidTokenLifetime", bad, err)
		}
	}

	var scope, expires string
	b.db.QueryRow(t, "SELECT detail->>'scope', detail->>'expires_at' FROM audit_log WHERE action = 'token.create' AND (detail->>'token_id')::bigint = $1", ro.ID).Scan(&scope, &expires)
	if scope != ScopeReadOnly || expires != ro.ExpiresAt.UTC().Format(time.RFC3339) {
		t.Fatalf("token.create audit: scope %q, expires %q; want read-only and %s", scope, expires, ro.ExpiresAt.UTC().Format(time.RFC3339))
	}
	b.db.QueryRow(t, "SELECT detail->>'scope', detail->>'expires_at' FROM audit_log WHERE action = 'token.create' AND (detail->>'token_id')::bigint = $1", never.ID).Scan(&scope, &expires)
	if scope != ScopeFull || expires != "never" {
		t.Fatalf("token.create audit of a full token without expiry: scope %q, expires %q", scope, expires)
	}

	// Long unused, so that a use would record itself.
	b.exec(t, "UPDATE api_tokens SET expires_at = clock_timestamp() - interval '1 second', last_used_at = '2020-01-01T00:00:00Z' WHERE id = $1", ro.ID)
	p, err = b.svc.AuthenticateToken(ctx, roRaw)
	if !errors.Is(err, ErrTokenExpired) || !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("expired token: %+v, %v; want ErrTokenExpired", p, err)
	}
	if err := b.svc.RevokeToken(ctx, never.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.AuthenticateToken(ctx, fullRaw); !errors.Is(err, ErrUnauthenticated) || errors.Is(err, ErrTokenExpired) {
		t.Fatalf("revoked token: %v; want ErrUnauthenticated, not expired", err)
	}
	if _, err := b.svc.AuthenticateToken(ctx, roRaw); !errors.Is(err, ErrTokenExpired) {
		t.Fatalf("expired token again: %v", err)
	}
	var lastUsed time.Time
	b.db.QueryRow(t, "SELECT last_used_at FROM api_tokens WHERE id = $1", ro.ID).Scan(&lastUsed)
	if !lastUsed.Equal(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("an expired token's use moved last_used_at to %v", lastUsed)
	}
}
