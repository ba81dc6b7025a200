package fetch

import (
	"context"
	"net/netip"
	"syscall"
)

var (
	// nat64Prefix is RFC 6052's well-known NAT64 prefix: an address in it
	// reaches the IPv4 address in its last 32 bits.
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	// sixToFourPrefix is 6to4 (RFC 3056): an address in it reaches the IPv4
	// address in the 32 bits after the prefix.
	sixToFourPrefix = netip.MustParsePrefix("2002::/16")
	// globalUnicast is IANA's global unicast space: every IPv6 address
	// outside it (and outside the NAT64 prefix) is reserved, local or
	// special (100::/64 discard, 5f00::/16 SRv6, ::/96 IPv4-compatible, …)
	// and never a publisher's.
	globalUnicast = netip.MustParsePrefix("2000::/3")
)

// specialPrefixes are the blocks of the IANA special-purpose address
// registries (IPv4 and IPv6; RFC 6890 and later) that are not globally
// reachable, or are anycast relays and protocol assignments rather than
// hosts, and that netip has no predicate for. Loopback, RFC 1918, unique
// local, link-local, multicast and unspecified are IsLoopback and the rest,
// below.
var specialPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network": Linux routes some of it to the local host
	netip.MustParsePrefix("100.64.0.0/10"),   // RFC 6598 carrier-grade NAT, often internal
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments: DS-Lite, NAT64 discovery, PCP and TURN anycast
	netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1 (documentation)
	netip.MustParsePrefix("192.88.99.0/24"),  // 6to4 relay anycast, deprecated (RFC 7526)
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking; also proxies' and VPNs' fake-IP ranges
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and 255.255.255.255 broadcast
	netip.MustParsePrefix("64:ff9b:1::/48"),  // RFC 8215 local-use NAT64: the local network's own translator
	netip.MustParsePrefix("2001::/23"),       // IETF protocol assignments: Teredo, benchmarking, ORCHID, anycast services
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("3fff::/20"),       // documentation (RFC 9637)
	netip.MustParsePrefix("fec0::/10"),       // site-local, deprecated, still private where used
}

// isPrivateAddr reports whether a is an address a fetch must not reach
// unless AllowPrivate: anything that is not a public unicast address on the
// internet. IPv4-mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::a.b.c.d) and
// 6to4 (2002:AABB:CCDD::) forms are judged by the IPv4 address they lead
// to. An invalid address counts as private, so the guard fails closed.
func isPrivateAddr(a netip.Addr) bool {
	if !a.IsValid() {
		return true
	}
	a = a.WithZone("").Unmap()
	if nat64Prefix.Contains(a) {
		b := a.As16()
		return isPrivateAddr(netip.AddrFrom4([4]byte(b[12:])))
	}
	if sixToFourPrefix.Contains(a) {
		b := a.As16()
		return isPrivateAddr(netip.AddrFrom4([4]byte(b[2:6])))
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
	case a.Is6() && !globalUnicast.Contains(a):
		return true
	}
	for _, p := range specialPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
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
