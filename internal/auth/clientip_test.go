package auth

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestClientAddress(t *testing.T) {
	t.Parallel()
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48")}
	for _, c := range []struct {
		name    string
		trusted []netip.Prefix
		peer    string
		xff     []string
		want    string
	}{
		{"no proxies trusted: forwarding ignored", nil, "192.0.2.1:4711", []string{"203.0.113.5"}, "192.0.2.1"},
		{"untrusted peer: forwarding ignored", proxies, "192.0.2.1:4711", []string{"203.0.113.5"}, "192.0.2.1"},
		{"trusted peer without forwarding", proxies, "10.0.0.1:4711", nil, "10.0.0.1"},
		{"trusted peer", proxies, "10.0.0.1:4711", []string{"203.0.113.5"}, "203.0.113.5"},
		{"forged leftmost entry", proxies, "10.0.0.1:4711", []string{"198.51.100.9, 203.0.113.5"}, "203.0.113.5"},
		{"forged entry naming a proxy", proxies, "10.0.0.1:4711", []string{"10.9.9.9, 203.0.113.5"}, "203.0.113.5"},
		{"two proxies", proxies, "10.0.0.1:4711", []string{"198.51.100.9, 203.0.113.5, 10.0.0.2"}, "203.0.113.5"},
		{"several header lines", proxies, "10.0.0.1:4711", []string{"198.51.100.9", "203.0.113.5 ,10.0.0.2"}, "203.0.113.5"},
		{"every entry a proxy", proxies, "10.0.0.1:4711", []string{"10.0.0.3, 10.0.0.2"}, "10.0.0.3"},
		{"garbage left of the client", proxies, "10.0.0.1:4711", []string{"unknown, 203.0.113.5"}, "203.0.113.5"},
		{"garbage from a proxy", proxies, "10.0.0.1:4711", []string{"203.0.113.5, unknown, 10.0.0.2"}, "10.0.0.2"},
		{"entry with a port", proxies, "10.0.0.1:4711", []string{"203.0.113.5:5555"}, "203.0.113.5"},
		{"IPv6 entry in brackets with a port", proxies, "[2001:db8:ffff::1]:443", []string{"[2001:db8:1::5]:4711"}, "2001:db8:1::5"},
		{"IPv6 entry in brackets", proxies, "[2001:db8:ffff::1]:443", []string{"[2001:db8:1::5]"}, "2001:db8:1::5"},
		{"IPv4-mapped proxy", proxies, "[::ffff:10.0.0.1]:443", []string{"203.0.113.5"}, "203.0.113.5"},
		{"IPv4-mapped client", proxies, "10.0.0.1:443", []string{"::ffff:203.0.113.5"}, "203.0.113.5"},
		{"empty entries", proxies, "10.0.0.1:4711", []string{", 203.0.113.5,,", ""}, "203.0.113.5"},
	} {
		r := httptest.NewRequest("POST", "/login", nil)
		r.RemoteAddr = c.peer
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := ClientAddress(c.trusted)(r); got != c.want {
			t.Errorf("%s: client %q, want %q", c.name, got, c.want)
		}
	}
}
