package app

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/config"
	"github.com/upcheck/upcheck/internal/lease"
)

// Without UPCHECK_TEST_TIMINGS the lease runs on its production timings;
// the durations the variable names replace those alone.
func TestLeaseTimings(t *testing.T) {
	t.Parallel()
	timings := func(v string) (lease.Timings, error) {
		t.Helper()
		cfg, err := config.FromEnv(func(k string) string { return map[string]string{"UPCHECK_TEST_TIMINGS": v}[k] })
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		return LeaseTimings(cfg.Timings)
	}
	got, err := timings("")
	if err != nil || got != lease.DefaultTimings() {
		t.Fatalf("no UPCHECK_TEST_TIMINGS: %+v %v, want the production timings", got, err)
	}
	if got.Lease != 5*time.Minute || got.Heartbeat != time.Minute || got.Cooldown != 2*time.Minute || got.Period != 24*time.Hour {
		t.Fatalf("production timings changed: %+v", got)
	}
	got, err = timings("lease=3s,heartbeat=500ms,cooldown=0s,tx=2s")
	want := lease.Timings{Lease: 3 * time.Second, Heartbeat: 500 * time.Millisecond, Period: 24 * time.Hour, TxTimeout: 2 * time.Second}
	if err != nil || got != want {
		t.Fatalf("timings = %+v %v, want %+v", got, err, want)
	}
	// Durations that parse but cannot work together are the lease's to refuse.
	for _, bad := range []string{"lease=3s,heartbeat=5s", "lease=0s", "cooldown=-1s", "period=0s"} {
		if _, err := timings(bad); err == nil || !strings.Contains(err.Error(), "UPCHECK_TEST_TIMINGS") {
			t.Errorf("%q: error %v, want a UPCHECK_TEST_TIMINGS error", bad, err)
		}
	}
}

// Every command refuses such timings before it touches the database (the
// URL here reaches nothing).
func TestBadTimingsStopEveryCommand(t *testing.T) {
	t.Parallel()
	cfg, err := config.FromEnv(func(k string) string {
		return map[string]string{
			"UPCHECK_DATABASE_URL": "postgres://upcheck@127.0.0.1:1/none?sslmode=disable&connect_timeout=1",
			"UPCHECK_TEST_TIMINGS": "lease=3s,heartbeat=5s",
		}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := Open(ctx, cfg, logger); err == nil || !strings.Contains(err.Error(), "UPCHECK_TEST_TIMINGS") {
		t.Errorf("open: %v, want a UPCHECK_TEST_TIMINGS error", err)
	}
	if err := Migrate(ctx, cfg, logger); err == nil || !strings.Contains(err.Error(), "UPCHECK_TEST_TIMINGS") {
		t.Errorf("migrate: %v, want a UPCHECK_TEST_TIMINGS error", err)
	}
	if err := Serve(ctx, cfg, logger, nil); err == nil || !strings.Contains(err.Error(), "UPCHECK_TEST_TIMINGS") {
		t.Errorf("serve: %v, want a UPCHECK_TEST_TIMINGS error", err)
	}
}
