//go:build crash

package cluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/dev/devdb"
)

// replicatedPair starts a primary with a database "upcheck" and a
// streaming standby of it, named standby1, which the primary waits for at
// every commit (synchronous_standby_names, synchronous_commit=on). Both
// are stopped when the test ends.
func replicatedPair(t *testing.T, ctx context.Context) (primary, standby *devdb.Cluster) {
	t.Helper()
	// Not t.TempDir(): the postgres OS user must be able to enter it, and
	// the socket paths must stay short.
	root, err := os.MkdirTemp("", "upcheck-failover-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	primary, err = devdb.Ensure(ctx, filepath.Join(root, "primary"), devdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopCluster(t, primary) })
	if err := primary.CreateDatabase(ctx, "upcheck"); err != nil {
		t.Fatal(err)
	}
	standby, err = primary.StartStandby(ctx, filepath.Join(root, "standby"), "standby1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopCluster(t, standby) })

	// ALTER SYSTEM cannot share a transaction: one statement at a time.
	for _, sql := range []string{
		"ALTER SYSTEM SET synchronous_standby_names = 'standby1'",
		"ALTER SYSTEM SET synchronous_commit = 'on'",
		"SELECT pg_reload_conf()",
	} {
		execSQL(t, ctx, primary.URL("postgres"), sql)
	}
	poll(t, 30*time.Second, func() bool {
		var state string
		return tryScan(t, ctx, primary.URL("postgres"),
			"SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1' AND state = 'streaming'", &state) &&
			state == "sync"
	})
	return primary, standby
}

// stopCluster stops a cluster that may already be down (the crashed
// primary): pg_ctl then has nothing to stop, which is logged, not failed.
func stopCluster(t *testing.T, c *devdb.Cluster) {
	if err := c.Stop(context.Background()); err != nil {
		t.Logf("stop cluster %s: %v", c.Dir, err)
	}
}

func execSQL(t *testing.T, ctx context.Context, url, sql string, args ...any) {
	t.Helper()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// scan runs a one-row query without arguments on a new connection to url.
func scan(t *testing.T, ctx context.Context, url, sql string, dest ...any) {
	t.Helper()
	scanArgs(t, ctx, url, sql, nil, dest...)
}

func scanArgs(t *testing.T, ctx context.Context, url, sql string, args []any, dest ...any) {
	t.Helper()
	if err := queryRow(ctx, url, sql, args, dest); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// tryScan is scan for a row that may not be there yet; other errors fail.
func tryScan(t *testing.T, ctx context.Context, url, sql string, dest ...any) bool {
	t.Helper()
	err := queryRow(ctx, url, sql, nil, dest)
	if err == pgx.ErrNoRows {
		return false
	}
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return true
}

func queryRow(ctx context.Context, url, sql string, args, dest []any) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, sql, args...).Scan(dest...)
}

// poll calls cond until it holds and returns when it did; it fails the
// test after d.
func poll(t *testing.T, d time.Duration, cond func() bool) time.Time {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Now()
}

// readyz is the instance's /readyz status code (0: no answer).
func readyz(in *Instance) int {
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(fmt.Sprintf("http://%s/readyz", in.Addr()))
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
