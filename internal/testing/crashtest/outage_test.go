//go:build crash

package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/testing/publisher"
)

// outageLease is long enough for the cluster to stop and start again well
// inside it, so that a run settled after the outage was settled by its own
// process, not by the lease running out; the heartbeat renews every 500 ms,
// so the outage is noticed at once.
const outageLease = 30 * time.Second

var settledRE = regexp.MustCompile(`lease released and check's end recorded once the database answered.*attempts=(\d+)`)

// Scenario 4b: PostgreSQL stopped while a check waits for its publisher,
// started again after the check has ended. The same process then records
// the run's end, "connection_lost" (Interrupted: lost its connection to
// the database), and frees the lease within seconds of the database's
// return, in one transaction, so that a new check runs at once instead of
// a lease later, and the history, the dashboard and the summary's JSON say
// why the run was interrupted.
func TestDatabaseOutageEndsTheRunAndFreesTheLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cl, d := ownCluster(t, "outage-settle")
	pub := publisher.New(t)
	e := baseEnv(d).with("UPCHECK_TEST_TIMINGS", fmt.Sprintf("lease=%s,heartbeat=500ms,cooldown=20s", outageLease))
	if code := start(t, e, "migrate").wait(60 * time.Second); code != 0 {
		t.Fatal("migrate failed")
	}
	e = site(t, e, pub).with("UPCHECK_CHECK_SCHEDULE", "0 0 1 1 *")
	tok := token(t, e)
	release := pub.Hold("/slow.json").Release
	defer release()

	// serve's catch-up check (no check has completed yet) waits at the
	// publisher, holding the lease.
	a := serve(t, e)
	pub.AwaitRequests(t, "/slow.json", 1, 30*time.Second)
	runID := query[int64](t, d, "SELECT id FROM check_runs WHERE status = 'running'")
	if err := cl.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	release() // the publisher answers while nothing can be written
	for !strings.Contains(a.out.String(), "recorded_as=connection_lost") {
		if time.Since(stopped) > 10*time.Second {
			t.Fatalf("the check did not end with its connection lost after the database stopped:\n%s", a.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("check ended, connection lost, %s after the database stopped", time.Since(stopped).Round(10*time.Millisecond))
	// Once the process has tried to settle and failed, bring the database
	// back.
	for !strings.Contains(a.out.String(), "lease settle failed; retrying") {
		if time.Since(stopped) > 10*time.Second {
			t.Fatalf("the process did not try to settle while the database was down:\n%s", a.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	if err := cl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	for {
		var status string
		var finished, free bool
		err := d.Pool.QueryRow(ctx, `SELECT r.status, r.finished_at IS NOT NULL, l.owner IS NULL
			FROM check_runs r, core_update_lock l WHERE r.id = $1`, runID).Scan(&status, &finished, &free)
		if err == nil && finished && free {
			if status != "connection_lost" {
				t.Fatalf("run %d recorded %q, want connection_lost", runID, status)
			}
			break
		}
		if time.Since(back) > 10*time.Second {
			t.Fatalf("10 s after the database came back: run %d %q (finished %v), lease free %v, error %v", runID, status, finished, free, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	settled := time.Since(back)
	t.Logf("run finished and lease released %s after the database started again", settled.Round(10*time.Millisecond))
	if m := settledRE.FindStringSubmatch(a.out.String()); m == nil || m[1] == "1" {
		t.Errorf("the process does not say that it settled after retrying:\n%s", a.out.String())
	}
	if elapsed := time.Since(stopped); elapsed >= outageLease {
		t.Fatalf("settled %s after the stop: the lease (%s) could have run out by itself", elapsed, outageLease)
	}

	call := func(method, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+a.listen+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	deadline := time.Now().Add(15 * time.Second)
	code, body := call("GET", "/api/admin/plugins/updates/summary")
	for code == http.StatusServiceUnavailable && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		code, body = call("GET", "/api/admin/plugins/updates/summary")
	}
	var summary struct {
		LastCheck struct {
			Status string `json:"status"`
		} `json:"last_check"`
	}
	if err := json.Unmarshal([]byte(body), &summary); code != 200 || err != nil || summary.LastCheck.Status != "connection_lost" {
		t.Fatalf("summary after the outage: %d %v %s", code, err, body)
	}
	for path, want := range map[string]string{
		"/admin/history": "lost its connection to the database",
		"/admin":         "interrupted: lost its connection to the database, scheduled check",
	} {
		code, body := call("GET", path)
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, does not say %q", path, code, want)
		}
		if strings.Contains(body, "the server stopped") {
			t.Errorf("GET %s blames a server that kept running", path)
		}
	}

	// The lease was given back: a new check runs at once, not a lease later.
	code, body = call("POST", "/api/admin/plugins/updates/check")
	if code != 200 {
		t.Fatalf("check right after the outage: %d %s", code, body)
	}
	select {
	case <-a.done:
		t.Fatalf("serve exited during the outage: %d", a.code)
	default:
	}
	noHalfWrites(t, d)
}
