package updatecheck

import (
	"context"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// summaryTTL is how long a summary read is reused. Every instance reads the
// database again at least this often, so another instance's check shows
// within it; this instance's own checks, syncs and dismissals drop the
// cached value at once.
const summaryTTL = 500 * time.Millisecond

// summaryReadTimeout bounds the shared read, which no single request owns.
const summaryReadTimeout = 5 * time.Second

// summaryCache holds the last summary read and the read in flight, so that
// a burst of requests costs one query.
type summaryCache struct {
	mu       sync.Mutex
	value    readmodel.Summary
	readAt   time.Time // monotonic
	valid    bool
	gen      uint64 // bumped by invalidate: a read begun before it is not kept
	inflight *summaryRead
	// schedule is the schedule this process runs (Scheduler.Run), for
	// next_check_at; nil while none runs.
	schedule cron.Schedule
}

type summaryRead struct {
	done  chan struct{}
	value readmodel.Summary
	err   error
}

func (sc *summaryCache) invalidate() {
	sc.mu.Lock()
	sc.gen++
	sc.valid = false
	sc.mu.Unlock()
}

// scheduled records the schedule this process runs (nil: none any more).
func (sc *summaryCache) scheduled(s cron.Schedule) {
	sc.mu.Lock()
	sc.schedule = s
	sc.mu.Unlock()
}

// withNextCheck fills in when the schedule this process runs fires next,
// on the process's clock: a fact of the process, not of the database, so
// it is added to every copy handed out rather than cached.
func (sc *summaryCache) withNextCheck(v readmodel.Summary) readmodel.Summary {
	sc.mu.Lock()
	s := sc.schedule
	sc.mu.Unlock()
	v.NextCheckAt = nil
	if s != nil {
		if next := s.Next(time.Now().UTC()); !next.IsZero() {
			next = next.UTC()
			v.NextCheckAt = &next
		}
	}
	return v
}

// Summary is the stored summary, reused for up to summaryTTL and read by
// one query at a time however many requests ask, with when this process's
// schedule runs the next check. It never fetches.
func (c *Checker) Summary(ctx context.Context) (readmodel.Summary, error) {
	sc := &c.summary
	sc.mu.Lock()
	if sc.valid && time.Since(sc.readAt) < summaryTTL {
		v := sc.value
		sc.mu.Unlock()
		return sc.withNextCheck(v), nil
	}
	r := sc.inflight
	if r == nil {
		r = &summaryRead{done: make(chan struct{})}
		sc.inflight = r
		gen := sc.gen
		go c.readShared(r, gen)
	}
	sc.mu.Unlock()
	select {
	case <-r.done:
		if r.err != nil {
			return readmodel.Summary{}, r.err
		}
		return sc.withNextCheck(r.value), nil
	case <-ctx.Done():
		return readmodel.Summary{}, context.Cause(ctx)
	}
}

// readShared reads the summary for every waiter; it is kept only if nothing
// invalidated the cache meanwhile.
func (c *Checker) readShared(r *summaryRead, gen uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), summaryReadTimeout)
	defer cancel()
	r.value, r.err = ReadSummary(ctx, c.store)
	sc := &c.summary
	sc.mu.Lock()
	sc.inflight = nil
	if r.err == nil && gen == sc.gen {
		sc.value, sc.readAt, sc.valid = r.value, time.Now(), true
	}
	sc.mu.Unlock()
	close(r.done)
}

// ReadSummary reads the summary from the database, bypassing any cache
// (metrics use it: database_up must say what the database does now).
func ReadSummary(ctx context.Context, st *store.Store) (readmodel.Summary, error) {
	return st.Summary(ctx)
}
