// Package publisher is the tests' one publisher of update documents: a real
// HTTP server (httptest) that serves, per path, a document with or without
// its Upcheck-Signature header, a failing status, or a handler of the
// test's own; answers conditional requests with 304 when asked to; counts
// the requests to each path; and holds a path's requests until the test
// lets them go, for cancellation, takeover and crash scenarios.
//
// A path nobody published answers 404. What a request gets is what the
// path held when it arrived: a document changed while a request is held
// reaches the next request, not that one.
package publisher

import (
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/testing/wait"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// Publisher is a running publisher; its server closes when the test ends.
type Publisher struct {
	// URL is the server's base URL, "http://127.0.0.1:PORT", with no
	// trailing slash.
	URL string

	srv  *httptest.Server
	pub  updatedoc.PublicKey
	priv updatedoc.PrivateKey

	mu        sync.Mutex
	answers   map[string]answer
	holds     map[string]*Hold
	requests  map[string]int
	etags     bool
	any304    bool
	fallback  http.Handler
	onRequest func(*http.Request)
	all       []*Hold // every hold made, released when the test ends
}

// answer is what a path serves.
type answer struct {
	body      []byte
	signature string       // the Upcheck-Signature header; none when empty
	status    int          // a failing status instead of the body, when not 0
	handler   http.Handler // the test's own answer, when set
}

// Option changes how New starts the publisher.
type Option func(*options)

type options struct {
	addr     string
	etags    bool
	any304   bool
	fallback http.Handler
}

// On makes the publisher listen on addr ("127.0.0.3:0") instead of a free
// port of 127.0.0.1, so that several publishers are several hosts.
func On(addr string) Option { return func(o *options) { o.addr = addr } }

// WithETags makes every document carry an ETag derived from its bytes and
// answers a request that sends it back in If-None-Match with 304.
func WithETags() Option { return func(o *options) { o.etags = true } }

// NotModifiedToAny makes the publisher answer 304 to every request to a
// published document that carries If-None-Match, whatever tag it names: a
// publisher that vouches for a document it never sent.
func NotModifiedToAny() Option { return func(o *options) { o.any304 = true } }

// Fallback answers, with h, the requests to paths the test did not
// publish (for example the demo publisher's documents), instead of 404.
// Holds and counts apply to them too.
func Fallback(h http.Handler) Option { return func(o *options) { o.fallback = h } }

// New starts a publisher with a fresh signing key (Key, Sign) and closes
// it when t ends, after letting every held request go.
func New(t testing.TB, opts ...Option) *Publisher {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	pub, priv, err := updatedoc.GenerateKey()
	if err != nil {
		t.Fatalf("publisher key: %v", err)
	}
	p := &Publisher{pub: pub, priv: priv, answers: map[string]answer{}, holds: map[string]*Hold{},
		requests: map[string]int{}, etags: o.etags, any304: o.any304, fallback: o.fallback}
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(p.serve))
	if o.addr != "" {
		ln, err := net.Listen("tcp", o.addr)
		if err != nil {
			t.Fatalf("publisher: listen on %s: %v", o.addr, err)
		}
		p.srv.Listener.Close()
		p.srv.Listener = ln
	}
	p.srv.Start()
	p.URL = p.srv.URL
	t.Cleanup(func() {
		p.mu.Lock()
		all := p.all
		p.mu.Unlock()
		for _, h := range all {
			h.Release()
		}
		p.srv.Close()
	})
	return p
}

// Addr is the "host:port" the publisher listens on.
func (p *Publisher) Addr() string { return p.srv.Listener.Addr().String() }

// Key is the public key of the publisher's own signing key: what a
// manifest pins for documents published with Sign.
func (p *Publisher) Key() updatedoc.PublicKey { return p.pub }

// Sign is body's signature by the publisher's own key.
func (p *Publisher) Sign(body []byte) string { return updatedoc.Sign(body, p.priv) }

