package fetch

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// Run fetches every request in reqs with at most Config.Concurrency requests
// in flight, and at most Config.PerHost of them to any one host name. It
// calls fn once for each request it started, with the request's index in reqs
// and the result of [Fetcher.Fetch].
//
// fn must not be nil. It is called from Run's worker goroutines, so calls
// run concurrently (up to Concurrency at once) and in no particular order;
// fn must be safe for that. A request's host slot is released before fn is
// called, so a slow fn (writing results, say) does not hold back that host's
// next request, but it does occupy its worker. Run returns only after every
// fn call has returned.
//
// When ctx is cancelled, requests in flight are aborted and fn still gets
// their results, with an error for which [IsCancelled](ctx, err) is true
// (it wraps ctx.Err() and context.Cause(ctx)). Requests not yet started are
// never started — the server sees nothing of them — and fn is not called for
// them. Run then returns an error wrapping ctx.Err() and the cause that says
// how many requests were not started; it returns nil when every request was
// started.
func (f *Fetcher) Run(ctx context.Context, reqs []Request, fn func(ctx context.Context, i int, resp Response, err error)) error {
	q := newQueue(reqs, f.cfg.PerHost)
	// Workers waiting for a host slot must notice cancellation, and a
	// sync.Cond cannot select on ctx.Done(): wake them instead.
	stopWake := context.AfterFunc(ctx, q.wakeAll)
	defer stopWake()

	var wg sync.WaitGroup
	for range min(f.cfg.Concurrency, len(reqs)) {
		wg.Go(func() {
			for {
				i, ok := q.take(ctx)
				if !ok {
					return
				}
				resp, err := f.Fetch(ctx, reqs[i])
				q.release(i)
				fn(ctx, i, resp, err)
			}
		})
	}
	wg.Wait()

	if n := q.unstarted(); n > 0 {
		return fmt.Errorf("fetch run: %d of %d requests not started: %w", n, len(reqs), ctxError(ctx))
	}
	return nil
}

// queue hands out request indices so that no host has more than perHost in
// flight. A worker takes the first queued request whose host has room, so a
// saturated host never holds back requests to other hosts; it waits only when
// every queued request is for a saturated host, and a finished request (or
// cancellation) wakes it.
type queue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	hosts   []string       // host key of each request, by index
	pending []int          // indices not started yet, in the caller's order
	active  map[string]int // requests in flight per host key
	perHost int
}

func newQueue(reqs []Request, perHost int) *queue {
	q := &queue{
		hosts:   make([]string, len(reqs)),
		pending: make([]int, len(reqs)),
		active:  make(map[string]int),
		perHost: perHost,
	}
	q.cond = sync.NewCond(&q.mu)
	for i, r := range reqs {
		q.hosts[i] = hostKey(r.URL)
		q.pending[i] = i
	}
	return q
}

// take returns the next request to start and claims a slot for its host. It
// returns false when nothing is left or ctx is done; it blocks while every
// pending request's host is saturated.
func (q *queue) take(ctx context.Context) (int, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		// Checked under the lock, so wakeAll (which takes the lock after
		// ctx is done) cannot slip in between this check and Wait.
		if ctx.Err() != nil || len(q.pending) == 0 {
			return 0, false
		}
		for k, i := range q.pending {
			if h := q.hosts[i]; q.active[h] < q.perHost {
				q.active[h]++
				q.pending = slices.Delete(q.pending, k, k+1)
				return i, true
			}
		}
		q.cond.Wait()
	}
}

// release frees the host slot claimed by take for request i.
func (q *queue) release(i int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	h := q.hosts[i]
	if q.active[h]--; q.active[h] <= 0 {
		delete(q.active, h)
	}
	q.cond.Broadcast()
}

func (q *queue) wakeAll() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.cond.Broadcast()
}

func (q *queue) unstarted() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}

// hostKey groups requests by host name, port ignored: politeness is owed to
// the machine, not to one of its ports. Unparsable URLs share the empty key;
// they fail before any request is made.
func hostKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}
