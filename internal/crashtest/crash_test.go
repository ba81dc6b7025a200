//go:build crash

package crashtest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/pgtest"
	"github.com/upcheck/upcheck/internal/store"
)

// waitLeaseExpired waits until the lease has expired on the database clock.
func waitLeaseExpired(t *testing.T, d *pgtest.DB, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !query[bool](t, d, "SELECT owner IS NULL OR expires_at <= clock_timestamp() FROM core_update_lock") {
		if time.Now().After(deadline) {
			t.Fatalf("lease still held after %s", within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// noHalfWrites: a source row and its components' results are written in one
// transaction, so they always carry the same epoch.
func noHalfWrites(t *testing.T, d *pgtest.DB) {
	t.Helper()
	if n := query[int64](t, d, `SELECT count(*) FROM component_results r JOIN sources s ON s.url = r.source_url WHERE r.epoch <> s.epoch`); n != 0 {
		t.Fatalf("%d results carry another epoch than their source: a half-written source", n)
	}
}

func runStatuses(t *testing.T, d *pgtest.DB) []string {
	t.Helper()
	runs, err := store.New(d.Pool).Runs(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(runs) - 1; i >= 0; i-- {
		out = append(out, runs[i].Trigger+":"+runs[i].Status)
	}
	return out
}

// Scenario 1: SIGKILL during a slow fetch. Until the lease expires another
// instance answers busy; then it takes over and completes; nothing is
// half-written; the killed run shows as abandoned.
func TestKillDuringSlowFetch(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	pub := newPublisher(t)
	e := site(t, baseEnv(d), pub)
	release := pub.holdPath("/slow.json")
	defer release()

	a := start(t, e, "check")
	pub.awaitRequest(t, "/slow.json", 30*time.Second)
	a.signal(syscall.SIGKILL)
	if code := a.wait(5 * time.Second); code != -int(syscall.SIGKILL) {
		t.Fatalf("killed check exit = %d", code)
	}
	if code := start(t, e, "check").wait(30 * time.Second); code != 3 {
		t.Fatalf("check while the killed holder's lease is live: exit %d, want 3 (busy)", code)
	}
	release()
	waitLeaseExpired(t, d, 5*time.Second)
	b := start(t, e, "check")
	if code := b.wait(30 * time.Second); code != 0 {
		t.Fatalf("check after expiry: exit %d, want 0; %s", code, b.line())
	}
	noHalfWrites(t, d)
	if n := query[int64](t, d, "SELECT count(*) FROM component_results WHERE last_success_at IS NOT NULL"); n != 3 {
		t.Fatalf("%d components evaluated, want 3", n)
	}
	runs := fmt.Sprint(runStatuses(t, d))
	if runs != "[operator:abandoned operator:busy operator:completed]" {
		t.Fatalf("history = %s", runs)
	}
}

// Scenario 1, with two serve instances and the scheduled check: the survivor
// completes the interrupted check by itself within a lease after expiry.
func TestKillServeSurvivorCompletes(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	pub := newPublisher(t)
	e := site(t, baseEnv(d), pub).with("UPCHECK_CHECK_SCHEDULE", "0 0 1 1 *") // only the catch-up runs
	release := pub.holdPath("/slow.json")
	defer release()

	a := serve(t, e)
	pub.awaitRequest(t, "/slow.json", 30*time.Second) // a's catch-up check is fetching
	serve(t, e)                                        // its catch-up finds the lease busy
	time.Sleep(300 * time.Millisecond)
	a.signal(syscall.SIGKILL)
	killed := time.Now()
	release()

	deadline := killed.Add(3*time.Second + 3*time.Second + 2*time.Second) // expiry, one lease of retry, slack
	for {
		if n := query[int64](t, d, "SELECT count(*) FROM check_runs WHERE trigger = 'scheduled' AND status = 'completed'"); n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the survivor did not complete the interrupted check by %s after the kill; history %v", time.Since(killed), runStatuses(t, d))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("survivor completed %s after the kill", time.Since(killed).Round(10*time.Millisecond))
	noHalfWrites(t, d)
	if runs := runStatuses(t, d); runs[0] != "scheduled:abandoned" {
		t.Fatalf("history = %v, want the killed run abandoned", runs)
	}
}

// Scenario 2: the holder is paused (SIGSTOP) past its expiry while its
// fetch's answer is in flight; another instance takes over and stores a
// newer document; resumed, the old process ends lease_lost and not one of
// its writes lands.
func TestPausedHolderWritesNothing(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	pub := newPublisher(t)
	e := site(t, baseEnv(d), pub)
	release := pub.holdPath("/slow.json")
	defer release()

	a := start(t, e, "check")
	pub.awaitRequest(t, "/slow.json", 30*time.Second)
	a.signal(syscall.SIGSTOP)
	waitLeaseExpired(t, d, 6*time.Second)

	// The publisher answers a's request now (the old document, sequence 1,
	// waits in the socket) and has a newer one for everyone else.
	pub.set("/slow.json", document(2, `"blog": {"releases": [{"version": "2.0.0", "security": true}, {"version": "2.1.0"}]}, "forms": {"releases": [{"version": "1.0.0"}]}`))
	release()
	b := start(t, e, "check")
	if code := b.wait(30 * time.Second); code != 0 {
		t.Fatalf("takeover check: exit %d; %s", code, b.line())
	}
	epoch := query[int64](t, d, "SELECT epoch FROM core_update_lock")

	a.signal(syscall.SIGCONT)
	if code := a.wait(30 * time.Second); code != 5 {
		t.Fatalf("resumed old holder: exit %d, want 5 (lease_lost); %s", code, a.line())
	}
	if !strings.Contains(a.line(), `"status":"lease_lost"`) {
		t.Fatalf("old holder printed %s", a.line())
	}
	if n := query[int64](t, d, "SELECT (SELECT count(*) FROM sources WHERE epoch <> $1) + (SELECT count(*) FROM component_results WHERE epoch <> $1)", epoch); n != 0 {
		t.Fatalf("%d rows do not carry the new owner's epoch %d", n, epoch)
	}
	if seq := query[int64](t, d, "SELECT sequence FROM sources WHERE url LIKE '%/slow.json'"); seq != 2 {
		t.Fatalf("stored sequence = %d, want the new owner's 2", seq)
	}
}

// Scenario 6: SIGTERM during a check: the lease is free within a second,
// the process exits 0, and another instance runs at once.
func TestSigtermReleasesLease(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	pub := newPublisher(t)
	e := site(t, baseEnv(d), pub).with("UPCHECK_CHECK_SCHEDULE", "0 0 1 1 *")
	release := pub.holdPath("/slow.json")
	defer release()

	a := serve(t, e)
	pub.awaitRequest(t, "/slow.json", 30*time.Second)
	a.signal(syscall.SIGTERM)
	sent := time.Now()
	for !query[bool](t, d, "SELECT owner IS NULL FROM core_update_lock") {
		if time.Since(sent) > time.Second {
			t.Fatal("lease not free within a second of SIGTERM")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("lease free %s after SIGTERM", time.Since(sent).Round(time.Millisecond))
	if code := a.wait(30 * time.Second); code != 0 {
		t.Fatalf("serve exit after SIGTERM = %d, want 0", code)
	}
	release()
	if code := start(t, e, "check").wait(30 * time.Second); code != 0 {
		t.Fatalf("check right after: exit %d, want 0", code)
	}
	if runs := runStatuses(t, d); runs[0] != "scheduled:cancelled" {
		t.Fatalf("history = %v", runs)
	}
}

// Scenario 7: a source that hangs forever and one that streams 64 MiB: the
// check completes within its timeouts, memory stays bounded, both are
// recorded failures.
func TestHangingAndHugeSources(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	pub := newPublisher(t)
	pub.set("/core.json", document(1, `"core": {"releases": [{"version": "1.1.0"}]}`))
	defer pub.holdPath("/hang.json")()
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 64<<10)
		for range 1024 { // 64 MiB, no Content-Length
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer huge.Close()
	path := manifest(t, fmt.Sprintf(`{"components": [
		{"code": "core", "name": "Core", "version": "1.0.0", "source": "%s/core.json"},
		{"code": "hang", "name": "Hang", "version": "1.0.0", "source": "%s/hang.json"},
		{"code": "huge", "name": "Huge", "version": "1.0.0", "source": "%s/huge.json"}]}`, pub.URL, pub.URL, huge.URL))
	e := baseEnv(d).with("UPCHECK_MANIFEST", path, "UPCHECK_FETCH_TIMEOUT", "2s")
	if code := start(t, e, "components", "sync").wait(30 * time.Second); code != 0 {
		t.Fatal("sync failed")
	}
	began := time.Now()
	c := start(t, e, "check")
	if code := c.wait(30 * time.Second); code != 0 {
		t.Fatalf("check: exit %d; %s", code, c.line())
	}
	took := time.Since(began)
	rss := c.cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB on Linux
	t.Logf("check took %s; peak RSS %.1f MiB", took.Round(10*time.Millisecond), float64(rss)/1024)
	if took > 12*time.Second {
		t.Errorf("check took %s: the hanging source was not cut off by its timeout", took)
	}
	if rss > 100<<10 {
		t.Errorf("peak RSS %d KiB: the 64 MiB body was not capped while reading", rss)
	}
	for url, want := range map[string]string{pub.URL + "/hang.json": "timed out", huge.URL + "/huge.json": "too large"} {
		msg := query[string](t, d, "SELECT coalesce(last_error, '') FROM sources WHERE url = $1", url)
		if !strings.Contains(msg, want) {
			t.Errorf("%s: last error %q, want it to say %q", url, msg, want)
		}
	}
	if !strings.Contains(c.line(), `"failed":2`) {
		t.Errorf("check line = %s, want 2 failed", c.line())
	}
}
