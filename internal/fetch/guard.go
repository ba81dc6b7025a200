package fetch

import (
	"context"
	"net/netip"
	"syscall"
)

var (
	// Ranges netip has no predicate for.
	cgnatPrefix       = netip.MustParsePrefix("100.64.0.0/10") // RFC 6598 carrier-grade NAT, often internal
	thisNetworkPrefix = netip.MustParsePrefix("0.0.0.0/8")     // Linux routes some of it to the local host
	siteLocalPrefix   = netip.MustParsePrefix("fec0::/10")     // deprecated, still private where used
	nat64Prefix       = netip.MustParsePrefix("64:ff9b::/96")  // RFC 6052: reaches the embedded IPv4 address
	broadcastAddr     = netip.AddrFrom4([4]byte{255, 255, 255, 255})
)

// isPrivateAddr reports whether a is an address a fetch must not reach
// unless AllowPrivate: anything that is not a public unicast address on the
// internet. IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) forms
// are judged by the IPv4 address they lead to. An invalid address counts as
// private, so the guard fails closed.
func isPrivateAddr(a netip.Addr) bool {
	if !a.IsValid() {
		return true
	}
	a = a.WithZone("").Unmap()
	if nat64Prefix.Contains(a) {
		b := a.As16()
		return isPrivateAddr(netip.AddrFrom4([4]byte(b[12:])))
	}
	switch {
	case a.IsLoopback(),
		a.IsPrivate(),          // 10/8, 172.16/12, 192.168/16, fc00::/7
		a.IsLinkLocalUnicast(), // 169.254/16 (cloud metadata), fe80::/10
		a.IsLinkLocalMulticast(),
		a.IsInterfaceLocalMulticast(),
		a.IsMulticast(),
		a.IsUnspecified(): // 0.0.0.0 and :: connect to the local host
		return true
	}
	return cgnatPrefix.Contains(a) || thisNetworkPrefix.Contains(a) ||
		siteLocalPrefix.Contains(a) || a == broadcastAddr
}

// dialControl runs for every socket the client connects, after name
// resolution, with the literal address about to be dialled. Refusing here
// covers redirects, retries and DNS rebinding alike.
func (f *Fetcher) dialControl(_ context.Context, _, address string, _ syscall.RawConn) error {
	if f.blocked == nil {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		// Fail closed: an address we cannot judge is not dialled.
		return &PrivateAddressError{Raw: address}
	}
	if f.blocked(ap.Addr()) {
		return &PrivateAddressError{Addr: ap.Addr()}
	}
	return nil
}
