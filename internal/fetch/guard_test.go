package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

func TestIsPrivateAddr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr    string
		private bool
	}{
		// IPv4
		{"127.0.0.1", true},
		{"127.255.255.254", true},
		{"10.1.2.3", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"172.32.0.1", false},
		{"192.168.1.1", true},
		{"169.254.169.254", true},
		{"100.64.0.1", true},
		{"100.127.255.255", true},
		{"100.128.0.1", false},
		{"100.63.255.255", false},
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"224.0.0.1", true},
		{"239.255.255.250", true},
		{"255.255.255.255", true},
		{"8.8.8.8", false},
		{"93.184.216.34", false},
		// The IPv4 special-purpose registry's blocks that are not globally
		// reachable.
		{"192.0.0.1", true},     // 192.0.0.0/24 IETF protocol assignments (DS-Lite, NAT64 discovery)
		{"192.0.0.171", true},   //
		{"192.0.2.10", true},    // 192.0.2.0/24 TEST-NET-1
		{"198.51.100.7", true},  // 198.51.100.0/24 TEST-NET-2
		{"203.0.113.200", true}, // 203.0.113.0/24 TEST-NET-3
		{"198.18.0.1", true},    // 198.18.0.0/15 benchmarking (and proxies' fake-IP ranges)
		{"198.19.255.254", true},
		{"198.20.0.1", false},
		{"192.88.99.1", true}, // 192.88.99.0/24 6to4 relay anycast, deprecated (RFC 7526)
		{"240.0.0.1", true},   // 240.0.0.0/4 reserved
		{"254.1.2.3", true},
		{"192.0.1.1", false},
		{"192.31.196.1", false}, // AS112: globally reachable
		{"223.255.255.255", false},
		// IPv6
		{"::1", true},
		{"::", true},
		{"fe80::1", true},
		{"fe80::1%eth0", true},
		{"fc00::1", true},
		{"fd12:3456::1", true},
		{"fec0::1", true},
		{"ff02::1", true},
		{"ff05::2", true},
		{"ff0e::1", true},
		{"2001:4860:4860::8888", false},
		{"2606:4700::1111", false},
		// IPv6: outside 2000::/3, IANA's global unicast space, nothing is
		// public; inside it, the special-purpose blocks that are not
		// globally reachable.
		{"64:ff9b:1::1", true}, // 64:ff9b:1::/48 local-use NAT64 (RFC 8215)
		{"64:ff9b:1:ffff::808:808", true},
		{"100::1", true},           // 100::/64 discard-only
		{"100:0:0:1::1", true},     // 100:0:0:1::/64 dummy prefix
		{"::7f00:1", true},         // ::/96 IPv4-compatible, deprecated
		{"::808:808", true},        //
		{"5f00::1", true},          // 5f00::/16 SRv6 SIDs (RFC 9602)
		{"4000::1", true},          // reserved by the IETF
		{"fe00::1", true},          //
		{"2001::1", true},          // 2001::/23 IETF protocol assignments: Teredo 2001::/32 …
		{"2001:2::1", true},        // … benchmarking 2001:2::/48 …
		{"2001:1ff:ffff::1", true}, // … the rest of the /23
		{"2001:200::1", false},     // just after it
		{"2001:db8::1", true},      // 2001:db8::/32 documentation
		{"3fff::1", true},          // 3fff::/20 documentation (RFC 9637)
		{"3fff:1000::1", false},
		// 6to4 (2002::/16) reaches the IPv4 address after its prefix.
		{"2002:7f00:1::1", true},
		{"2002:a00:1::1", true},
		{"2002:c0a8:101::1", true},
		{"2002:808:808::1", false},
		// IPv4-mapped and NAT64 forms are judged by the IPv4 address.
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.0.0.1", true},
		{"::ffff:169.254.169.254", true},
		{"::ffff:100.64.0.1", true},
		{"::ffff:0.0.0.0", true},
		{"::ffff:8.8.8.8", false},
		{"64:ff9b::7f00:1", true},
		{"64:ff9b::a00:1", true},
		{"64:ff9b::808:808", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			t.Parallel()
			a := netip.MustParseAddr(tt.addr)
			if got := isPrivateAddr(a); got != tt.private {
				t.Errorf("isPrivateAddr(%s) = %v, want %v", tt.addr, got, tt.private)
			}
		})
	}
	if !isPrivateAddr(netip.Addr{}) {
		t.Error("the zero Addr must count as private (fail closed)")
	}
}

// countingGuard wraps a classifier so a test can tell how many connections
// the dialer attempted.
func countingGuard(n *atomic.Int64, blocked func(netip.Addr) bool) func(netip.Addr) bool {
	return func(a netip.Addr) bool {
		n.Add(1)
		return blocked(a)
	}
}

func okHandler(hits *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "ok")
	})
}

