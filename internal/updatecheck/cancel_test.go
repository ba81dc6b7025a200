package updatecheck

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/wait"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// Cancellation (shutdown): requests in flight are aborted, queued sources
// never start, nothing is recorded as a publisher failure, every started
// request is awaited, the lease is released at once, and no goroutine is
// left behind. Not parallel: goleak must see only this test's goroutines.
func TestCancellationAbortsFetchesAndLeavesNothing(t *testing.T) {
	b := setup(t)
	p := publisher.New(t)
	ignore := goleak.IgnoreCurrent()

	hang := make(chan struct{})
	defer close(hang)
	var inFlight, aborted atomic.Int32
	p.OnRequest(func(r *http.Request) {
		inFlight.Add(1)
		select {
		case <-hang:
		case <-r.Context().Done():
			aborted.Add(1)
		}
	})
	// 40 sources on one host: at most 2 run at once, the rest queue.
	components := []manifest.Component{{Code: "core", Name: "Core", Version: "1.0.0"}}
	for i := range 40 {
		path := fmt.Sprintf("/s%02d.json", i)
		p.Set(path, doc(1, map[string]string{fmt.Sprintf("p%02d", i): pkgUpToDate}))
		components = append(components, manifest.Component{Code: fmt.Sprintf("p%02d", i), Name: "P", Version: "1.0.0", Source: p.URL + path})
	}
	b.sync(components...)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result, 1)
	go func() {
		res, err := b.checker.RunLockedUpdateCheck(ctx, lease.Operator, "test")
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	wait.True(t, "two fetches in flight", wait.Guard, func() bool { return inFlight.Load() == 2 })
	cancel()
	var res Result
	select {
	case res = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("check did not return promptly after cancellation")
	}
	if res.Status != Cancelled || res.Failed != 0 || res.Skipped != 40 {
		t.Fatalf("result = %s", resultJSON(res))
	}
	if n := inFlight.Load(); n != 2 {
		t.Fatalf("publisher saw %d requests, want only the 2 in flight (queued ones must never start)", n)
	}
	// The publisher sees an abort when the closed connection reaches its
	// handler, which may be after the check returned.
	wait.True(t, "both in-flight requests aborted at the publisher", wait.Guard, func() bool { return aborted.Load() == 2 })
	var failures int
	b.db.QueryRow(t, "SELECT count(*) FROM sources WHERE consecutive_failures > 0 OR last_error IS NOT NULL").Scan(&failures)
	if failures != 0 {
		t.Fatalf("%d sources recorded a failure for a cancelled request", failures)
	}
	// The lease was released: another instance can run at once.
	a, err := b.otherInstance().lease.Acquire(context.Background(), lease.Operator)
	if err != nil || a.Outcome != lease.Acquired {
		t.Fatalf("lease after cancellation: %+v %v", a, err)
	}
	if runs := b.runs(); len(runs) != 1 || runs[0] != "operator:cancelled" {
		t.Fatalf("runs = %v", runs)
	}
	// A request aborted in flight fetched nothing: none was fetched but
	// not saved.
	var unwritten int
	b.db.QueryRow(t, "SELECT sources_unwritten FROM check_runs").Scan(&unwritten)
	if unwritten != 0 {
		t.Fatalf("%d sources fetched but not saved, want 0: none was fetched", unwritten)
	}
	b.fetcher.Close()
	goleak.VerifyNone(t, ignore)
}

// A lost lease cancels the check the same way, and the run ends lease_lost.
func TestLeaseLossCancelsTheCheck(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	var requests atomic.Int32
	p.OnRequest(func(r *http.Request) {
		requests.Add(1)
		<-r.Context().Done()
	})
	components := []manifest.Component{{Code: "core", Name: "Core", Version: "1.0.0"}}
	for i := range 10 {
		path := fmt.Sprintf("/s%02d.json", i)
		components = append(components, manifest.Component{Code: fmt.Sprintf("p%02d", i), Name: "P", Version: "1.0.0", Source: p.URL + path})
	}
	b.sync(components...)
	done := make(chan Result, 1)
	go func() { done <- b.run(lease.Operator) }()
	wait.True(t, "two requests at the publisher", wait.Guard, func() bool { return requests.Load() == 2 })
	// Another instance takes the lease (as if this one had frozen).
	if res := b.takeOver(done); res.Status != LeaseLost || res.Failed != 0 {
		t.Fatalf("result = %s", resultJSON(res))
	}
	if n := requests.Load(); n != 2 {
		t.Fatalf("%d requests made, want 2: queued sources must not start after the loss", n)
	}
	var rows int
	b.db.QueryRow(t, "SELECT count(*) FROM sources").Scan(&rows)
	if rows != 0 {
		t.Fatalf("%d source rows written by a run that lost its lease", rows)
	}
}

