package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

type secret string

func (s secret) Reveal() string { return string(s) }
func (secret) String() string   { return "[redacted]" }

// tokens maps an .npmrc key ("//host:port/path/") to its token; For
// gives the token of the longest key a URL starts with, as npm does.
type tokens map[string]string

func (ts tokens) For(u *url.URL) Credential {
	best := ""
	addr := "//" + u.Host + u.EscapedPath()
	for k := range ts {
		if strings.HasPrefix(addr, k) && len(k) > len(best) {
			best = k
		}
	}
	if best == "" {
		return nil
	}
	return secret(ts[best])
}

// seen records the Authorization header each host:port and path received.
type seen struct {
	mu   sync.Mutex
	auth map[string]string
}

func (s *seen) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		if s.auth == nil {
			s.auth = map[string]string{}
		}
		s.auth[r.Host+r.URL.Path] = r.Header.Get("Authorization")
		s.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// got is the header hostPath received, and whether it was asked at all.
func (s *seen) got(hostPath string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.auth[hostPath]
	return v, ok
}

// redirectTo answers every request with a redirect to target.
func redirectTo(target func(r *http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target(r), http.StatusFound)
	})
}

var answer = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "{}") })

// A redirect never carries the token of the request it follows: the target
// gets its own token by its own host, port and path, or none — to another
// host, to another port of the same host (which the http package would
// have sent it to) and within one server to another path.
func TestBearerFollowsItsOwnKeyOnRedirects(t *testing.T) {
	t.Parallel()
	var s seen
	other := serve(t, "127.0.0.2", s.handler(answer))
	samePort := serve(t, "127.0.0.1", s.handler(answer))
	first := serve(t, "127.0.0.1", s.handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-other-host":
			http.Redirect(w, r, other.URL+"/doc", http.StatusFound)
		case "/to-other-port":
			http.Redirect(w, r, samePort.URL+"/doc", http.StatusFound)
		case "/to-keyless-port":
			http.Redirect(w, r, samePort.URL+"/free/doc", http.StatusFound)
		case "/reg/to-other-path":
			http.Redirect(w, r, "/cdn/doc", http.StatusFound)
		default:
			answer(w, r)
		}
	})))
	// An empty token is no token: the path under /free/ gets none.
	keys := tokens{
		"//" + first.Addr() + "/":         "tok-first",
		"//" + first.Addr() + "/cdn/":     "tok-first-cdn",
		"//" + samePort.Addr() + "/":      "tok-port",
		"//" + samePort.Addr() + "/free/": "",
	}
	f := setup(t, Config{AllowPrivate: true})
	for _, path := range []string{"/to-other-host", "/to-other-port", "/to-keyless-port", "/reg/to-other-path"} {
		if _, err := f.Fetch(t.Context(), Request{URL: first.URL + path, Bearer: keys.For}); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if v, _ := s.got(first.Addr() + path); v != "Bearer tok-first" {
			t.Errorf("%s itself got Authorization %q", path, v)
		}
	}
	for _, c := range []struct{ hostPath, want string }{
		{other.Addr() + "/doc", ""},
		{samePort.Addr() + "/doc", "Bearer tok-port"},
		{samePort.Addr() + "/free/doc", ""},
		{first.Addr() + "/cdn/doc", "Bearer tok-first-cdn"},
	} {
		v, ok := s.got(c.hostPath)
		if !ok {
			t.Errorf("%s was never asked", c.hostPath)
		} else if v != c.want {
			t.Errorf("%s got Authorization %q, want %q", c.hostPath, v, c.want)
		}
	}
}

// A redirect to a subdomain gets no token of the parent's (the http package
// would send it): host names are resolved to loopback by the test's dialer.
func TestBearerStaysOffSubdomains(t *testing.T) {
	t.Parallel()
	var s seen
	srv := serve(t, "127.0.0.1", s.handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Host, "registry.test:") {
			_, port, _ := net.SplitHostPort(r.Host)
			http.Redirect(w, r, "http://cdn.registry.test:"+port+"/doc", http.StatusFound)
			return
		}
		answer(w, r)
	})))
	_, port, _ := net.SplitHostPort(srv.Addr())
	f := setup(t, Config{AllowPrivate: true})
	dial := f.transport.DialContext
	f.transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, p, _ := net.SplitHostPort(addr); strings.HasSuffix(host, ".test") {
			addr = net.JoinHostPort("127.0.0.1", p)
		}
		return dial(ctx, network, addr)
	}
	keys := tokens{"//registry.test:" + port + "/": "tok-parent"}
	if _, err := f.Fetch(t.Context(), Request{URL: "http://registry.test:" + port + "/pkg", Bearer: keys.For}); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.got("registry.test:" + port + "/pkg"); v != "Bearer tok-parent" {
		t.Errorf("the registry got Authorization %q", v)
	}
	if v, ok := s.got("cdn.registry.test:" + port + "/doc"); !ok || v != "" {
		t.Errorf("the subdomain got Authorization %q (asked: %v), want none", v, ok)
	}
}

// After a redirect from https to http no token is sent, not even the
// target's own: anyone on the path would read it.
func TestBearerNeverAfterHTTPSToHTTP(t *testing.T) {
	t.Parallel()
	var s seen
	plain := serve(t, "127.0.0.1", s.handler(answer))
	secure := httptest.NewUnstartedServer(s.handler(redirectTo(func(*http.Request) string { return plain.URL + "/doc" })))
	secure.StartTLS()
	t.Cleanup(secure.Close)
	f := setup(t, Config{AllowPrivate: true})
	roots := x509.NewCertPool()
	roots.AddCert(secure.Certificate())
	f.transport.TLSClientConfig = &tls.Config{RootCAs: roots}
	secureAddr := secure.Listener.Addr().String()
	keys := tokens{"//" + secureAddr + "/": "tok-secure", "//" + plain.Addr() + "/": "tok-plain"}
	if _, err := f.Fetch(t.Context(), Request{URL: secure.URL + "/pkg", Bearer: keys.For}); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.got(secureAddr + "/pkg"); v != "Bearer tok-secure" {
		t.Errorf("the https registry got Authorization %q", v)
	}
	if v, ok := s.got(plain.Addr() + "/doc"); !ok || v != "" {
		t.Errorf("the http target got Authorization %q (asked: %v), want none", v, ok)
	}
	// Asked directly, the http registry gets its own token.
	if _, err := f.Fetch(t.Context(), Request{URL: plain.URL + "/direct", Bearer: keys.For}); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.got(plain.Addr() + "/direct"); v != "Bearer tok-plain" {
		t.Errorf("the http registry asked directly got Authorization %q", v)
	}
}
