package updatecheck

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testsignal"
)

// ScheduleSetting is the app_settings key holding the installation's daily
// check time, picked at random when the database was set up.
const ScheduleSetting = "check_schedule"

// CatchUpAge is how old the last completed check may be before `serve` runs
// one at start.
const CatchUpAge = 24 * time.Hour

// ParseSchedule parses a five-field cron expression (UTC) and returns the
// schedule and its first interval. The scheduler's runs do not use that
// interval (see period); the lease falls back on it for a scheduled
// acquisition made outside the scheduler.
func ParseSchedule(spec string) (cron.Schedule, time.Duration, error) {
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, 0, fmt.Errorf("check schedule %q: %w", spec, err)
	}
	first := sched.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	return sched, sched.Next(first).Sub(first), nil
}

// ResolveSchedule returns the configured schedule, or the installation's
// daily time: picked at random the first time it is asked for and stored,
// so every instance of one installation agrees while a fleet of
// installations spreads over the day.
func ResolveSchedule(ctx context.Context, st *store.Store, configured string) (string, error) {
	if configured != "" {
		return configured, nil
	}
	random := fmt.Sprintf("%d %d * * *", rand.N(60), rand.N(24))
	spec, err := st.SettingEnsure(ctx, ScheduleSetting, random)
	if err != nil {
		return "", fmt.Errorf("read the stored check schedule: %w", err)
	}
	return spec, nil
}

// Scheduler runs the scheduled check on every instance; the lease and the
// period skip make one run per fire among them.
type Scheduler struct {
	checker  *Checker
	schedule cron.Schedule
	timings  lease.Timings
	logger   *slog.Logger
	signals  schedulerSignals
}

// schedulerSignals let a test wait for what the scheduler did rather than
// sleep for long enough (River's test signals). Production leaves them
// nil, and a nil signal is never sent.
type schedulerSignals struct {
	// caughtUp hears that the check at start is over: it ran (with its
	// period's retries), or was not needed, or the last completion could
	// not be read.
	caughtUp testsignal.Signal[struct{}]
}

// NewScheduler returns a scheduler for schedule.
func NewScheduler(c *Checker, schedule cron.Schedule, timings lease.Timings, logger *slog.Logger) *Scheduler {
	return &Scheduler{checker: c, schedule: schedule, timings: timings, logger: logger}
}

// Run schedules checks until ctx is cancelled, then stops the schedule and
// waits for a running check, which ctx's cancellation interrupts (it
// releases its lease on the way out). It first runs a catch-up check when
// the last completed one is older than CatchUpAge.
func (s *Scheduler) Run(ctx context.Context) {
	cronLog := cronLogger{s.logger}
	job := cron.NewChain(cron.Recover(cronLog), cron.SkipIfStillRunning(cronLog)).
		Then(cron.FuncJob(func() { s.runPeriod(ctx, time.Now()) }))
	c := cron.New(cron.WithLocation(time.UTC), cron.WithLogger(cronLog))
	c.Schedule(s.schedule, job)
	// Releases waiting for their soak are offered when they soaked, not at
	// the next check (docs/policy.md).
	c.Schedule(cron.Every(ReofferInterval), cron.NewChain(cron.Recover(cronLog), cron.SkipIfStillRunning(cronLog)).
		Then(cron.FuncJob(func() { s.reoffer(ctx) })))
	c.Start()
	s.checker.reads.Scheduled(s.schedule) // the summary's next_check_at
	defer s.checker.reads.Scheduled(nil)

	var catchUp sync.WaitGroup
	status, err := s.checker.lease.Status(ctx, CatchUpAge)
	switch {
	case err != nil:
		s.logger.WarnContext(ctx, "catch-up check: cannot read the last completion", "error", err)
		s.signals.caughtUp.Send(struct{}{})
	case status.CompletionOlder:
		if status.LastCompletedAt == nil {
			s.logger.InfoContext(ctx, "catch-up check: no check has completed yet")
		} else {
			s.logger.InfoContext(ctx, "catch-up check: the last completed check is older than a day",
				"last_completed_at", status.LastCompletedAt)
		}
		catchUp.Go(func() {
			job.Run() // through the chain: never alongside a cron-fired run
			s.signals.caughtUp.Send(struct{}{})
		})
	default:
		// Said at debug level, for tests and for the curious: the start's
		// decision is then observable in every case.
		s.logger.DebugContext(ctx, "catch-up check: not needed", "last_completed_at", status.LastCompletedAt)
		s.signals.caughtUp.Send(struct{}{})
	}

	<-ctx.Done()
	<-c.Stop().Done() // waits for cron-fired runs
	catchUp.Wait()
}