// The database going away under a check (here: the session that reads the
// sources' trust is ended by the server, SQLSTATE 57P01) stops it the way a
// lost lease does: a holder that cannot reach the database cannot confirm
// its lease. It ends lease_lost (the button's "interrupted"), never
// failed, whose 500 is for a write that failed for another reason, and the
// history records why: connection_lost.
func TestDatabaseGoneDuringACheckEndsLeaseLost(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	p.Set("/s.json", doc(1, map[string]string{"blog": pkgUpToDate}))
	b.sync(manifest.Component{Code: "core", Name: "Core", Version: "1.0.0"},
		manifest.Component{Code: "blog", Name: "Blog", Version: "1.0.0", Source: p.URL + "/s.json"})
	b.db.MustExec(t, `ALTER TABLE source_trust RENAME TO source_trust_kept`)
	b.db.MustExec(t, `CREATE FUNCTION upcheck_test_end_session() RETURNS SETOF source_trust_kept LANGUAGE plpgsql AS $$
		BEGIN
			PERFORM pg_terminate_backend(pg_backend_pid());
			PERFORM pg_sleep(5); -- ended here
			RETURN QUERY SELECT * FROM source_trust_kept;
		END $$`)
	b.db.MustExec(t, `CREATE VIEW source_trust AS SELECT * FROM upcheck_test_end_session()`)

	res := b.run(lease.Operator)
	if res.Status != LeaseLost {
		t.Fatalf("result = %s, want lease_lost", resultJSON(res))
	}
	if runs := b.runs(); len(runs) != 1 || runs[0] != "operator:connection_lost" {
		t.Fatalf("runs = %v", runs)
	}
	// The lease was released: another instance can run at once.
	a, err := b.otherInstance().lease.Acquire(context.Background(), lease.Operator)
	if err != nil || a.Outcome != lease.Acquired {
		t.Fatalf("lease after the check: %+v %v", a, err)
	}
}

// A source whose document arrived but whose outcome was not written when
// the check stopped is counted apart (Unwritten, sources_unwritten) from
// the sources never fetched: the history says "fetched but not saved", not
// "not started". The document of a pinned source arrives unsigned, so the
// check fetches its .sig, which hangs until the check is cancelled.
func TestCancelledCheckCountsSourcesFetchedButNotSaved(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	pub, _, err := updatedoc.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	p.Set("/feed.json", doc(1, map[string]string{"core": pkgCore}))
	p.Hold("/feed.json.sig") // never released: the request ends with the check
	b.sync(manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/feed.json", Key: pub.String()})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result, 1)
	go func() {
		res, err := b.checker.RunLockedUpdateCheck(ctx, lease.Operator, "test")
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	wait.True(t, "the feed's signature asked once", wait.Guard, func() bool {
		return p.Requests("/feed.json.sig") == 1
	})
	cancel()
	res := <-done
	if res.Status != Cancelled || res.Skipped != 1 {
		t.Fatalf("result = %s, want cancelled with 1 source not finished", resultJSON(res))
	}
	var skipped, unwritten int
	b.db.QueryRow(t, "SELECT sources_skipped, sources_unwritten FROM check_runs").Scan(&skipped, &unwritten)
	if skipped != 1 || unwritten != 1 {
		t.Fatalf("run recorded %d skipped, %d of them fetched but not written; want 1 and 1", skipped, unwritten)
	}
}

// takeOver makes another instance take the lease of the check whose result
// done will carry (as if this one had frozen), and returns that result:
// the check must stop within 3 s.
func (b *bundle) takeOver(done <-chan Result) Result {
	b.t.Helper()
	b.db.MustExec(b.t, "UPDATE core_update_lock SET expires_at = clock_timestamp() - interval '1 second'")
	if a, err := b.otherInstance().lease.Acquire(context.Background(), lease.Operator); err != nil || a.Outcome != lease.Acquired {
		b.t.Fatalf("takeover: %+v %v", a, err)
	}
	select {
	case res := <-done:
		return res
	case <-time.After(3 * time.Second):
		b.t.Fatal("the check did not stop after losing its lease")
	}
	return Result{}
}
