package auth

import (
	"context"
	"net/netip"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// Limit is one login throttling rule: more than MaxFailures attempts
// within Window lock the key for Lockout. Attempts are counted before the
// password is checked and a success is given back, so only failures (and
// attempts still in flight) count.
type Limit struct {
	MaxFailures int
	Window      time.Duration
	Lockout     time.Duration
}

// attempt is where one login attempt was counted, for the bookkeeping of a
// success.
type attempt struct {
	account, address string // keys; address is "" without a client address
	pair             bool   // counted against account+address
	accountWide      bool   // counted against the account (an unknown address)
}

// pairKey is the key of an account from one address.
func (a attempt) pairKey() string { return a.account + " " + a.address }

// throttle counts a login attempt, before its password is checked, against
//  1. its address (AddressLimit): one address guessing at many accounts;
//  2. its account from that address (AccountAddressLimit): one address
//     guessing at one account;
//  3. its account from anywhere (AccountLimit): many addresses guessing at
//     one account. An address that signed in to the account within
//     KnownAddressTTL is neither counted nor stopped here.
//
// It stops at the first key that is locked and refuses the attempt with the
// time left; the keys after it are not counted, so that a locked address
// does not also wear the account down. Why no one can lock another user out
// this way is in the package documentation.
func (s *Service) throttle(ctx context.Context, account, address string) (attempt, error) {
	a := attempt{account: account, address: address}
	if address != "" {
		if err := s.register(ctx, address, s.cfg.AddressLimit); err != nil {
			return a, err
		}
		if err := s.register(ctx, a.pairKey(), s.cfg.AccountAddressLimit); err != nil {
			return a, err
		}
		a.pair = true
		known, err := s.st.LoginAddressKnown(ctx, account, address, s.cfg.KnownAddressTTL)
		if err != nil {
			return a, dbError("login throttle", err)
		}
		if known {
			return a, nil
		}
	}
	if err := s.register(ctx, account, s.cfg.AccountLimit); err != nil {
		return a, err
	}
	a.accountWide = true
	return a, nil
}

// register counts one attempt against key and refuses it while key is
// locked. The attempt that locks the key audits the lock (AuditLoginLockout,
// in the same statement): one row per lock, however many attempts it
// refuses.
func (s *Service) register(ctx context.Context, key string, l Limit) error {
	a, err := s.st.LoginAttemptRegister(ctx, key, store.LoginLimit(l), store.LoginLockAudit{Action: AuditLoginLockout, Detail: lockDetail(key, l)})
	if err != nil {
		return dbError("login throttle", err)
	}
	if a.Locked {
		s.logger.WarnContext(ctx, "login locked", "key", key, "lockout_s", int64(l.Lockout/time.Second))
	}
	if a.RetryAfter > 0 {
		s.logger.WarnContext(ctx, "login throttled", "key", key, "retry_after_s", int64(a.RetryAfter/time.Second))
		return &ThrottledError{RetryAfter: a.RetryAfter}
	}
	return nil
}

// Lock scopes, as the audit rows of locks (AuditLoginLockout) say them.
const (
	LockAddress        = "sign-ins from one address"
	LockAccountAddress = "one account from one address"
	LockAccount        = "one account from addresses it is not signed in from"
)

// lockDetail is what the audit row of a lock of key says: what is locked
// (the address, IPv6 as its /64, and the account's email as typed in
// lower case), for how long, and after how many failures.
func lockDetail(key string, l Limit) map[string]any {
	d := map[string]any{"lockout": readmodel.DurationText(l.Lockout), "failures_allowed": l.MaxFailures}
	account, address := "", ""
	if rest, ok := strings.CutPrefix(key, "email:"); ok {
		account, address, _ = strings.Cut(rest, " ")
	} else {
		address = key
	}
	address = strings.TrimPrefix(address, "ip:")
	switch {
	case account != "" && address != "":
		d["locked"] = LockAccountAddress
	case account != "":
		d["locked"] = LockAccount
	default:
		d["locked"] = LockAddress
	}
	if account != "" {
		d["email"] = account
	}
	if address != "" {
		d["address"] = address
	}
	return d
}

// forgive is a success's bookkeeping: the address gets its attempt back
// (its failures stand: other accounts may be guessed at from there); the
// account from this address is cleared (the right password came from
// there); the account-wide count gets the attempt back but keeps the
// failures of other addresses; and the address becomes known to the
// account. Errors are logged: the login has its session already.
func (s *Service) forgive(ctx context.Context, a attempt) {
	warn := func(what, key string, err error) {
		if err != nil {
			s.logger.WarnContext(ctx, what, "key", key, "error", err)
		}
	}
	if a.address != "" {
		warn("give back login attempt", a.address, s.st.LoginAttemptGiveBack(ctx, a.address))
		warn("remember login address", a.pairKey(), s.st.LoginAddressRemember(ctx, a.account, a.address))
	}
	if a.pair {
		warn("reset login throttle", a.pairKey(), s.st.LoginAttemptReset(ctx, a.pairKey()))
	}
	if a.accountWide {
		warn("give back login attempt", a.account, s.st.LoginAttemptGiveBack(ctx, a.account))
	}
}

// addressKey is the throttling key of a client address: IPv6 clients are
// grouped by /64, the block one subscriber usually gets, so that walking
// through one's own addresses does not reset the count. Anything that does
// not parse shares one key. An empty address (no client, such as the CLI)
// is not throttled by address.
func addressKey(ip string) string {
	ip = strings.TrimSpace(ip)
	if ip == "" {
		return ""
	}
	a, err := netip.ParseAddr(ip)
	if err != nil {
		// A RemoteAddr ("host:port") passed as is must not put every
		// client in one bucket.
		ap, perr := netip.ParseAddrPort(ip)
		if perr != nil {
			return "ip:invalid"
		}
		a = ap.Addr()
	}
	a = a.Unmap().WithZone("")
	if a.Is6() {
		p, _ := a.Prefix(64)
		return "ip:" + p.String()
	}
	return "ip:" + a.String()
}
