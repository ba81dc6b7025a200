package updatecheck

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/testkit"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

func TestParseSchedulePeriod(t *testing.T) {
	t.Parallel()
	for spec, want := range map[string]time.Duration{
		"17 4 * * *":   24 * time.Hour,
		"0 * * * *":    time.Hour,
		"*/15 * * * *": 15 * time.Minute,
	} {
		_, got, err := ParseSchedule(spec)
		if err != nil || got != want {
			t.Errorf("%q: period %s (%v), want %s", spec, got, err, want)
		}
	}
	if _, _, err := ParseSchedule("every day"); err == nil {
		t.Error("a bad schedule was accepted")
	}
}

// Over the next 400 fires of irregular schedules and of a daily one: the run
// fired at T has the period from T to the next fire, so the previous run,
// completed just after its own fire, never makes it skip; and instances
// firing seconds apart for T, or retrying later, share that period, so the
// first completion makes the others skip.
func TestSchedulePeriodStartsAtEachFire(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"0 */5 * * *", "0 3 * * 1,4", "17 4 * * *"} {
		sched, _, err := ParseSchedule(spec)
		if err != nil {
			t.Fatal(err)
		}
		fires := []time.Time{sched.Next(time.Now().UTC())}
		for len(fires) < 402 {
			fires = append(fires, sched.Next(fires[len(fires)-1]))
		}
		var skipped, split []string
		for i := 1; i <= 400; i++ {
			prevDone, fire, next := fires[i-1].Add(time.Second), fires[i], fires[i+1]
			if start, _ := period(sched, fire); !prevDone.Before(start) {
				skipped = append(skipped, fmt.Sprintf("%s (period from %s)", fire, start))
			}
			for _, at := range []time.Time{fire, fire.Add(3 * time.Second), next.Add(-time.Second)} {
				start, end := period(sched, at)
				if !start.Equal(fire) || !end.Equal(next) {
					split = append(split, fmt.Sprintf("at %s: period %s to %s, want %s to %s", at, start, end, fire, next))
				}
			}
		}
		if len(skipped) > 0 {
			t.Errorf("%q: %d of 400 fires would be skipped, first %s", spec, len(skipped), skipped[0])
		}
		if len(split) > 0 {
			t.Errorf("%q: %d triggers in the wrong period, first %s", spec, len(split), split[0])
		}
	}
}

// fireList is a schedule that fires at the given instants, in order.
type fireList []time.Time

func (l fireList) Next(t time.Time) time.Time {
	for _, f := range l {
		if f.After(t) {
			return f
		}
	}
	return time.Time{}
}

// On the database: the run for a fire that came after the previous fire's
// run completed runs, although that completion is minutes old (the same UTC
// day, the same epoch-aligned period); a second instance firing seconds
// later for the same fire skips.
func TestScheduledRunPerFire(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	b.standardSite(p)
	ctx := context.Background()
	earlier := time.Now().Add(-time.Hour)
	NewScheduler(b.checker, fireList{earlier}, b.lease.Timings(), slog.Default()).runPeriod(ctx, time.Now())

	fire := time.Now() // after the completion, on the same machine's clock
	sched := fireList{earlier, fire, fire.Add(time.Hour)}
	NewScheduler(b.checker, sched, b.lease.Timings(), slog.Default()).runPeriod(ctx, fire)
	NewScheduler(b.otherInstance(), sched, b.lease.Timings(), slog.Default()).runPeriod(ctx, fire.Add(3*time.Second))
	// The standard site's failing source does not keep the period open.
	want := "[scheduled:completed_with_failures scheduled:completed_with_failures scheduled:skipped]"
	if got := fmt.Sprint(b.runs()); got != want {
		t.Fatalf("runs = %s, want %s", got, want)
	}
}

