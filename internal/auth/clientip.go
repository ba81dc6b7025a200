package auth

import (
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// ClientAddress returns the function that names the client a login is
// throttled by; the web layer makes it echo's IPExtractor, which RealIP
// calls.
//
// With no trusted proxies it is the TCP peer's address and every forwarding
// header is ignored: a client writes those headers itself, and a new
// X-Forwarded-For per attempt must not escape the per-address limit.
//
// When the peer is inside one of trusted, the client is read from
// X-Forwarded-For, walking from the right, the end that each proxy appends
// to: the first address that is not itself a trusted proxy is the client.
// Whatever lies to its left was written by the client or its own proxies
// and cannot be believed. A trusted hop that wrote something that is not an
// address ends the walk at the last address believed. If every entry is a
// trusted proxy, the leftmost is the client.
//
// trusted should hold the reverse proxies only: a client inside a trusted
// range is taken for a proxy, and its own header is believed.
func ClientAddress(trusted []netip.Prefix) func(*http.Request) string {
	if len(trusted) == 0 {
		return peerAddress
	}
	trusted = slices.Clone(trusted)
	isProxy := func(a netip.Addr) bool {
		return slices.ContainsFunc(trusted, func(p netip.Prefix) bool { return p.Contains(a) })
	}
	return func(r *http.Request) string {
		client, ok := parseHop(r.RemoteAddr)
		if !ok || !isProxy(client) {
			return peerAddress(r)
		}
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for _, hop := range slices.Backward(hops) {
			hop = strings.TrimSpace(hop)
			if hop == "" {
				continue
			}
			a, ok := parseHop(hop)
			if !ok {
				break
			}
			client = a
			if !isProxy(a) {
				break
			}
		}
		return client.String()
	}
}

// peerAddress is the TCP peer's address as echo's ExtractIPDirect reads
// it: RemoteAddr without its port, RemoteAddr itself when it is a bare IP,
// "" when it is neither.
func peerAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		if net.ParseIP(r.RemoteAddr) != nil {
			return r.RemoteAddr
		}
		return ""
	}
	return host
}

// parseHop reads an address as peers and proxies write it: bare, with a
// port, IPv6 in brackets with or without one. IPv4-mapped IPv6 is read as
// IPv4 and zones are dropped, so that prefixes match either form.
func parseHop(s string) (netip.Addr, bool) {
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	} else if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		s = s[1 : len(s)-1]
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}
