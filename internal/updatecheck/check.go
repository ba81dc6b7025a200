// Package updatecheck runs the locked update check: take the lease, fetch
// every update source politely, evaluate each installed component against
// its source's document, and store sources and results through fenced
// writes, so that only the lease holder's results ever land (Checker). The
// import of a document obtained elsewhere (Importer) and the manifest sync
// (Syncer) write through the same path; the scheduler drives the Checker.
package updatecheck

// Status is how a check ended (docs/design.md section 3); every one is
// recorded in the history. The statuses are readmodel.CheckStatus's.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/upcheck/upcheck/internal/feedsync"
	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

type Status = readmodel.CheckStatus

// The statuses a check answers (readmodel.CheckStatus words each).
const (
	Completed             = readmodel.CheckCompleted
	CompletedWithFailures = readmodel.CheckCompletedWithFailures
	Busy                  = readmodel.CheckBusy
	Cooldown              = readmodel.CheckCooldown
	Skipped               = readmodel.CheckSkipped
	LeaseLost             = readmodel.CheckLeaseLost
	Cancelled             = readmodel.CheckCancelled
	Failed                = readmodel.CheckFailed
	// ConnectionLost is a status of the history only
	// (readmodel.CheckConnectionLost); the check answers LeaseLost.
	ConnectionLost = readmodel.CheckConnectionLost
)

// Result is what a check reports.
type Result struct {
	Status      Status `json:"status"`
	RunID       int64  `json:"run_id,omitempty"`
	Epoch       int64  `json:"epoch,omitempty"`
	RetryAfter  int    `json:"retry_after,omitempty"` // seconds, for cooldown
	Sources     int    `json:"sources"`
	Fetched     int    `json:"fetched"`
	NotModified int    `json:"not_modified"`
	Failed      int    `json:"failed"`
	Skipped     int    `json:"skipped"`
	// Offline counts the offline sources ("offline:NAME") the check left
	// alone: they are never fetched, and neither succeed nor fail.
	Offline    int    `json:"offline"`
	DurationMS int64  `json:"duration_ms"`
	Error      string `json:"error,omitempty"`
}

// Checker runs checks for one process: RunLockedUpdateCheck, which the
// schedule, the CLI and the button all call. It writes through the
// fenced-write path (write.go) that the import (Importer) and the manifest
// sync (Syncer) share with it.
type Checker struct {
	*writer
	fetcher *fetch.Fetcher
	// before runs before every check asks for the lease (BeforeEachCheck).
	before func(context.Context) error
	// feeds, when set, syncs the feeds that are due before each check
	// evaluates (UseFeeds).
	feeds *feedsync.Sync
	// dependencyLimit, when set, is how many added dependencies'
	// documents one check fetches at most (LimitDependencyDocuments).
	dependencyLimit *int
	// changeLimit, when set, is how many changed packages' documents one
	// check fetches at most (LimitChangeDocuments).
	changeLimit *int
	// beforePushWrite, for tests, runs in Push after it read the site's
	// tree and components and before the transaction that writes them.
	beforePushWrite func()
}

// LimitDependencyDocuments makes each check fetch at most n added
// dependencies' documents (UPCHECK_NPM_DEPENDENCY_DOCUMENTS; 0: none,
// every added dependency without stored facts is then said not read);
// DefaultDependencyDocuments otherwise. Call it before the first check.
func (c *Checker) LimitDependencyDocuments(n int) { c.dependencyLimit = &n }

func (c *Checker) dependencyDocuments() int {
	if c.dependencyLimit == nil {
		return DefaultDependencyDocuments
	}
	return *c.dependencyLimit
}

// UseNpm makes the checks read npm sources through client. Call it before
// the first check.
func (c *Checker) UseNpm(client *npm.Client) { c.npm = client }

// withKnowledge gives every job what the feeds know of the packages of
// all jobs, read once.
func (c *Checker) withKnowledge(ctx context.Context, jobs []job) error {
	var packages []string
	for _, j := range jobs {
		for _, comp := range j.components {
			packages = append(packages, comp.Package)
		}
	}
	k, err := c.knowledge(ctx, packages)
	if err != nil {
		return err
	}
	for i := range jobs {
		jobs[i].intel = k
	}
	return nil
}

