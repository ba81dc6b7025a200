package updatecheck

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/testing/testkit"
)

// The catch-up at start says why it runs: on an installation where no
// check ever completed, not that the last one "is older than a day".
func TestCatchUpSaysWhyItRuns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		completed string // last_completed_at, SQL; "" for never
		want      string
		never     string
	}{
		{"never", "", "catch-up check: no check has completed yet", "older than a day"},
		{"two days ago", "clock_timestamp() - interval '2 days'", "catch-up check: the last completed check is older than a day", "no check has completed yet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			if tc.completed != "" {
				b.db.MustExec(t, "UPDATE core_update_lock SET last_completed_at = "+tc.completed)
			}
			sched, _, err := ParseSchedule(neverSoon)
			if err != nil {
				t.Fatal(err)
			}
			var log testkit.Buffer
			s := NewScheduler(b.checker, sched, b.lease.Timings(), slog.New(slog.NewTextHandler(&log, nil)))
			s.signals.caughtUp.Init(1)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); s.Run(ctx) }()
			t.Cleanup(func() { cancel(); <-done })
			caughtUp(t, s)
			if got := log.String(); !strings.Contains(got, tc.want) || strings.Contains(got, tc.never) {
				t.Fatalf("log:\n%s\nwant %q and not %q", got, tc.want, tc.never)
			}
		})
	}
}
