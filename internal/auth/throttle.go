package auth

import (
	"context"
	"net/netip"
	"strings"
	"time"

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

// throttle registers the attempt against each key (address first, so a
// locked address does not also lock the account it is guessing at) and
// refuses it when one of them is locked.
func (s *Service) throttle(ctx context.Context, addressKey, accountKey string) error {
	type rule struct {
		key   string
		limit Limit
	}
	for _, r := range []rule{{addressKey, s.cfg.AddressLimit}, {accountKey, s.cfg.AccountLimit}} {
		if r.key == "" {
			continue
		}
		wait, err := s.st.LoginAttemptRegister(ctx, r.key, store.LoginLimit(r.limit))
		if err != nil {
			return dbError("login throttle", err)
		}
		if wait > 0 {
			s.logger.WarnContext(ctx, "login throttled", "key", r.key, "retry_after_s", int64(wait/time.Second))
			return &ThrottledError{RetryAfter: wait}
		}
	}
	return nil
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
