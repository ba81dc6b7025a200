package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// Defaults for the zero fields of Config.
const (
	DefaultSessionTTL  = 12 * time.Hour
	DefaultIdleTimeout = 2 * time.Hour
	DefaultCookieName  = "upcheck_session"
	// DefaultMaxConcurrentHashes bounds the memory argon2 may take at once
	// (64 MiB each with DefaultHasher): a burst of logins waits for a slot
	// instead of exhausting the machine.
	DefaultMaxConcurrentHashes = 4
	// DefaultKnownAddressTTL is how long a sign-in keeps its address exempt
	// from its account's lock: a month covers the usual home and office.
	DefaultKnownAddressTTL = 30 * 24 * time.Hour
)

// touchInterval is how stale last_seen_at / last_used_at may be before an
// authentication writes them again: idle timeouts are counted in hours, so
// a minute's precision saves a write per request.
const touchInterval = time.Minute

// TokenPrefix starts every API token, so that a leaked one is recognisable
// (secret scanners, logs).
const TokenPrefix = "upc_"

const (
	randomBytes   = 32                           // of every session, CSRF and API token
	encodedLen    = (randomBytes*8 + 5) / 6      // base64url without padding: 43
	maxEmailBytes = 254                          // RFC 5321 path limit
	maxNameBytes  = 100                          // API token names
	maxUABytes    = 512                          // stored user agents
	defaultName   = "api"                        // API tokens created without a name
	dummyPassword = "equalises timing on misses" // hashed once per Service
)

// Audit actions written by this package.
const (
	AuditUserCreate   = readmodel.AuditUserCreate
	AuditUserPassword = readmodel.AuditUserPassword
	AuditTokenCreate  = readmodel.AuditTokenCreate
	AuditTokenRevoke  = readmodel.AuditTokenRevoke
	// AuditLoginLockout: the login throttle locked an address, an account
	// from one address, or an account (throttle.go); one row per lock.
	AuditLoginLockout = readmodel.AuditUserLockout
)

// Config is the Service's settings; zero fields take the defaults.
type Config struct {
	// SessionTTL is a session's absolute lifetime from login (default 12h);
	// activity does not extend it.
	SessionTTL time.Duration
	// IdleTimeout ends a session not used for this long (default 2h).
	IdleTimeout time.Duration
	// SecureCookie marks the session cookie Secure even on plain-HTTP
	// requests (behind a TLS-terminating proxy). TLS requests always get it.
	SecureCookie bool
	// CookieName is the session cookie's name (default "upcheck_session").
	CookieName string
	// TokenTTL is API tokens' lifetime; 0: they last until revoked.
	TokenTTL time.Duration
	// Hasher hashes passwords (default DefaultHasher()). Tests use cheap
	// parameters; hashes made with others keep verifying.
	Hasher Hasher
	// AddressLimit throttles logins per client address, IPv6 per /64
	// (default 20 failures in 15 minutes lock it for 15 minutes).
	AddressLimit Limit
	// AccountAddressLimit throttles logins per account and client address
	// (default 5 failures in 15 minutes lock the pair for 15 minutes).
	AccountAddressLimit Limit
	// AccountLimit throttles logins per account, counted and applied only
	// to addresses that have not signed in to it within KnownAddressTTL
	// (default 20 failures in 15 minutes lock it for 15 minutes). It should
	// stay above AccountAddressLimit, so that one address cannot reach it.
	AccountLimit Limit
	// KnownAddressTTL is how long a successful sign-in exempts its address
	// from its account's AccountLimit (default 30 days).
	KnownAddressTTL time.Duration
	// MaxConcurrentHashes bounds argon2 runs in flight (default 4).
	MaxConcurrentHashes int
	// PrincipalCacheTTL reuses a successful authentication of a session or
	// token for this long (0: never). A logout or revocation on this
	// instance takes effect at once, on other instances within the TTL.
	PrincipalCacheTTL time.Duration
}