// BeforeEachCheck makes fn run before every check asks for the lease, for
// whoever asks (the schedule, the CLI, the button): serve reads its
// lockfile there (UPCHECK_LOCKFILE), so a plugin upgraded outside upcheck
// is never checked as the version it was. An error of fn is logged and the
// check runs with the components as stored. Call it before the first check.
func (c *Checker) BeforeEachCheck(fn func(context.Context) error) { c.before = fn }

// New returns a Checker.
func New(st *store.Store, lm *lease.Manager, f *fetch.Fetcher, logger *slog.Logger) *Checker {
	return &Checker{writer: &writer{store: st, lease: lm, logger: logger, observer: noObserver{}, reads: noReads{}}, fetcher: f}
}

// Cooldown is the least time between two manual checks in force
// (lease.Timings: readmodel.ManualCooldown unless UPCHECK_TEST_TIMINGS
// shortens it), for the words that name it.
func (c *Checker) Cooldown() time.Duration { return c.lease.Timings().Cooldown }

// RunLockedUpdateCheck is the one way a check runs, whoever asks: acquire
// the lease (busy, cooldown and skipped end here), start the heartbeat, run
// the check under the heartbeat's context, stop the heartbeat, release the
// lease if still ours, and record the run. actor names who asked ("cron",
// "cli", a user's email).
//
// A returned error means the database could not be asked at all; every
// other outcome, a lost lease included, is a Result.
func (c *Checker) RunLockedUpdateCheck(ctx context.Context, trigger lease.Trigger, actor string) (Result, error) {
	start := time.Now()
	if c.before != nil {
		if err := c.before(ctx); err != nil {
			c.logger.WarnContext(ctx, "before the check", "error", err)
		}
	}
	acq, err := c.lease.Acquire(ctx, trigger)
	if err != nil {
		return Result{}, err
	}
	if acq.Outcome != lease.Acquired {
		return c.refused(ctx, trigger, actor, acq), nil
	}

	l := acq.Lease
	c.observer.LeaseHeld(true)
	c.reads.Changed()       // check_running changed
	defer c.reads.Changed() // and the results, whatever the outcome
	res := Result{Epoch: l.Epoch}
	if res.RunID, err = c.store.CheckRunStart(ctx, string(trigger), actor, l.Owner, l.Epoch); err != nil {
		c.settle(ctx, l, false, nil)
		c.observer.LeaseHeld(false)
		return Result{}, fmt.Errorf("record check start: %w", err)
	}
	c.logger.InfoContext(ctx, "update check started", "trigger", trigger, "actor", actor, "run_id", res.RunID, "epoch", l.Epoch)

	// Every site's components are evaluated: each site's counts of them
	// once the check is done and its lease given back, whatever its
	// outcome (derived counts, which lock their own rows: the lease is
	// not held, nor the run's time spent, for them).
	ctx, countSites := c.withCounts(ctx)
	defer countSites()
	checkCtx, hb := c.lease.StartHeartbeat(ctx, l)
	counts, sources, offline, checkErr := c.check(checkCtx, l)
	lostCause := context.Cause(checkCtx)
	hb.Stop()      // waits for a renewal still on its way
	l = hb.Lease() // expiring from its last confirmed renewal

	var recorded Status
	res.Status, recorded, checkErr = endOf(ctx, counts, checkErr, lostCause)
	c.observer.CheckEnded(trigger, res.Status, true, time.Since(start))

	res.Sources, res.Fetched, res.NotModified, res.Failed, res.Skipped = sources, counts.Fetched, counts.NotModified, counts.Failed, counts.Skipped
	res.Offline = offline
	res.DurationMS = time.Since(start).Milliseconds()
	if checkErr != nil && res.Status != Cancelled {
		res.Error = checkErr.Error()
	}
	c.logEnd(ctx, res, l.Epoch, counts, recorded)
	c.settle(ctx, l, res.Status.RanToEnd(), func(ctx context.Context, tx *store.Tx) error {
		return tx.CheckRunFinish(ctx, res.RunID, string(recorded), counts, res.Error)
	})
	c.observer.LeaseHeld(false)
	return res, nil
}

// refused records a check the lease refused (busy, cooldown, skipped)
// and returns its Result.
func (c *Checker) refused(ctx context.Context, trigger lease.Trigger, actor string, acq lease.Acquisition) Result {
	res := Result{Status: refusedStatus[acq.Outcome], RetryAfter: int(acq.RetryAfter / time.Second)}
	c.observer.CheckEnded(trigger, res.Status, false, 0)
	if err := c.store.CheckRunRecordRefused(ctx, string(trigger), actor, string(res.Status)); err != nil {
		c.logger.WarnContext(ctx, "record refused check", "status", res.Status, "error", err)
	}
	return res
}

