package updatecheck

// The check's pipeline: fetch workers hand answers to preparers, which
// queue them for the fenced writers; a tally counts their outcomes.

import (
	"context"
	"sync"

	"golang.org/x/sync/semaphore"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/store"
)

// tally counts a check's outcomes as its goroutines report them, and stops
// the check at the first outcome that carries an error.
type tally struct {
	mu       sync.Mutex
	counts   store.RunCounts
	started  int // sources whose fetch started (or that failed at once)
	observer Observer
	stop     context.CancelCauseFunc
}

func (t *tally) start() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.started++
}

func (t *tally) record(o outcome) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch o.kind {
	case fetched:
		t.counts.Fetched++
		t.observer.SourceFetched("ok")
	case notModified:
		t.counts.NotModified++
		t.observer.SourceFetched("not_modified")
	case failed:
		t.counts.Failed++
		t.observer.SourceFetched("failed")
	case skipped:
		t.counts.Skipped++
		t.observer.SourceFetched("cancelled")
	case unwritten:
		t.counts.Skipped++
		t.counts.Unwritten++
		t.observer.SourceFetched("cancelled")
	}
	if o.err != nil {
		t.stop(o.err)
	}
}

// startWriters starts the writers of the sources handed to queue: each
// takes the sources waiting in it together (gather), to write them in one
// commit, until queue is closed.
func (c *Checker) startWriters(ctx context.Context, l lease.Lease, queue chan pending, room *queueRoom, t *tally) *sync.WaitGroup {
	var writers sync.WaitGroup
	for range writerCount {
		writers.Go(func() {
			if c.beforeWrites != nil {
				c.beforeWrites()
			}
			for p := range queue {
				group := gather(queue, p)
				if ctx.Err() != nil {
					for range group {
						t.record(outcomeUnwritten) // nothing more is written once the check is cancelled
					}
				} else {
					for _, o := range c.writeGroup(ctx, l, group) {
						t.record(o)
					}
				}
				for _, p := range group {
					room.give(p)
				}
			}
		})
	}
	return &writers
}

// queueRoom is the room for results in the writers' queue
// (maxQueuedResults): a preparer takes a source's share before it queues
// it, a writer gives it back once the source is written.
type queueRoom struct {
	sem  *semaphore.Weighted
	max  int64
	full func() // for tests: a preparer waits for room
}

func newQueueRoom(max int, full func()) *queueRoom {
	return &queueRoom{sem: semaphore.NewWeighted(int64(max)), max: int64(max), full: full}
}

// take waits for p's share of the room (its results, at most all of it)
// and notes it in p.room; false when ctx ended first.
func (r *queueRoom) take(ctx context.Context, p *pending) bool {
	n := min(int64(len(p.results)), r.max)
	if !r.sem.TryAcquire(n) {
		if r.full != nil {
			r.full()
		}
		if r.sem.Acquire(ctx, n) != nil {
			return false
		}
	}
	p.room = n
	return true
}

// give gives p's share back.
func (r *queueRoom) give(p pending) { r.sem.Release(p.room) }

// fetchAnswer is a fetch's result for reqs[r], handed to the preparers.
type fetchAnswer struct {
	r    int
	resp fetch.Response
	err  error
}

// startPreparers starts the goroutines that verify, parse and evaluate
// each answer by its job's kind (jobs[of[r]]) and hand the source to the
// writers' queue, until answers is closed. The fetch workers hand them
// each answer and go on to their next request: a worker that prepared
// itself would hold back its next request by that long, and with 2,000
// sources the CPU of preparing would add to the fetching's wall time. A
// full hand-off blocks the worker, so answers waiting to be prepared
// (bodies in memory) stay few.
func (c *Checker) startPreparers(ctx context.Context, l lease.Lease, jobs []job, of []int, answers <-chan fetchAnswer, queue chan<- pending,
	room *queueRoom, t *tally) *sync.WaitGroup {
	var preparers sync.WaitGroup
	for range preparerCount {
		preparers.Go(func() {
			for a := range answers {
				j := jobs[of[a.r]]
				p, ok := j.kind.prepare(ctx, c, j, l.Epoch, a.resp, a.err)
				switch {
				case !ok && a.err == nil:
					t.record(outcomeUnwritten) // its answer arrived, the check stopped
				case !ok:
					t.record(outcomeSkipped)
				case !room.take(ctx, &p):
					t.record(outcomeUnwritten) // the check stopped while it waited for the writers
				default:
					queue <- p
					if c.queued != nil {
						c.queued()
					}
				}
			}
		})
	}
	return &preparers
}
