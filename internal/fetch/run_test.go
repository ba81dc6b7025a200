package fetch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/testing/publisher"
)

// hostIPs are distinct loopback addresses, each a distinct host for the
// per-host limit.
var hostIPs = []string{"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"}

// result is what a test's fn recorded for one request.
type result struct {
	resp Response
	err  error
}

// collect returns an fn for Run that records results by index, and the map
// it fills. It also fails the test if fn is called twice for one index.
func collect(t *testing.T) (func(context.Context, int, Response, error), func() map[int]result) {
	var mu sync.Mutex
	got := make(map[int]result)
	fn := func(_ context.Context, i int, resp Response, err error) {
		mu.Lock()
		defer mu.Unlock()
		if _, dup := got[i]; dup {
			t.Errorf("fn called twice for request %d", i)
		}
		got[i] = result{resp, err}
	}
	return fn, func() map[int]result {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(got)
	}
}

func TestRunBounds(t *testing.T) {
	t.Parallel()
	const concurrency, perHost, perServer = 5, 2, 6
	var global gauge
	hosts := make([]*gauge, len(hostIPs))
	gate := newFullGate(concurrency, perHost, len(hostIPs), perServer)
	var reqs []Request
	for h, ip := range hostIPs {
		hosts[h] = new(gauge)
		g := hosts[h]
		srv := serve(t, ip, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			global.enter()
			g.enter()
			defer global.leave()
			defer g.leave()
			gate.hold(r.Context(), h)
			fmt.Fprint(w, r.URL.Query().Get("i"))
		}))
		for range perServer {
			reqs = append(reqs, Request{URL: srv.URL + "/doc.json?i=" + strconv.Itoa(len(reqs))})
		}
	}
	f := setup(t, Config{AllowPrivate: true, Concurrency: concurrency, PerHost: perHost})
	fn, results := collect(t)

	if err := f.Run(t.Context(), reqs, fn); err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := results()
	if len(got) != len(reqs) {
		t.Fatalf("fn called for %d requests, want %d", len(got), len(reqs))
	}
	for i, r := range got {
		if r.err != nil || string(r.resp.Body) != strconv.Itoa(i) {
			t.Errorf("request %d: body %q, err %v", i, r.resp.Body, r.err)
		}
	}
	if p := global.peak.Load(); p != concurrency {
		t.Errorf("peak in flight = %d, want %d: the gate holds the first requests until Run has that many out", p, concurrency)
	}
	for h, g := range hosts {
		if p := g.peak.Load(); p > perHost {
			t.Errorf("host %s: peak in flight = %d, want ≤ %d", hostIPs[h], p, perHost)
		}
	}
}

// fullGate holds each request until Run has used all the room its bounds
// leave: concurrency requests in flight, or every host with requests still
// to come at its per-host limit. Then the requests held are let go, and the
// next ones are held until the room is full again: the bounds are tested
// at their limit, whatever the machine's speed.
type fullGate struct {
	mu                   sync.Mutex
	concurrency, perHost int
	inFlight             int
	hostIn, hostLeft     []int
	fills                int           // how many times the room was full
	filled               chan struct{} // closed and replaced at each fill
}

func newFullGate(concurrency, perHost, hosts, perServer int) *fullGate {
	g := &fullGate{concurrency: concurrency, perHost: perHost, hostIn: make([]int, hosts),
		hostLeft: make([]int, hosts), filled: make(chan struct{})}
	for h := range g.hostLeft {
		g.hostLeft[h] = perServer
	}
	return g
}

// full says whether Run can start no further request.
func (g *fullGate) full() bool {
	if g.inFlight >= g.concurrency {
		return true
	}
	for h, left := range g.hostLeft {
		if left > 0 && g.hostIn[h] < g.perHost {
			return false
		}
	}
	return true
}

// hold is a request to host h: it returns once the room has been full
// since it arrived (or ctx ends).
func (g *fullGate) hold(ctx context.Context, h int) {
	g.mu.Lock()
	g.inFlight++
	g.hostIn[h]++
	g.hostLeft[h]--
	arrived := g.fills
	if g.full() {
		g.fills++
		close(g.filled)
		g.filled = make(chan struct{})
	}
	for g.fills == arrived {
		filled := g.filled
		g.mu.Unlock()
		select {
		case <-filled:
		case <-ctx.Done():
		}
		g.mu.Lock()
		if ctx.Err() != nil {
			break
		}
	}
	g.inFlight--
	g.hostIn[h]--
	g.mu.Unlock()
}

// A saturated host must not hold workers back from other hosts: with the
// slow host's requests queued first, the fast host is still served while the
// slow one is stuck.
func TestRunSaturatedHostDoesNotBlockOthers(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var slowGauge gauge
	slow := serve(t, hostIPs[0], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slowGauge.enter()
		defer slowGauge.leave()
		select {
		case <-release:
		case <-r.Context().Done():
		}
		fmt.Fprint(w, "slow")
	}))
	fastDone := make(chan struct{})
	var fastHits atomic.Int64
	fast := serve(t, hostIPs[1], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fastHits.Add(1)
		fmt.Fprint(w, "fast")
	}))

	var reqs []Request
	for range 6 {
		reqs = append(reqs, Request{URL: slow.URL})
	}
	const fastCount = 2
	for range fastCount {
		reqs = append(reqs, Request{URL: fast.URL})
	}
	f := setup(t, Config{AllowPrivate: true, Concurrency: 4, PerHost: 2})
	var fastSeen atomic.Int64
	record, results := collect(t)
	fn := func(ctx context.Context, i int, resp Response, err error) {
		record(ctx, i, resp, err)
		if string(resp.Body) == "fast" && fastSeen.Add(1) == fastCount {
			close(fastDone)
		}
	}

	runErr := make(chan error, 1)
	go func() { runErr <- f.Run(t.Context(), reqs, fn) }()
	select {
	case <-fastDone:
	case <-time.After(5 * time.Second):
		t.Error("the fast host was not served while the slow host was saturated")
	}
	close(release)
	if err := <-runErr; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := len(results()); n != len(reqs) {
		t.Errorf("fn called for %d requests, want %d", n, len(reqs))
	}
	if p := slowGauge.peak.Load(); p > 2 {
		t.Errorf("slow host peak in flight = %d, want ≤ 2", p)
	}
}