func TestGuardRefusesLoopback(t *testing.T) {
	t.Parallel()
	var hits, dials atomic.Int64
	srv := serve(t, "127.0.0.1", okHandler(&hits))
	f := setup(t, Config{})
	f.blocked = countingGuard(&dials, f.blocked) // the real classifier, counted

	_, err := f.Fetch(t.Context(), Request{URL: srv.URL})
	if !errors.Is(err, ErrPrivateAddress) {
		t.Fatalf("err = %v, want ErrPrivateAddress", err)
	}
	if hits.Load() != 0 {
		t.Errorf("server saw %d requests, want 0", hits.Load())
	}
	// A refusal is an answer, not a blip: one dial, no retry.
	if dials.Load() != 1 {
		t.Errorf("dialled %d times, want 1 (no retry)", dials.Load())
	}
	if IsCancelled(t.Context(), err) {
		t.Error("a refusal is not a cancellation")
	}
}

func TestGuardAllowPrivate(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := serve(t, "127.0.0.1", okHandler(&hits))
	f := setup(t, Config{AllowPrivate: true})

	resp, err := f.Fetch(t.Context(), Request{URL: srv.URL})
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if string(resp.Body) != "ok" || hits.Load() != 1 {
		t.Errorf("body %q, hits %d; want \"ok\", 1", resp.Body, hits.Load())
	}
}

// The guard judges the resolved address, not the name in the URL.
func TestGuardResolvesNames(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := serve(t, "127.0.0.1", okHandler(&hits))
	_, port, _ := net.SplitHostPort(srv.Addr())
	f := setup(t, Config{})

	_, err := f.Fetch(t.Context(), Request{URL: "http://localhost:" + port + "/"})
	if !errors.Is(err, ErrPrivateAddress) {
		t.Fatalf("err = %v, want ErrPrivateAddress", err)
	}
	if hits.Load() != 0 {
		t.Errorf("server saw %d requests, want 0", hits.Load())
	}
}

// A "public" publisher redirecting to a "private" address is refused at the
// redirect. Both are loopback servers; the seam declares 127.0.0.2 private.
func TestGuardRefusesRedirectToPrivate(t *testing.T) {
	t.Parallel()
	var privateHits, publicHits atomic.Int64
	private := serve(t, "127.0.0.2", okHandler(&privateHits))
	public := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		publicHits.Add(1)
		if r.URL.Path == "/plain" {
			fmt.Fprint(w, "public")
			return
		}
		http.Redirect(w, r, private.URL+"/secret", http.StatusFound)
	}))
	privateAddr := netip.MustParseAddr("127.0.0.2")
	f := setup(t, Config{})
	f.blocked = func(a netip.Addr) bool { return a.Unmap() == privateAddr }

	// The seam really lets the "public" server through…
	resp, err := f.Fetch(t.Context(), Request{URL: public.URL + "/plain"})
	if err != nil || string(resp.Body) != "public" {
		t.Fatalf("fetch of the public server: body %q, err %v", resp.Body, err)
	}
	// …and the redirect to the "private" one is refused.
	_, err = f.Fetch(t.Context(), Request{URL: public.URL + "/doc.json"})
	if !errors.Is(err, ErrPrivateAddress) {
		t.Fatalf("err = %v, want ErrPrivateAddress", err)
	}
	if !strings.Contains(err.Error(), "127.0.0.2") {
		t.Errorf("error %q does not name the refused address", err)
	}
	if privateHits.Load() != 0 {
		t.Errorf("private server saw %d requests, want 0", privateHits.Load())
	}
	if publicHits.Load() != 2 {
		t.Errorf("public server saw %d requests, want 2 (no retry)", publicHits.Load())
	}
}

func TestRefusesOtherSchemes(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	}))
	f := setup(t, Config{AllowPrivate: true})

	for _, u := range []string{"file:///etc/passwd", "ftp://example.com/doc.json", "gopher://127.0.0.1:70/"} {
		if _, err := f.Fetch(t.Context(), Request{URL: u}); !errors.Is(err, ErrUnsupportedScheme) {
			t.Errorf("Fetch(%s): err = %v, want ErrUnsupportedScheme", u, err)
		}
	}
	if _, err := f.Fetch(t.Context(), Request{URL: srv.URL}); !errors.Is(err, ErrUnsupportedScheme) {
		t.Errorf("redirect to file: err = %v, want ErrUnsupportedScheme", err)
	}
	if hits.Load() != 1 {
		t.Errorf("server saw %d requests, want 1 (no retry)", hits.Load())
	}
}

func TestDialControlFailsClosed(t *testing.T) {
	t.Parallel()
	f := New(Config{}, nil)
	if err := f.dialControl(context.Background(), "tcp", "not-an-address", nil); !errors.Is(err, ErrPrivateAddress) {
		t.Errorf("err = %v, want ErrPrivateAddress", err)
	}
	if err := f.dialControl(context.Background(), "tcp6", "[::ffff:169.254.169.254]:80", nil); !errors.Is(err, ErrPrivateAddress) {
		t.Errorf("mapped metadata address: err = %v, want ErrPrivateAddress", err)
	}
	if err := f.dialControl(context.Background(), "tcp4", "8.8.8.8:443", nil); err != nil {
		t.Errorf("public address: err = %v, want nil", err)
	}
}
