package fetch

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"time"
)

// checkPublicTimeout bounds the name lookup of CheckPublic.
const checkPublicTimeout = 5 * time.Second

// CheckPublic reports, before anything is sent, whether this Fetcher would
// refuse to connect to rawURL's host: a *PrivateAddressError (wrapping
// ErrPrivateAddress) when the host is, or resolves to, an address the
// private-address guard refuses (the same decision as the dialer's). It is
// nil when the guard is off (AllowPrivate), when every address is public,
// and when the URL does not parse or the name cannot be resolved now: the
// send reports those.
func (f *Fetcher) CheckPublic(ctx context.Context, rawURL string) error {
	if f.blocked == nil {
		return nil
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return nil
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		if f.blocked(a) {
			return &PrivateAddressError{Addr: a}
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, checkPublicTimeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if f.blocked(a) {
			return &PrivateAddressError{Addr: a}
		}
	}
	return nil
}