func (c Config) withDefaults() Config {
	if c.SessionTTL == 0 {
		c.SessionTTL = DefaultSessionTTL
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.CookieName == "" {
		c.CookieName = DefaultCookieName
	}
	if c.Hasher == (Hasher{}) {
		c.Hasher = DefaultHasher()
	}
	if c.AddressLimit == (Limit{}) {
		c.AddressLimit = Limit{MaxFailures: 20, Window: 15 * time.Minute, Lockout: 15 * time.Minute}
	}
	if c.AccountAddressLimit == (Limit{}) {
		c.AccountAddressLimit = Limit{MaxFailures: 5, Window: 15 * time.Minute, Lockout: 15 * time.Minute}
	}
	if c.AccountLimit == (Limit{}) {
		c.AccountLimit = Limit{MaxFailures: 20, Window: 15 * time.Minute, Lockout: 15 * time.Minute}
	}
	if c.KnownAddressTTL == 0 {
		c.KnownAddressTTL = DefaultKnownAddressTTL
	}
	if c.MaxConcurrentHashes == 0 {
		c.MaxConcurrentHashes = DefaultMaxConcurrentHashes
	}
	return c
}

func (c Config) validate() error {
	if err := c.Hasher.Validate(); err != nil {
		return err
	}
	switch {
	case c.SessionTTL < 0 || c.IdleTimeout < 0 || c.TokenTTL < 0 || c.KnownAddressTTL < 0:
		return errors.New("session, idle, token and known address lifetimes must not be negative")
	case c.MaxConcurrentHashes < 1:
		return errors.New("max concurrent hashes must be at least 1")
	}
	for _, l := range []Limit{c.AddressLimit, c.AccountAddressLimit, c.AccountLimit} {
		if l.MaxFailures < 1 || l.Window <= 0 || l.Lockout <= 0 {
			return errors.New("login limits need max failures >= 1 and positive window and lockout")
		}
	}
	// One address must not be able to lock an account on its own: with pair
	// windows no shorter than the account's, an account window overlaps at
	// most two pair windows, so one address is heard at most twice the pair
	// limit in it.
	if c.AccountAddressLimit.Window < c.AccountLimit.Window || c.AccountLimit.MaxFailures < 2*c.AccountAddressLimit.MaxFailures {
		return errors.New("the account limit needs at least twice the failures of the account-and-address limit, and a window no longer than its")
	}
	return nil
}

// Service authenticates users: accounts, logins, sessions, API tokens.
type Service struct {
	st     *store.Store
	cfg    Config
	logger *slog.Logger

	hashSlots chan struct{} // a semaphore over argon2 runs
	cache     *principalCache

	dummyOnce sync.Once
	dummyHash string
}

// New returns a Service over st. A nil logger discards.
func New(st *store.Store, cfg Config, logger *slog.Logger) (*Service, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("auth config: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Service{st: st, cfg: cfg, logger: logger, hashSlots: make(chan struct{}, cfg.MaxConcurrentHashes), cache: newPrincipalCache(cfg.PrincipalCacheTTL)}, nil
}

// Config returns the settings in effect, defaults filled in.
func (s *Service) Config() Config { return s.cfg }

// Purge deletes dead sessions and throttling rows that no longer hold
// anything back. Nothing depends on it running (expiry is checked at every
// use); it keeps the tables small, and can be called from any schedule.
func (s *Service) Purge(ctx context.Context) error {
	sessions, err := s.st.SessionDeleteDead(ctx, 0, s.cfg.IdleTimeout)
	if err != nil {
		return dbError("purge sessions", err)
	}
	window := max(s.cfg.AddressLimit.Window, s.cfg.AccountAddressLimit.Window, s.cfg.AccountLimit.Window)
	attempts, err := s.st.LoginAttemptPurge(ctx, window)
	if err != nil {
		return dbError("purge login attempts", err)
	}
	known, err := s.st.LoginAddressPurge(ctx, s.cfg.KnownAddressTTL)
	if err != nil {
		return dbError("purge known login addresses", err)
	}
	s.logger.DebugContext(ctx, "auth purge", "sessions", sessions, "login_attempts", attempts, "known_addresses", known)
	return nil
}

// hash runs argon2 in one of the bounded slots.
func (s *Service) hash(ctx context.Context, password string) (string, error) {
	if err := s.acquireSlot(ctx); err != nil {
		return "", err
	}
	defer s.releaseSlot()
	h, err := s.cfg.Hasher.Hash(password)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return h, nil
}

func (s *Service) verify(ctx context.Context, encoded, password string) (bool, error) {
	if err := s.acquireSlot(ctx); err != nil {
		return false, err
	}
	defer s.releaseSlot()
	return s.cfg.Hasher.Verify(encoded, password)
}

// burnHash spends on an unknown email what a known one costs: one verify
// against a hash made with the current parameters.
func (s *Service) burnHash(ctx context.Context, password string) error {
	s.dummyOnce.Do(func() {
		h, err := s.cfg.Hasher.Hash(dummyPassword)
		if err != nil {
			panic(fmt.Sprintf("auth: hash with validated parameters: %v", err)) // Validate passed in New
		}
		s.dummyHash = h
	})
	_, err := s.verify(ctx, s.dummyHash, password)
	return err
}

func (s *Service) acquireSlot(ctx context.Context) error {
	select {
	case s.hashSlots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for a password hashing slot: %w", context.Cause(ctx))
	}
}

func (s *Service) releaseSlot() { <-s.hashSlots }

// clean makes a client-supplied string storable: valid UTF-8 without NUL
// (PostgreSQL text refuses both) and at most n bytes, cut at a character.
func clean(v string, n int) string {
	v = strings.ReplaceAll(strings.ToValidUTF8(v, ""), "\x00", "")
	if len(v) <= n {
		return v
	}
	for n > 0 && !utf8.RuneStart(v[n]) {
		n--
	}
	return v[:n]
}