// endOf is the status of a check that held the lease, from its counts,
// its error and the heartbeat's cause (lostCause), and the status its run
// is recorded as (a lease lost to an unreachable database is
// ConnectionLost); err is the check's error, or the heartbeat's cause
// when that ended it.
func endOf(ctx context.Context, counts store.RunCounts, checkErr, lostCause error) (status, recorded Status, err error) {
	switch {
	case errors.Is(checkErr, lease.ErrLeaseLost) || errors.Is(lostCause, lease.ErrLeaseLost):
		status = LeaseLost
		if checkErr == nil {
			checkErr = lostCause
		}
	case store.IsConnectionLost(checkErr):
		// A holder that cannot reach the database cannot confirm its
		// lease either: whichever noticed first, the heartbeat or a read
		// of the check, the check was interrupted, not failed. (A
		// statement that ran past its limit had an answer: failed.)
		status = LeaseLost
	case ctx.Err() != nil:
		status = Cancelled
	case checkErr != nil:
		status = Failed
	default:
		status = endStatus(counts)
	}
	recorded = status
	if status == LeaseLost && lostConnection(checkErr, lostCause) {
		recorded = ConnectionLost
	}
	return status, recorded, checkErr
}

// logEnd logs the check's end: a warning when it did not run to its end.
func (c *Checker) logEnd(ctx context.Context, res Result, epoch int64, counts store.RunCounts, recorded Status) {
	level := slog.LevelInfo
	if !res.Status.RanToEnd() {
		level = slog.LevelWarn
	}
	c.logger.Log(ctx, level, "update check ended", "status", res.Status, "run_id", res.RunID, "epoch", epoch,
		"sources", res.Sources, "fetched", counts.Fetched, "not_modified", counts.NotModified, "failed", counts.Failed,
		"skipped", counts.Skipped, "duration_ms", res.DurationMS, "error", res.Error, "recorded_as", recorded)
}

// lostConnection reports whether a lost lease was lost because the
// database could not be reached (store.IsConnectionLost): the check's own
// error or the heartbeat's cause says so.
func lostConnection(errs ...error) bool {
	return slices.ContainsFunc(errs, store.IsConnectionLost)
}

var refusedStatus = map[lease.Outcome]Status{lease.Busy: Busy, lease.Cooldown: Cooldown, lease.Skipped: Skipped}

// endStatus is the status of a check that ran to its end with counts.
func endStatus(c store.RunCounts) Status {
	if c.Failed > 0 {
		return CompletedWithFailures
	}
	return Completed
}

// check fetches every source but the offline ones (it reports how many it
// left alone) and writes each one's outcome as soon as it is known. It
// stops at the first sign that the lease is gone or the database refuses
// writes; requests in flight are then aborted and queued ones never start.
func (c *Checker) check(ctx context.Context, l lease.Lease) (counts store.RunCounts, sources, offline int, err error) {
	if c.feeds != nil {
		if err := c.feeds.SyncDue(ctx, l); err != nil {
			return counts, 0, 0, err
		}
	}
	// The installed tree, when a lockfile sync changed it or the feeds
	// moved since it was evaluated (a feed sync above evaluates it too):
	// before the fetches, so that its events go out with the run's.
	if _, err := c.evaluateTree(ctx, l); err != nil {
		return counts, 0, 0, err
	}
	jobs, err := c.plan(ctx)
	if err != nil {
		return counts, 0, 0, err
	}
	for _, j := range jobs { // counted when RunLockedUpdateCheck ends
		countsDue(ctx, sitesOf(j.components)...)
	}
	if err := c.withKnowledge(ctx, jobs); err != nil {
		return counts, 0, 0, err
	}
	jobs, offline = fetchable(jobs)
	// The added dependencies' documents of this check, shared by its
	// offers and its lockfile changes (treeBrings): each read once.
	ctx = withDependencyDocs(ctx, newDependencyDocs(c.dependencyDocuments()))
	if err = c.ready(ctx, jobs); err != nil {
		return counts, 0, offline, err
	}
	if counts, sources, err = c.fetchAndWrite(ctx, l, jobs); err != nil {
		return counts, sources, offline, err
	}
	// The bursts across a scope, once every npm source was read
	// (docs/npm.md "What an update brings").
	if err := c.scopeBurstStep(ctx, l, jobs); err != nil {
		return counts, sources, offline, err
	}
	// What the lockfile changes since the last check brought (docs/npm.md
	// "What a lockfile change brought"): after the sources, so that an
	// added dependency an offer read too is read once.
	if err := c.treeBrings(ctx, l); err != nil {
		return counts, sources, offline, err
	}
	// What clears each of the tree's findings, from the findings as
	// stored (docs/npm.md "What clears a finding"): after the sources, so
	// that a component's own document is the one its source's fetch just
	// stored; the other documents fetched under the lease, bounded
	// (MaxFixDocuments).
	return counts, sources, offline, c.fixStep(ctx, l)
}

