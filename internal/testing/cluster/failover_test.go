//go:build crash

package cluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/dev/devdb"
)

// TestFailoverToStandby is the failover drill of docs/operations.md: a
// primary and a synchronous streaming standby on loopback, two instances
// on the multi-host URL with target_session_attrs=read-write, a check
// running; the primary crashes and the standby is promoted. The instances
// must refuse the standby while it is read-only (/readyz 503), find the
// promoted server by themselves, take the lease again with a higher epoch
// once it expires, and complete the next check there, with no write of the
// old holder landing after the takeover.
func TestFailoverToStandby(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	primary, standby := replicatedPair(t, ctx)
	url := fmt.Sprintf("postgres://%s@127.0.0.1:%d,127.0.0.1:%d/upcheck?sslmode=disable&target_session_attrs=read-write",
		devdb.Superuser, primary.Port, standby.Port)

	pub := newPublisher(t)
	manifest := filepath.Join(t.TempDir(), "manifest.json")
	if err := os.WriteFile(manifest, fmt.Appendf(nil, `{"components": [{"code": "core", "name": "Core", "version": "1.0.0", "source": "%s/core.json"}]}`, pub.URL), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"UPCHECK_DATABASE_URL=" + url,
		"UPCHECK_ALLOW_PRIVATE_SOURCES=1",
		"UPCHECK_TEST_TIMINGS=lease=3s,heartbeat=500ms,cooldown=1s",
		"UPCHECK_MANIFEST=" + manifest,
		"UPCHECK_LOG_LEVEL=INFO",
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
	}
	run(t, env, "", "migrate")
	run(t, env, "", "components", "sync")

	// Both instances start a catch-up check (none has completed); one
	// takes the lease and its fetch waits at the publisher.
	release := pub.Hold("/core.json").Release
	defer release()
	instances := []*Instance{{env: env, binary: binary}, {env: env, binary: binary}}
	for _, in := range instances {
		if err := in.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			in.Stop()
			if t.Failed() {
				t.Logf("instance %s:\n%s", in.Addr(), in.Output())
			}
		})
	}
	pub.AwaitRequests(t, "/core.json", 1, 30*time.Second) // a check reached the publisher
	var oldOwner string
	var oldEpoch int64
	scan(t, ctx, url, "SELECT owner::text, epoch FROM core_update_lock WHERE expires_at > clock_timestamp()", &oldOwner, &oldEpoch)

	// The primary dies with the check in flight; its answer comes now,
	// while no server accepts writes.
	crashed := time.Now()
	if err := primary.Crash(ctx); err != nil {
		t.Fatal(err)
	}
	release()

	// The standby is read-only: target_session_attrs=read-write refuses
	// it, so no instance is ready on it and none keeps a session there
	// (a connection being refused lives for milliseconds; one kept for
	// use would be older).
	time.Sleep(1500 * time.Millisecond)
	for _, in := range instances {
		if code := readyz(in); code != http.StatusServiceUnavailable {
			t.Fatalf("%s: /readyz = %d with only a read-only standby up, want 503", in.Addr(), code)
		}
	}
	var onStandby int
	scan(t, ctx, standby.URL("postgres"), "SELECT count(*) FROM pg_stat_activity WHERE datname = 'upcheck' AND backend_type = 'client backend' AND backend_start < clock_timestamp() - interval '500 ms'", &onStandby)
	if onStandby != 0 {
		t.Fatalf("%d upcheck sessions on the read-only standby", onStandby)
	}

	if err := standby.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	promoted := time.Now()

	// Each instance is ready again by itself, without a restart.
	ready := make([]time.Duration, len(instances))
	for i, in := range instances {
		deadline := time.Now().Add(30 * time.Second)
		for readyz(in) != http.StatusOK {
			if time.Now().After(deadline) {
				t.Fatalf("%s: /readyz not 200 within 30 s of the promotion", in.Addr())
			}
			time.Sleep(50 * time.Millisecond)
		}
		ready[i] = time.Since(promoted)
	}

	// The lease expires on the new primary and is taken again.
	var newOwner string
	var newEpoch int64
	retaken := poll(t, 30*time.Second, func() bool {
		scan(t, ctx, url, "SELECT coalesce(owner::text, ''), epoch FROM core_update_lock", &newOwner, &newEpoch)
		return newEpoch > oldEpoch
	}).Sub(promoted)
	if newOwner == oldOwner {
		t.Fatalf("epoch %d went to the old owner %s", newEpoch, oldOwner)
	}

	// The next check completes on the new primary, under a higher epoch.
	var doneEpoch int64
	completed := poll(t, 30*time.Second, func() bool {
		return tryScan(t, ctx, url, "SELECT epoch FROM check_runs WHERE status = 'completed' ORDER BY id DESC LIMIT 1", &doneEpoch)
	}).Sub(promoted)
	if doneEpoch <= oldEpoch {
		t.Fatalf("completed run has epoch %d, not above the old holder's %d", doneEpoch, oldEpoch)
	}

	// The old holder's check was cut off: it ended lease_lost (or failed),
	// said so in its log, and did not complete. Its end could only be
	// recorded on a server that accepted writes; when none did in time
	// the run stays marked running with its lease gone (shown as
	// abandoned).
	ended := regexp.MustCompile(`msg="update check ended" status=(\S+) run_id=\d+ epoch=` + strconv.FormatInt(oldEpoch, 10) + ` `)
	var oldEnd string
	poll(t, 30*time.Second, func() bool {
		for _, in := range instances {
			if m := ended.FindStringSubmatch(in.Output()); m != nil {
				oldEnd = m[1]
			}
		}
		return oldEnd != ""
	})
	if oldEnd != "lease_lost" && oldEnd != "failed" {
		t.Fatalf("the old holder's check (epoch %d) ended %s, want lease_lost or failed", oldEpoch, oldEnd)
	}
	var oldStatus string
	scanArgs(t, ctx, url, "SELECT status FROM check_runs WHERE epoch = $1", []any{oldEpoch}, &oldStatus)
	// A lease_lost check cut off from the database is recorded
	// connection_lost once a server accepts its end.
	if oldStatus != oldEnd && oldStatus != "running" && (oldEnd != "lease_lost" || oldStatus != "connection_lost") {
		t.Fatalf("the old holder's run (epoch %d) is stored as %s; it ended %s", oldEpoch, oldStatus, oldEnd)
	}

	// No write of the old holder landed after the takeover: every stored
	// row carries the epoch of the run that completed, and none an epoch
	// above the lease's.
	var stale, ahead int
	scanArgs(t, ctx, url, `SELECT (SELECT count(*) FROM sources WHERE epoch <> $1) + (SELECT count(*) FROM component_results WHERE epoch <> $1),
		(SELECT count(*) FROM sources, core_update_lock l WHERE sources.epoch > l.epoch)`, []any{doneEpoch}, &stale, &ahead)
	if stale != 0 || ahead != 0 {
		t.Fatalf("%d rows with another epoch than the completed run's %d, %d above the lease's", stale, doneEpoch, ahead)
	}
	t.Logf("standby promoted %s after the crash (1.5 s of it the drill's own wait); after the promotion: /readyz 200 on the instances after %s and %s, lease retaken (epoch %d -> %d) after %s, next check completed after %s; the old holder's check ended %s, stored as %s",
		promoted.Sub(crashed).Round(10*time.Millisecond), ready[0].Round(10*time.Millisecond), ready[1].Round(10*time.Millisecond),
		oldEpoch, newEpoch, retaken.Round(10*time.Millisecond), completed.Round(10*time.Millisecond), oldEnd, oldStatus)
}