// Cancelling while requests hang: Run returns promptly, in-flight requests
// report the cancellation, queued ones are never requested and get no fn.
func TestRunCancel(t *testing.T) {
	t.Parallel()
	const concurrency, total = 3, 10
	var hits atomic.Int64
	arrived := make(chan struct{}, total)
	var servers []*publisher.Publisher
	for _, ip := range hostIPs[:2] {
		servers = append(servers, serve(t, ip, hang(&hits, arrived)))
	}
	var reqs []Request
	for i := range total {
		reqs = append(reqs, Request{URL: servers[i%2].URL})
	}
	f := setup(t, Config{AllowPrivate: true, Concurrency: concurrency, PerHost: 2})
	fn, results := collect(t)

	ctx, cancel := context.WithCancelCause(t.Context())
	runErr := make(chan error, 1)
	go func() { runErr <- f.Run(ctx, reqs, fn) }()
	for range concurrency {
		select {
		case <-arrived:
		case <-time.After(5 * time.Second):
			t.Fatal("requests did not reach the servers")
		}
	}
	cancel(errLeaseLost)

	var err error
	select {
	case err = <-runErr:
	case <-time.After(3 * time.Second):
		t.Fatal("Run did not return promptly after cancellation")
	}
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errLeaseLost) || !IsCancelled(ctx, err) {
		t.Errorf("Run: err = %v, want the cancellation and its cause", err)
	}
	if h := hits.Load(); h != concurrency {
		t.Errorf("servers saw %d requests, want %d: queued requests must not start", h, concurrency)
	}
	got := results()
	if len(got) != concurrency {
		t.Errorf("fn called for %d requests, want %d (only the started ones)", len(got), concurrency)
	}
	for i, r := range got {
		if !IsCancelled(ctx, r.err) || !errors.Is(r.err, errLeaseLost) {
			t.Errorf("request %d: err = %v, want a cancellation with the cause", i, r.err)
		}
	}
}

// A context cancelled before the call asks nothing: Fetch and Run answer
// a cancellation, no request reaches the server, Run calls fn for none.
func TestAlreadyCancelledAsksNothing(t *testing.T) {
	t.Parallel()
	for name, call := range map[string]func(t *testing.T, ctx context.Context, f *Fetcher, url string) (calls int, err error){
		"fetch": func(_ *testing.T, ctx context.Context, f *Fetcher, url string) (int, error) {
			_, err := f.Fetch(ctx, Request{URL: url})
			return 0, err
		},
		"run": func(t *testing.T, ctx context.Context, f *Fetcher, url string) (int, error) {
			fn, results := collect(t)
			err := f.Run(ctx, []Request{{URL: url}, {URL: url}}, fn)
			return len(results()), err
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var hits atomic.Int64
			srv := serve(t, "127.0.0.1", okHandler(&hits))
			f := setup(t, Config{AllowPrivate: true})
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			calls, err := call(t, ctx, f, srv.URL)
			if !IsCancelled(ctx, err) {
				t.Errorf("err = %v, want a cancellation", err)
			}
			if hits.Load() != 0 || calls != 0 {
				t.Errorf("hits %d, fn calls %d; want 0, 0", hits.Load(), calls)
			}
		})
	}
}

// Failures are reported per request and do not stop the others.
func TestRunMixedResults(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, r.URL.Path)
	}))
	reqs := []Request{{URL: srv.URL + "/a"}, {URL: srv.URL + "/missing"}, {URL: "ftp://x/"}, {URL: srv.URL + "/b"}}
	f := setup(t, Config{AllowPrivate: true})
	fn, results := collect(t)

	if err := f.Run(t.Context(), reqs, fn); err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := results()
	keys := make([]int, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []int{0, 1, 2, 3}) {
		t.Fatalf("fn called for %v, want [0 1 2 3]", keys)
	}
	if string(got[0].resp.Body) != "/a" || string(got[3].resp.Body) != "/b" {
		t.Errorf("bodies %q, %q; want /a, /b", got[0].resp.Body, got[3].resp.Body)
	}
	if !errors.Is(got[1].err, ErrStatus) || !errors.Is(got[2].err, ErrUnsupportedScheme) {
		t.Errorf("errors %v, %v; want ErrStatus, ErrUnsupportedScheme", got[1].err, got[2].err)
	}
	if hits.Load() != 3 {
		t.Errorf("hits = %d, want 3", hits.Load())
	}
}

func TestRunEmpty(t *testing.T) {
	t.Parallel()
	f := setup(t, Config{})
	if err := f.Run(t.Context(), nil, func(context.Context, int, Response, error) {
		t.Error("fn called for an empty batch")
	}); err != nil {
		t.Errorf("Run: %v", err)
	}
}
