package catalog

import (
	"context"
	"sync"
	"time"

	"github.com/upcheck/upcheck/internal/testsignal"
)

// The read caches' ages (doc.go says what they mean for a reader).
const (
	readFresh  = 500 * time.Millisecond
	readMaxAge = time.Second
)

// readTimeout bounds a shared read, which no single request owns.
const readTimeout = 5 * time.Second

// readCache holds the last value read from the database and the read in
// flight, so that a burst of requests costs one query.
type readCache[T any] struct {
	mu       sync.Mutex
	value    T
	readAt   time.Time // monotonic
	valid    bool
	gen      uint64 // bumped by invalidate: a read begun before it is not kept
	inflight *cacheRead[T]
	signals  readSignals
}

// readSignals let a test see what a cache did rather than sleep for long
// enough (River's test signals); production leaves them nil.
type readSignals struct {
	began testsignal.Signal[struct{}] // a read begins
	waits testsignal.Signal[struct{}] // a request waits for a read
}

type cacheRead[T any] struct {
	gen   uint64 // the cache's generation when the read began
	done  chan struct{}
	value T
	err   error
}

// invalidate drops the cached value: the next request waits for a read
// begun after this call.
func (rc *readCache[T]) invalidate() {
	rc.mu.Lock()
	rc.gen++
	rc.valid = false
	rc.mu.Unlock()
}

// get returns the cached value, refreshing it as the constants above say;
// read is the query. holds, when not nil, is a cheaper question asked
// before read: whether the cached value still says what the database says
// now; when it does, the value is kept as if read again.
func (rc *readCache[T]) get(ctx context.Context, read func(context.Context) (T, error),
	holds func(context.Context, T) (bool, error)) (T, error) {
	rc.mu.Lock()
	age := time.Since(rc.readAt)
	if rc.valid && age < readFresh {
		v := rc.value
		rc.mu.Unlock()
		return v, nil
	}
	// A read begun before the last invalidate may miss that write: it is
	// not joined, a new one begins.
	r := rc.inflight
	if r == nil || r.gen != rc.gen {
		r = &cacheRead[T]{gen: rc.gen, done: make(chan struct{})}
		rc.inflight = r
		if !rc.valid {
			holds = nil // nothing to ask about: invalidated, or never read
		}
		go rc.readShared(r, rc.value, read, holds)
		rc.signals.began.Send(struct{}{})
	}
	if rc.valid && age < readMaxAge {
		v := rc.value // the read above refreshes it for the requests after this one
		rc.mu.Unlock()
		return v, nil
	}
	rc.mu.Unlock()
	rc.signals.waits.Send(struct{}{})
	select {
	case <-r.done:
		return r.value, r.err
	case <-ctx.Done():
		var zero T
		return zero, context.Cause(ctx)
	}
}

// readShared reads for every waiter; the value is kept only if nothing
// invalidated the cache meanwhile.
func (rc *readCache[T]) readShared(r *cacheRead[T], cached T, read func(context.Context) (T, error),
	holds func(context.Context, T) (bool, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	began := time.Now() // the value is as old as the read's start
	if ok, err := holdsStill(ctx, cached, holds); err != nil {
		r.err = err
	} else if ok {
		r.value = cached
	} else {
		r.value, r.err = read(ctx)
	}
	rc.mu.Lock()
	if rc.inflight == r {
		rc.inflight = nil
	}
	if r.err == nil && r.gen == rc.gen {
		rc.value, rc.readAt, rc.valid = r.value, began, true
	}
	rc.mu.Unlock()
	close(r.done)
}

// holdsStill asks holds about cached; false without a question to ask.
func holdsStill[T any](ctx context.Context, cached T, holds func(context.Context, T) (bool, error)) (bool, error) {
	if holds == nil {
		return false, nil
	}
	return holds(ctx, cached)
}

// keyedMax is how many keys a keyedCache keeps.
const keyedMax = 64

// keyedCache is a readCache for each of the last max (keyedMax) keys asked, for
// a read with arguments (a page of the fleet, an impact): each key's value
// is cached, refreshed and dropped as readCache's is, the key asked least
// recently forgotten first.
type keyedCache[T any] struct {
	// max is how many keys it keeps; 0: keyedMax.
	max     int
	mu      sync.Mutex
	entries map[string]*keyedEntry[T]
	asks    uint64
}

type keyedEntry[T any] struct {
	cache readCache[T]
	asked uint64 // keyedCache.asks when last asked
}

// get is readCache.get of key's cache.
func (kc *keyedCache[T]) get(ctx context.Context, key string, read func(context.Context) (T, error)) (T, error) {
	kc.mu.Lock()
	if kc.entries == nil {
		kc.entries = map[string]*keyedEntry[T]{}
	}
	e := kc.entries[key]
	if e == nil {
		max := kc.max
		if max == 0 {
			max = keyedMax
		}
		if len(kc.entries) >= max {
			oldest := ""
			for k, o := range kc.entries {
				if oldest == "" || o.asked < kc.entries[oldest].asked {
					oldest = k
				}
			}
			delete(kc.entries, oldest)
		}
		e = &keyedEntry[T]{}
		kc.entries[key] = e
	}
	kc.asks++
	e.asked = kc.asks
	kc.mu.Unlock()
	return e.cache.get(ctx, read, nil)
}

// invalidate drops every key's value, as readCache.invalidate does.
func (kc *keyedCache[T]) invalidate() {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	for _, e := range kc.entries {
		e.cache.invalidate()
	}
}