// fetchAndWrite fetches the sources of jobs and writes each one's outcome,
// cleaning up meanwhile (cleanUp), and queues the run's end notifications
// once every outcome is written.
func (c *Checker) fetchAndWrite(ctx context.Context, l lease.Lease, jobs []job) (store.RunCounts, int, error) {
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	// The requests, in the order of fetching (of[i] is the job of reqs[i]),
	// each by its job's kind; a source its kind refuses at once (an npm
	// package whose registry no setting names) fails without a request.
	reqs := make([]fetch.Request, 0, len(jobs))
	of := make([]int, 0, len(jobs))
	var refused []pending
	for i := range jobs {
		j := &jobs[i]
		req, f := j.kind.request(c, j)
		if f.failed() {
			refused = append(refused, pending{job: *j, verdict: verdict{failure: f}})
			continue
		}
		reqs, of = append(reqs, req), append(of, i)
	}
	t := &tally{observer: c.observer, stop: stop}

	// The clean-up depends on no fetch: it runs while the first answers
	// come, not after the last is written.
	var cleaning sync.WaitGroup
	cleaning.Go(func() {
		if err := c.cleanUp(runCtx, l); err != nil {
			stop(err)
		}
	})

	// Preparers prepare what the fetch workers hand them and hand it to
	// the writers, so no fetch waits on the CPU or on the database and no
	// transaction is open during a fetch. The queue has a place for every
	// source; what bounds it is the room for results (maxQueuedResults): a
	// preparer waits for the writers when the results queued fill it.
	queue := make(chan pending, len(jobs))
	room := newQueueRoom(cmp.Or(c.queuedResultsMax, maxQueuedResults), c.queueFull)
	writers := c.startWriters(runCtx, l, queue, room, t)
	for _, p := range refused {
		t.start()
		queue <- p
	}
	answers := make(chan fetchAnswer, preparerCount)
	preparers := c.startPreparers(runCtx, l, jobs, of, answers, queue, room, t)
	_ = c.fetcher.Run(runCtx, reqs, func(_ context.Context, r int, resp fetch.Response, ferr error) {
		t.start()
		answers <- fetchAnswer{r: r, resp: resp, err: ferr}
	})
	close(answers)
	preparers.Wait()
	close(queue)
	writers.Wait()
	cleaning.Wait()
	counts := t.counts
	counts.Skipped += len(jobs) - t.started // never started: cancelled before their turn
	if err := context.Cause(runCtx); err != nil {
		return counts, len(jobs), err
	}

	if c.notifier != nil {
		err := c.lease.WithLease(ctx, l.Owner, func(tx *store.Tx) error {
			return c.notifier.QueueRunEnd(ctx, tx, l.Epoch)
		})
		if err != nil {
			return counts, len(jobs), err
		}
	}
	return counts, len(jobs), nil
}

// cleanUp deletes the results of components no longer installed and keeps
// the retention of the sources no component uses (store.Tx.CleanUp), in a
// fenced transaction of its own.
func (c *Checker) cleanUp(ctx context.Context, l lease.Lease) error {
	var results, sources int64
	err := c.lease.WithLease(ctx, l.Owner, func(tx *store.Tx) error {
		var err error
		results, sources, err = tx.CleanUp(ctx, l.Epoch)
		return err
	})
	if err == nil && results+sources > 0 {
		c.logger.InfoContext(ctx, "cleaned up", "results", results, "sources", sources)
	}
	return err
}
