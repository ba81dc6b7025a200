package updatecheck

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/testkit"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// bigFeed is one document for n plugins, each with a few releases and an
// advisory: about a kilobyte a package.
func bigFeed(n int) ([]byte, []manifest.Component) {
	packages := map[string]string{}
	var comps []manifest.Component
	for i := range n {
		code := fmt.Sprintf("plugin-%04d", i)
		packages[code] = `{"releases": [` +
			`{"version": "1.0.0", "summary": "` + strings.Repeat("first release ", 10) + `"},` +
			`{"version": "1.1.0", "requires_core": ">=1.8.0", "summary": "` + strings.Repeat("features ", 15) + `"},` +
			`{"version": "1.2.0", "requires_core": ">=2.0.0", "security": true, "severity": "high", "summary": "` + strings.Repeat("fixes ", 20) + `"}],` +
			`"advisories": [{"id": "ADV-` + code + `", "severity": "high", "affected": "<1.2.0", "fixed_in": "1.2.0", "summary": "` + strings.Repeat("details ", 15) + `"}]}`
		comps = append(comps, manifest.Component{Code: code, Name: code, Version: "1.0.0"})
	}
	packages["core"] = pkgCore
	return doc(1, packages), comps
}

// A manifest sync of many components sharing one large document never
// holds the lease's lock for long: a check running meanwhile keeps its
// lease (before, the sync held the lock for its whole re-evaluation and the
// check ended lease_lost although nobody else wanted the lease).
//
// It measures how long one transaction holds a lock, in wall time: it runs
// before the package's parallel tests, not among them, so that their load
// does not stretch the holds it measures.
func TestSyncDoesNotStarveTheHeartbeat(t *testing.T) {
	b := setup(t)
	var mu sync.Mutex
	var longest time.Duration
	timings := lease.Timings(testkit.Timings())
	m, err := lease.New(b.store, timings, lease.WithLogger(slog.Default()), lease.WithLockHeld(func(d time.Duration) {
		mu.Lock()
		longest = max(longest, d)
		mu.Unlock()
	}))
	if err != nil {
		t.Fatal(err)
	}
	f := fetch.New(fetch.Config{AllowPrivate: true, Timeout: 10 * time.Second, RetryDelay: 50 * time.Millisecond, MaxBody: 8 << 20}, slog.Default())
	t.Cleanup(f.Close)
	b.checker = New(b.store, m, f, slog.Default())

	const n = 2500
	body, comps := bigFeed(n)
	p := publisher.New(t)
	p.Set("/feed.json", body)
	p.Set("/slow.json", doc(1, map[string]string{"slow": pkgUpToDate}))
	site := func(core string) []manifest.Component {
		out := []manifest.Component{
			{Code: "core", Name: "Core", Version: core, Source: p.URL + "/feed.json"},
			{Code: "slow", Name: "Slow", Version: "1.0.0", Source: p.URL + "/slow.json"},
		}
		for _, c := range comps {
			c.Source = p.URL + "/feed.json"
			out = append(out, c)
		}
		return out
	}
	b.sync(site("1.9.0")...)
	if res := b.run(lease.Operator); res.Status != Completed || res.Fetched != 2 {
		t.Fatalf("first check = %s", resultJSON(res))
	}
	t.Logf("document of %d KiB for %d components", len(body)>>10, n)

	// A check is running (one of its sources hangs for longer than the
	// lease) while the core upgrade is synced: every component is
	// evaluated again.
	mu.Lock()
	longest = 0
	mu.Unlock()
	release := b.blockAndRun(p, "/slow.json")
	start := time.Now()
	rep := b.sync(site("2.0.0")...)
	t.Logf("sync of %d components took %s", n+2, time.Since(start).Round(time.Millisecond))
	if rep.Reevaluated != n+2 {
		t.Fatalf("sync = %+v, want every component evaluated again", rep)
	}
	// The check outlives the lease it held at the sync's end: only
	// renewals keep it.
	var expires time.Time
	b.db.QueryRow(t, "SELECT expires_at FROM core_update_lock").Scan(&expires)
	wait.True(t, "the database clock past the lease held at the sync's end", wait.Guard, func() (past bool) {
		b.db.QueryRow(t, "SELECT clock_timestamp() > $1", expires).Scan(&past)
		return past
	})
	// It ran to its end: on a loaded machine the held source may outlast
	// its fetch timeout and fail, which is not what this test is about.
	res := release()
	if !res.Status.RanToEnd() {
		t.Fatalf("check running during the sync = %s, want it to run to its end", resultJSON(res))
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("longest hold of the lease's lock: %s", longest)
	if longest > timings.TxTimeout/2 {
		t.Fatalf("a transaction held the lease's lock for %s, want well under the %s a renewal may wait", longest, timings.TxTimeout)
	}
	if r := b.results()["plugin-0042"]; !r.Evaluated || !r.UpdateAvailable || r.Update != "1.2.0" {
		t.Fatalf("plugin-0042 after the core upgrade = %+v", r)
	}
}