// period returns the period of the schedule that contains t: from its
// latest fire at or before t to its next fire after t.
//
// A scheduled run fired at T is skipped only when a check completed at or
// after T: the period is the span between two fires, not a window aligned
// to the epoch, which for an irregular schedule (hours 0,5,10,15,20; Mondays
// and Thursdays) would sometimes begin before the previous fire and skip the
// run after it. Instances that fire for the same T, seconds apart, share the
// period and so make one run; a catch-up at start, or a retry, belongs to
// the period of the latest fire. T is the schedule's instant, not a clock
// reading, while completions are stamped by the database: a process clock
// ahead of the database can at worst cause a second run for a fire, never a
// skipped one. (Starting the period at the schedule's latest fire before the
// database's now would skip every run fired by a process clock ahead of the
// database's, however slightly.)
func period(sched cron.Schedule, t time.Time) (start, end time.Time) {
	t = t.UTC()
	end = sched.Next(t)
	// Step back twice as far each time until a fire lies in (t-back, t],
	// then walk forward to the last one; cron.Schedule has no Prev.
	for back := time.Second; back < 20*365*24*time.Hour; back *= 2 {
		f := sched.Next(t.Add(-back))
		if f.IsZero() || f.After(t) {
			continue
		}
		for !f.IsZero() && !f.After(t) {
			start, f = f, sched.Next(f)
		}
		return start, end
	}
	return time.Time{}, end // the schedule never fires
}

// runPeriod runs the scheduled check for the period containing now and keeps
// trying while that period's check has not completed: when another holder
// is busy (it may die) or this run lost its lease, it tries again once the
// lease could have expired, until the next fire takes over. The period skip
// ends the loop as soon as any instance has completed.
func (s *Scheduler) runPeriod(ctx context.Context, now time.Time) {
	start, deadline := period(s.schedule, now)
	if !start.IsZero() {
		ctx = lease.WithPeriodStart(ctx, start)
	}
	for {
		res, err := s.checker.RunLockedUpdateCheck(ctx, lease.Scheduled, readmodel.ActorCron)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			s.logger.ErrorContext(ctx, "scheduled check could not run", "error", err)
		case res.Status == LeaseLost:
			s.logger.WarnContext(ctx, "scheduled check lost its lease", "run_id", res.RunID, "error", res.Error)
		case res.Status == Busy:
			s.logger.InfoContext(ctx, "scheduled check: another instance holds the lease")
		case res.Status == Skipped:
			s.logger.InfoContext(ctx, "scheduled check: already completed this period")
			return
		case res.Status.RanToEnd():
			return
		default:
			s.logger.WarnContext(ctx, "scheduled check ended", "status", res.Status, "error", res.Error)
		}
		// Retry just after the lease could have expired, with jitter so the
		// instances do not all come back at the same instant.
		wait := s.timings.Lease + rand.N(s.timings.Heartbeat)
		if time.Now().Add(wait).After(deadline) {
			return // the next period's run takes over
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// cronLogger adapts slog to cron's logger.
type cronLogger struct{ l *slog.Logger }

func (c cronLogger) Info(msg string, kv ...any) { c.l.Debug("cron: "+msg, kv...) }
func (c cronLogger) Error(err error, msg string, kv ...any) {
	if errors.Is(err, context.Canceled) {
		return
	}
	c.l.Error("cron: "+msg, append(kv, "error", err)...)
}
