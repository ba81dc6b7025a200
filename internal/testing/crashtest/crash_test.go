//go:build crash

package crashtest

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/publisher"
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

// noHalfWrites: a source row and its components' first results are written
// in one transaction (and a source of these tests has fewer components than
// one batch), so they always carry the same epoch.
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
	pub := publisher.New(t)
	e := site(t, baseEnv(d), pub)
	release := pub.Hold("/slow.json").Release
	defer release()

	a := start(t, e, "check")
	pub.AwaitRequests(t, "/slow.json", 1, 30*time.Second)
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
	if n := query[int64](t, d, "SELECT count(*) FROM component_state WHERE evaluated"); n != 3 {
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
	pub := publisher.New(t)
	e := site(t, baseEnv(d), pub).with("UPCHECK_CHECK_SCHEDULE", "0 0 1 1 *") // only the catch-up runs
	release := pub.Hold("/slow.json").Release
	defer release()

	a := serve(t, e)
	pub.AwaitRequests(t, "/slow.json", 1, 30*time.Second) // a's catch-up check is fetching
	serve(t, e)                                           // its catch-up finds the lease busy
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
	pub := publisher.New(t)
	e := site(t, baseEnv(d), pub)
	release := pub.Hold("/slow.json").Release
	defer release()

	a := start(t, e, "check")
	pub.AwaitRequests(t, "/slow.json", 1, 30*time.Second)
	a.signal(syscall.SIGSTOP)
	waitLeaseExpired(t, d, 6*time.Second)

	// The publisher answers a's request now (the old document, sequence 1,
	// waits in the socket) and has a newer one for everyone else.
	pub.Set("/slow.json", document(2, `"blog": {"releases": [{"version": "2.0.0", "security": true}, {"version": "2.1.0"}]}, "forms": {"releases": [{"version": "1.0.0"}]}`))
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
	pub := publisher.New(t)
	e := site(t, baseEnv(d), pub).with("UPCHECK_CHECK_SCHEDULE", "0 0 1 1 *")
	release := pub.Hold("/slow.json").Release
	defer release()

	a := serve(t, e)
	pub.AwaitRequests(t, "/slow.json", 1, 30*time.Second)
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
	pub := publisher.New(t)
	pub.Set("/core.json", document(1, `"core": {"releases": [{"version": "1.1.0"}]}`))
	defer pub.Hold("/hang.json").Release()
	huge := publisher.New(t)
	huge.Handle("/huge.json", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 64<<10)
		for range 1024 { // 64 MiB, no Content-Length
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
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
	peak := c.peakRSS()
	// The hanging and the huge source fail: completed with failures, exit 7.
	if code := c.wait(30 * time.Second); code != 7 {
		t.Fatalf("check: exit %d, want 7; %s", code, c.line())
	}
	took := time.Since(began)
	rss := peak() // KiB
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

// token creates an admin and returns an API token for it.
func token(t *testing.T, e env) string {
	t.Helper()
	if code := start(t, e.with("_STDIN", "crash test password\n"), "user", "add", "--email", "ops@crash.test", "--role", "admin").wait(30 * time.Second); code != 0 {
		t.Fatalf("user add: exit %d", code)
	}
	p := start(t, e, "token", "create", "--email", "ops@crash.test")
	if code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("token create: exit %d", code)
	}
	for _, line := range strings.Split(p.out.String(), "\n") {
		if strings.HasPrefix(line, "upc_") {
			return strings.TrimSpace(line)
		}
	}
	t.Fatalf("no token in %q", p.out.String())
	return ""
}

// Scenario 5: three instances whose scheduled checks fire within seconds of
// each other, plus 50 concurrent manual POSTs spread across them: one
// scheduled check runs, no two checks ever overlap, every other answer is
// busy, skipped or cooldown, and nothing answers 5xx.
func TestThreeInstancesAndFiftyPosts(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	pub := publisher.New(t)
	e := site(t, baseEnv(d), pub).with("UPCHECK_CHECK_SCHEDULE", "0 0 1 1 *") // the catch-up at start is the firing
	tok := token(t, e)
	release := pub.Hold("/slow.json").Release // keep the first check running while the rest arrive
	var instances []*proc
	for range 3 {
		instances = append(instances, serve(t, e))
		time.Sleep(300 * time.Millisecond) // "within seconds of each other"
	}
	statuses := make(chan int, 50)
	var wg sync.WaitGroup
	post := func(i int) {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", "http://"+instances[i%3].listen+"/api/admin/plugins/updates/check", nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		})
	}
	// Half arrive while the scheduled check runs, half after it completed.
	for i := range 25 {
		post(i)
	}
	time.Sleep(500 * time.Millisecond)
	release()
	for query[int64](t, d, "SELECT count(*) FROM check_runs WHERE status = 'completed'") == 0 {
		time.Sleep(20 * time.Millisecond)
	}
	for i := 25; i < 50; i++ {
		post(i)
	}
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	t.Logf("answers to 50 manual POSTs: %v", counts)
	for s := range counts {
		if s != 200 && s != 409 && s != 429 {
			t.Errorf("%d answers with status %d", counts[s], s)
		}
	}
	if counts[200] != 1 {
		t.Errorf("%d manual checks completed; want one (then the cooldown)", counts[200])
	}
	// Let the instances' retry loops finish (a lease and a heartbeat).
	time.Sleep(4 * time.Second)
	if n := query[int64](t, d, "SELECT count(*) FROM check_runs WHERE trigger = 'scheduled' AND status = 'completed'"); n != 1 {
		t.Errorf("%d scheduled checks completed, want exactly 1; history %v", n, runStatuses(t, d))
	}
	if n := query[int64](t, d, `SELECT count(*) FROM check_runs a JOIN check_runs b ON a.id < b.id
		WHERE a.owner IS NOT NULL AND b.owner IS NOT NULL
		  AND tstzrange(a.started_at, coalesce(a.finished_at, 'infinity')) && tstzrange(b.started_at, coalesce(b.finished_at, 'infinity'))`); n != 0 {
		t.Errorf("%d pairs of checks overlapped in time; history %v", n, runStatuses(t, d))
	}
	if n := query[int64](t, d, "SELECT count(*) FROM check_runs WHERE status NOT IN ('completed', 'busy', 'skipped', 'cooldown')"); n != 0 {
		t.Errorf("%d runs ended otherwise; history %v", n, runStatuses(t, d))
	}
}

// Scenario 4: the database stops during a check. The heartbeat fails, the
// check ends lease_lost, /readyz and the API answer 503; the database comes
// back: the same process is ready again and the next check completes. The
// scenario has a cluster of its own, since it stops it.
func TestDatabaseOutage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cl, d := ownCluster(t, "outage")
	pub := publisher.New(t)
	e := baseEnv(d)
	if code := start(t, e, "migrate").wait(60 * time.Second); code != 0 {
		t.Fatal("migrate failed")
	}
	e = site(t, e, pub).with("UPCHECK_CHECK_SCHEDULE", "0 0 1 1 *")
	tok := token(t, e)
	release := pub.Hold("/slow.json").Release
	defer release()

	a := serve(t, e)
	pub.AwaitRequests(t, "/slow.json", 1, 30*time.Second)
	get := func(path string) int {
		req, _ := http.NewRequest("GET", "http://"+a.listen+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if err := cl.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	for !strings.Contains(a.out.String(), "status=lease_lost") {
		if time.Since(stopped) > 5*time.Second {
			t.Fatal("the check did not end lease_lost after the database stopped")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("check ended lease_lost %s after the database stopped", time.Since(stopped).Round(10*time.Millisecond))
	if s := get("/readyz"); s != 503 {
		t.Fatalf("/readyz while the database is down = %d", s)
	}
	if s := get("/api/admin/plugins/updates/summary"); s != 503 {
		t.Fatalf("summary while the database is down = %d, want 503 (never 401)", s)
	}
	if s := get("/healthz"); s != 200 {
		t.Fatalf("/healthz while the database is down = %d", s)
	}

	if err := cl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	release()
	deadline := time.Now().Add(15 * time.Second)
	for get("/readyz") != 200 {
		if time.Now().After(deadline) {
			t.Fatal("not ready again after the database came back")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for {
		req, _ := http.NewRequest("POST", "http://"+a.listen+"/api/admin/plugins/updates/check", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 200 {
			break
		}
		if resp.StatusCode != 409 || time.Now().After(deadline) { // busy until the interrupted run settles or its lease expires
			t.Fatalf("check after recovery: %d", resp.StatusCode)
		}
		time.Sleep(200 * time.Millisecond)
	}
	select {
	case <-a.done:
		t.Fatalf("serve exited during the outage: %d", a.code)
	default:
	}
	noHalfWrites(t, d)
}

// Scenario 3: the holder is paused inside an open fenced transaction (its
// locks held). The idle-in-transaction timeout cuts it off, a taker gets the
// lease once it expires, and the paused write never commits.
func TestPausedInsideFencedTransaction(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	pub := publisher.New(t)
	// One source serving many components makes its fenced transaction long
	// enough to be caught open.
	const n = 1500
	var comps, pkgs []string
	comps = append(comps, fmt.Sprintf(`{"code": "core", "name": "Core", "version": "1.0.0", "source": "%s/big.json"}`, pub.URL))
	pkgs = append(pkgs, `"core": {"releases": [{"version": "1.1.0"}]}`)
	for i := range n {
		comps = append(comps, fmt.Sprintf(`{"code": "p%04d", "name": "P", "version": "1.0.0", "source": "%s/big.json"}`, i, pub.URL))
		pkgs = append(pkgs, fmt.Sprintf(`"p%04d": {"releases": [{"version": "1.0.1"}]}`, i))
	}
	pub.Set("/big.json", document(1, strings.Join(pkgs, ",")))
	e := baseEnv(d).with("UPCHECK_MANIFEST", manifest(t, `{"components": [`+strings.Join(comps, ",")+`]}`),
		"UPCHECK_TEST_TIMINGS", timings+",tx=2s", "UPCHECK_LOG_LEVEL", "INFO")
	if code := start(t, e, "components", "sync").wait(60 * time.Second); code != 0 {
		t.Fatal("sync failed")
	}

	var a *proc
	var pausedAt time.Time
	for attempt := 1; attempt <= 5 && a == nil; attempt++ {
		p := start(t, e, "check")
		// Wait for its fenced transaction: a backend holding the lease's
		// advisory lock while writing results.
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if query[bool](t, d, `SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
				WHERE l.locktype = 'advisory' AND l.granted AND s.datname = current_database()
				  AND s.query LIKE '%component_results%')`) {
				p.signal(syscall.SIGSTOP)
				pausedAt = time.Now()
				break
			}
			select {
			case <-p.done:
				deadline = time.Time{}
			default:
			}
			time.Sleep(time.Millisecond)
		}
		if !pausedAt.IsZero() && query[bool](t, d, `SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
				WHERE l.locktype = 'advisory' AND l.granted AND s.datname = current_database())`) {
			a = p
			break
		}
		// Missed the window (the transaction had committed): try again.
		pausedAt = time.Time{}
		p.signal(syscall.SIGCONT)
		p.wait(30 * time.Second)
		d.MustExec(t, "DELETE FROM component_results; DELETE FROM sources; UPDATE core_update_lock SET owner = NULL, expires_at = NULL")
	}
	if a == nil {
		t.Fatal("could not pause the holder inside its fenced transaction in 5 attempts")
	}
	epochA := query[int64](t, d, "SELECT epoch FROM core_update_lock")

	// A taker retries until it gets the lease and completes.
	var took time.Duration
	for {
		code := start(t, e, "check").wait(60 * time.Second)
		if code == 0 {
			took = time.Since(pausedAt)
			break
		}
		if code != 3 {
			t.Fatalf("taker: exit %d, want 3 (busy) then 0", code)
		}
		if time.Since(pausedAt) > 15*time.Second {
			t.Fatal("the taker did not get the lease within 15 s of the pause")
		}
	}
	t.Logf("taker completed %s after the holder froze inside its transaction", took.Round(10*time.Millisecond))
	epochB := query[int64](t, d, "SELECT epoch FROM core_update_lock")
	a.signal(syscall.SIGCONT)
	if code := a.wait(30 * time.Second); code == 0 {
		t.Fatalf("the paused holder completed: %s", a.line())
	}
	if n := query[int64](t, d, "SELECT count(*) FROM component_results WHERE epoch = $1", epochA); n != 0 {
		t.Fatalf("%d results of the paused holder (epoch %d) committed", n, epochA)
	}
	if got := query[int64](t, d, "SELECT count(*) FROM component_results WHERE epoch = $1", epochB); got != n+1 {
		t.Fatalf("%d results from the taker, want %d", got, n+1)
	}
}