// The stored schedule is a random time of day, different across
// installations.
func TestStoredScheduleIsRandomDaily(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 4 {
		b := setup(t)
		spec, err := ResolveSchedule(context.Background(), b.store, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, period, err := ParseSchedule(spec); err != nil || period != 24*time.Hour {
			t.Fatalf("stored schedule %q: period %s, %v", spec, period, err)
		}
		seen[spec] = true
	}
	if len(seen) < 2 {
		t.Fatalf("four installations all got the schedule %v", seen)
	}
}

// neverSoon is a schedule whose next firing is a year away: only the
// catch-up and the retries run in these tests.
const neverSoon = "0 0 1 1 *"

// scheduler starts a scheduler on neverSoon. Its caughtUp signal tells
// when the check at start is over: after it, nothing more runs.
func (b *bundle) scheduler() (*Scheduler, context.CancelFunc, chan struct{}) {
	sched, _, err := ParseSchedule(neverSoon)
	if err != nil {
		b.t.Fatal(err)
	}
	s := NewScheduler(b.checker, sched, b.lease.Timings(), slog.Default())
	s.signals.caughtUp.Init(1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	b.t.Cleanup(func() { cancel(); <-done })
	return s, cancel, done
}

// At start, a never-completed installation runs a catch-up check. When
// another instance holds the lease and then dies, the scheduled check is
// retried once the lease could have expired, and completes within minutes
// (here: seconds), not the next day.
func TestCatchUpRetriesAfterDeadHolder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	b.standardSite(p)
	// A holder that dies at once: it never renews and never releases.
	held, err := b.otherInstance().lease.Acquire(context.Background(), lease.Scheduled)
	if err != nil || held.Outcome != lease.Acquired {
		t.Fatal(held, err)
	}
	start := time.Now()
	s, _, _ := b.scheduler()
	caughtUp(t, s)
	if got := fmt.Sprint(b.runs()); got != "[scheduled:busy scheduled:completed_with_failures]" {
		t.Fatalf("runs = %s", got)
	}
	if took := time.Since(start); took < b.lease.Timings().Lease {
		t.Fatalf("completed after %s, before the dead holder's lease could expire", took)
	}
}

// Two instances whose schedules fire together make one run: the second is
// skipped.
func TestTwoSchedulersOneRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	b.standardSite(p)
	other := &bundle{t: t, db: b.db, store: b.store, lease: b.newLease(lease.Timings(testkit.Timings())), fetcher: b.fetcher}
	other.checker = New(b.store, other.lease, b.fetcher, slog.Default())
	s1, _, _ := b.scheduler()
	s2, _, _ := other.scheduler()
	// One of them completes; the other either found the lease busy (and
	// retries a lease later, then skips) or started after the completion
	// (and has nothing to catch up). Once both say their check at start is
	// over, nothing else runs before next year's fire.
	caughtUp(t, s1)
	caughtUp(t, s2)
	runs := b.runs()
	completed := 0
	for _, r := range runs {
		switch r {
		case "scheduled:completed_with_failures": // the standard site has a failing source
			completed++
		case "scheduled:busy", "scheduled:skipped":
		default:
			t.Fatalf("runs = %v: unexpected %s", runs, r)
		}
	}
	if completed != 1 {
		t.Fatalf("runs = %v, want exactly one completed scheduled run", runs)
	}
}

// Shutdown stops the schedule, cancels a running check and releases its
// lease at once.
func TestSchedulerShutdownReleasesLease(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	p.OnRequest(func(r *http.Request) { <-r.Context().Done() }) // every publisher hangs
	b.sync(manifest.Component{Code: "core", Name: "Core", Version: "1.0.0", Source: p.URL + "/core.json"})
	_, cancel, done := b.scheduler()
	wait.True(t, "the scheduled check asks the publisher", wait.Guard, func() bool { return p.Requests("/core.json") > 0 })
	cancel()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("scheduler did not stop")
	}
	a, err := b.otherInstance().lease.Acquire(context.Background(), lease.Operator)
	if err != nil || a.Outcome != lease.Acquired {
		t.Fatalf("lease not free after shutdown: %+v %v", a, err)
	}
	if runs := b.runs(); len(runs) != 1 || runs[0] != "scheduled:cancelled" {
		t.Fatalf("runs = %v", runs)
	}
}

// caughtUp waits for s's check at start to be over, retries included.
func caughtUp(t *testing.T, s *Scheduler) {
	t.Helper()
	limit := 3*s.timings.Lease + 2*time.Second
	s.signals.caughtUp.Wait(t, "the check at start is over", limit)
}
