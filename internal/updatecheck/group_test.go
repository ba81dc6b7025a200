package updatecheck

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/testkit"
)

// Sources prepared while the writers are busy are written together: one
// pipelined batch behind one fence, one commit, for all of them. A commit
// waits for its WAL to reach the disk while it holds the lease's lock, so
// one commit for each source made the commits the bound of a check
// (docs/performance.md). The writers are held until every source is
// prepared; each then takes what waits, so the twelve sources (the core's and eleven plugins') are written
// in at most one fenced write per writer (before: one per source).
func TestSourcesWaitingForTheWritersShareOneCommit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var mu sync.Mutex
	var holds int
	m, err := lease.New(b.store, lease.Timings(testkit.Timings()), lease.WithLogger(slog.Default()),
		lease.WithLockHeld(func(time.Duration) { mu.Lock(); holds++; mu.Unlock() }))
	if err != nil {
		t.Fatal(err)
	}
	c := New(b.store, m, b.fetcher, slog.Default())
	const sources = 12
	p := publisher.New(t)
	p.Set("/core.json", doc(1, map[string]string{"core": pkgUpToDate}))
	comps := []manifest.Component{{Code: "core", Name: "Core", Version: "1.0.0", Source: p.URL + "/core.json"}}
	for i := range sources - 1 {
		path := fmt.Sprintf("/s%d.json", i)
		code := fmt.Sprintf("p%d", i)
		p.Set(path, doc(1, map[string]string{code: `{"releases": [{"version": "1.0.0"}, {"version": "1.1.0"}]}`}))
		comps = append(comps, manifest.Component{Code: code, Name: code, Version: "1.0.0", Source: p.URL + path})
	}
	b.sync(comps...)

	var queued atomic.Int64
	all := make(chan struct{})
	c.queued = func() {
		if queued.Add(1) == sources {
			close(all)
		}
	}
	c.beforeWrites = func() { <-all }
	mu.Lock()
	holds = 0
	mu.Unlock()
	res, err := c.RunLockedUpdateCheck(t.Context(), lease.Operator, "test")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != Completed || res.Fetched != sources {
		t.Fatalf("result = %+v", res)
	}
	for code, r := range b.results() {
		if code == "core" {
			continue
		}
		if !r.Evaluated || r.Update != "1.1.0" || r.Epoch != res.Epoch {
			t.Errorf("%s: %+v, want evaluated, 1.1.0 offered, by this check", code, r)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// The sources' writes, and the check's clean-up (one more).
	if holds > writerCount+1 {
		t.Errorf("%d fenced writes for %d sources and the clean-up, want at most %d: the sources waiting were not written together", holds, sources, writerCount+1)
	}
}

// The writers' queue holds a bounded number of results (maxQueuedResults,
// lowered here to 3): with the writers held, a preparer waits for room
// once 3 sources of one result each are queued, and every source is
// written once the writers go on. Unbounded, a check whose writes are
// slower than its fetches held every source's results at once.
func TestTheWritersQueueIsBounded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := New(b.store, b.lease, b.fetcher, slog.Default())
	const sources, room = 12, 3
	p := publisher.New(t)
	p.Set("/core.json", doc(1, map[string]string{"core": pkgUpToDate}))
	comps := []manifest.Component{{Code: "core", Name: "Core", Version: "1.0.0", Source: p.URL + "/core.json"}}
	for i := range sources - 1 {
		path := fmt.Sprintf("/s%d.json", i)
		code := fmt.Sprintf("p%d", i)
		p.Set(path, doc(1, map[string]string{code: `{"releases": [{"version": "1.0.0"}, {"version": "1.1.0"}]}`}))
		comps = append(comps, manifest.Component{Code: code, Name: code, Version: "1.0.0", Source: p.URL + path})
	}
	b.sync(comps...)

	var queued atomic.Int64
	var queuedWhenFull atomic.Int64
	queuedWhenFull.Store(-1)
	full, all := make(chan struct{}), make(chan struct{})
	var fullOnce sync.Once
	c.queuedResultsMax = room
	c.queued = func() {
		if queued.Add(1) == sources {
			close(all)
		}
	}
	c.queueFull = func() {
		fullOnce.Do(func() { queuedWhenFull.Store(queued.Load()); close(full) })
	}
	// The writers wait until a preparer found the queue full, or every
	// source was queued (the bound not kept).
	c.beforeWrites = func() {
		select {
		case <-full:
		case <-all:
		}
	}
	res, err := c.RunLockedUpdateCheck(t.Context(), lease.Operator, "test")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != Completed || res.Fetched != sources {
		t.Fatalf("result = %+v", res)
	}
	if n := queuedWhenFull.Load(); n != room {
		t.Errorf("a preparer waited for room with %d sources queued, want %d (-1: none waited)", n, room)
	}
	for code, r := range b.results() {
		if !r.Evaluated || r.Epoch != res.Epoch {
			t.Errorf("%s: %+v, want evaluated by this check", code, r)
		}
	}
}