// Set publishes body at path, unsigned.
func (p *Publisher) Set(path string, body []byte) { p.put(path, answer{body: body}) }

// SetSigned publishes body at path with signature in its Upcheck-Signature
// header: p.Sign(body), another key's signature or a wrong one, the
// test's choice.
func (p *Publisher) SetSigned(path string, body []byte, signature string) {
	p.put(path, answer{body: body, signature: signature})
}

// Fail makes path answer status (with its text as the body), as a
// publisher having a bad day.
func (p *Publisher) Fail(path string, status int) { p.put(path, answer{status: status}) }

// Handle makes h answer path: a test's own answer (a body that streams
// for ever, say). Holds and counts apply to it.
func (p *Publisher) Handle(path string, h http.Handler) { p.put(path, answer{handler: h}) }

// Remove makes path answer 404 again.
func (p *Publisher) Remove(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.answers, path)
}

func (p *Publisher) put(path string, a answer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answers[path] = a
}

// OnRequest calls f with every request as it arrives, before it is held
// or answered, on the server's goroutine (so f must not call t.Fatal).
func (p *Publisher) OnRequest(f func(*http.Request)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onRequest = f
}

// Requests is how many requests to path have arrived.
func (p *Publisher) Requests(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests[path]
}

// AwaitRequests waits until n requests to path have arrived in all, and
// fails t when they have not within the time given.
func (p *Publisher) AwaitRequests(t testing.TB, path string, n int, within time.Duration) {
	t.Helper()
	wait.For(t, fmt.Sprintf("%d requests to %s", n, path), within, func() (bool, error) {
		if got := p.Requests(path); got < n {
			return false, wait.Notf("%d arrived", got)
		}
		return true, nil
	})
}

// Hold makes the requests to path that arrive from now on wait, until
// Release (or until their client gives up). Stop lets later requests
// through while those already waiting go on waiting.
func (p *Publisher) Hold(path string) *Hold {
	h := &Hold{p: p, path: path, released: make(chan struct{})}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holds[path] = h
	p.all = append(p.all, h)
	return h
}

// Hold is a path's held requests.
type Hold struct {
	p        *Publisher
	path     string
	released chan struct{}
	once     sync.Once
}

// Stop holds no more requests; those waiting wait for Release.
func (h *Hold) Stop() {
	h.p.mu.Lock()
	defer h.p.mu.Unlock()
	if h.p.holds[h.path] == h {
		delete(h.p.holds, h.path)
	}
}

// Release stops the hold and answers the requests waiting. Calling it
// again does nothing.
func (h *Hold) Release() {
	h.Stop()
	h.once.Do(func() { close(h.released) })
}

func (p *Publisher) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.requests[r.URL.Path]++
	a, published := p.answers[r.URL.Path] // what the path held when the request arrived
	hold, etags, any304, fallback, onRequest := p.holds[r.URL.Path], p.etags, p.any304, p.fallback, p.onRequest
	p.mu.Unlock()
	if onRequest != nil {
		onRequest(r)
	}
	if hold != nil {
		select {
		case <-hold.released:
		case <-r.Context().Done():
			return
		}
	}
	switch {
	case !published && fallback != nil:
		fallback.ServeHTTP(w, r)
	case !published:
		http.NotFound(w, r)
	case a.handler != nil:
		a.handler.ServeHTTP(w, r)
	case a.status != 0:
		http.Error(w, http.StatusText(a.status), a.status)
	case any304 && r.Header.Get("If-None-Match") != "":
		w.WriteHeader(http.StatusNotModified)
	default:
		if etags {
			tag := fmt.Sprintf(`"%x"`, sha256.Sum256(a.body))
			if r.Header.Get("If-None-Match") == tag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("ETag", tag)
		}
		if a.signature != "" {
			w.Header().Set("Upcheck-Signature", a.signature)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(a.body) //nolint:errcheck // a client that hung up is the test's to notice
	}
}
