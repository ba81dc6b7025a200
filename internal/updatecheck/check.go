// Package updatecheck runs the locked update check: take the lease, fetch
// every update source politely, evaluate each installed component against
// its source's document, and store sources and results through fenced
// writes, so that only the lease holder's results ever land. It also keeps
// the components in step with the manifest and schedules the daily check.
package updatecheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// Status is how a check ended. The first five are the outside contract
// (DESIGN.md section 3); cancelled and failed are recorded in the history.
type Status string

// The statuses.
const (
	Completed Status = "completed"
	Busy      Status = "busy"
	Cooldown  Status = "cooldown"
	Skipped   Status = "skipped"
	LeaseLost Status = "lease_lost"
	// Cancelled: the process was shutting down; the lease was released.
	Cancelled Status = "cancelled"
	// Failed: the check could not write (a database error other than a lost
	// lease); the lease was released.
	Failed Status = "failed"
)

// releaseTimeout bounds the release (and the history write) that follow a
// check, which must run even when the check's context was cancelled.
const releaseTimeout = 10 * time.Second

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
	DurationMS  int64  `json:"duration_ms"`
	Error       string `json:"error,omitempty"`
}

// Checker runs checks for one process.
type Checker struct {
	store    *store.Store
	lease    *lease.Manager
	fetcher  *fetch.Fetcher
	logger   *slog.Logger
	now      func() time.Time // only for a document's own expiry, never for the lease
	observer Observer
	summary  summaryCache
}

// Observer hears how checks and fetches end (metrics).
type Observer interface {
	// CheckEnded: ran is false for refused checks (busy, cooldown, skipped).
	CheckEnded(trigger, status string, ran bool, d time.Duration)
	// SourceFetched: ok, not_modified, failed or cancelled.
	SourceFetched(outcome string)
	// LeaseHeld: this process took or gave back the lease.
	LeaseHeld(held bool)
}

type noObserver struct{}

func (noObserver) CheckEnded(string, string, bool, time.Duration) {}
func (noObserver) SourceFetched(string)                           {}
func (noObserver) LeaseHeld(bool)                                 {}

// New returns a Checker.
func New(st *store.Store, lm *lease.Manager, f *fetch.Fetcher, logger *slog.Logger) *Checker {
	return &Checker{store: st, lease: lm, fetcher: f, logger: logger, now: time.Now, observer: noObserver{}}
}

// Observe reports checks and fetches to o. Call it before the first check.
func (c *Checker) Observe(o Observer) { c.observer = o }

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
	acq, err := c.lease.Acquire(ctx, trigger)
	if err != nil {
		return Result{}, err
	}
	if acq.Outcome != lease.Acquired {
		res := Result{Status: refusedStatus[acq.Outcome], RetryAfter: int(acq.RetryAfter / time.Second)}
		c.observer.CheckEnded(string(trigger), string(res.Status), false, 0)
		if err := c.store.CheckRunRecordRefused(ctx, string(trigger), actor, string(res.Status)); err != nil {
			c.logger.WarnContext(ctx, "record refused check", "status", res.Status, "error", err)
		}
		return res, nil
	}

	l := acq.Lease
	c.observer.LeaseHeld(true)
	c.summary.invalidate()       // check_running changed
	defer c.summary.invalidate() // and the results, whatever the outcome
	res := Result{Epoch: l.Epoch}
	if res.RunID, err = c.store.CheckRunStart(ctx, string(trigger), actor, l.Owner, l.Epoch); err != nil {
		c.release(ctx, l, false)
		c.observer.LeaseHeld(false)
		return Result{}, fmt.Errorf("record check start: %w", err)
	}
	c.logger.InfoContext(ctx, "update check started", "trigger", trigger, "actor", actor, "run_id", res.RunID, "epoch", l.Epoch)

	checkCtx, hb := c.lease.StartHeartbeat(ctx, l)
	counts, sources, checkErr := c.check(checkCtx, l)
	lostCause := context.Cause(checkCtx)
	hb.Stop() // waits for a renewal still on its way

	switch {
	case errors.Is(checkErr, lease.ErrLeaseLost) || errors.Is(lostCause, lease.ErrLeaseLost):
		res.Status = LeaseLost
		if checkErr == nil {
			checkErr = lostCause
		}
	case ctx.Err() != nil:
		res.Status = Cancelled
	case checkErr != nil:
		res.Status = Failed
	default:
		res.Status = Completed
	}
	c.release(ctx, l, res.Status == Completed)
	c.observer.LeaseHeld(false)
	c.observer.CheckEnded(string(trigger), string(res.Status), true, time.Since(start))

	res.Sources, res.Fetched, res.NotModified, res.Failed, res.Skipped = sources, counts.Fetched, counts.NotModified, counts.Failed, counts.Skipped
	res.DurationMS = time.Since(start).Milliseconds()
	if checkErr != nil && res.Status != Cancelled {
		res.Error = checkErr.Error()
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	if err := c.store.CheckRunFinish(rctx, res.RunID, string(res.Status), counts, res.Error); err != nil {
		c.logger.WarnContext(ctx, "record check end", "run_id", res.RunID, "error", err)
	}
	level := slog.LevelInfo
	if res.Status != Completed {
		level = slog.LevelWarn
	}
	c.logger.Log(ctx, level, "update check ended", "status", res.Status, "run_id", res.RunID, "epoch", l.Epoch,
		"sources", sources, "fetched", counts.Fetched, "not_modified", counts.NotModified, "failed", counts.Failed,
		"skipped", counts.Skipped, "duration_ms", res.DurationMS, "error", res.Error)
	return res, nil
}

var refusedStatus = map[lease.Outcome]Status{lease.Busy: Busy, lease.Cooldown: Cooldown, lease.Skipped: Skipped}

// release gives the lease back at once, so another instance need not wait
// for it to expire; it runs even when ctx was cancelled (shutdown).
func (c *Checker) release(ctx context.Context, l lease.Lease, completed bool) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	if _, err := c.lease.Release(rctx, l.Owner, completed); err != nil {
		c.logger.WarnContext(ctx, "release lease", "error", err)
	}
}

// job is one source to fetch and the components it serves.
type job struct {
	url        string
	key        string       // pinned key, "" for unsigned
	stored     store.Source // zero when the source was never written
	components []store.Component
}

// check fetches every source and writes each one's outcome as soon as it
// is known. It stops at the first sign that the lease is gone or the
// database refuses writes; requests in flight are then aborted and queued
// ones never start.
func (c *Checker) check(ctx context.Context, l lease.Lease) (store.RunCounts, int, error) {
	var counts store.RunCounts
	components, err := c.store.Components(ctx)
	if err != nil {
		return counts, 0, err
	}
	stored, err := c.store.Sources(ctx)
	if err != nil {
		return counts, 0, err
	}
	jobs, core := plan(components, stored)
	dismissals, err := c.store.DismissalsFor(ctx)
	if err != nil {
		return counts, 0, err
	}

	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	reqs := make([]fetch.Request, len(jobs))
	for i, j := range jobs {
		reqs[i] = fetch.Request{URL: j.url}
		if j.stored.Document != nil { // validators only make sense with a document to keep
			reqs[i].ETag, reqs[i].LastModified = j.stored.ETag, j.stored.LastModified
		}
	}
	var mu sync.Mutex
	started := 0
	record := func(o outcome) {
		mu.Lock()
		defer mu.Unlock()
		switch o.kind {
		case fetched:
			counts.Fetched++
			c.observer.SourceFetched("ok")
		case notModified:
			counts.NotModified++
			c.observer.SourceFetched("not_modified")
		case failed:
			counts.Failed++
			c.observer.SourceFetched("failed")
		case skipped:
			counts.Skipped++
			c.observer.SourceFetched("cancelled")
		}
		if o.err != nil {
			stop(o.err)
		}
	}

	// Fetch workers prepare each source (signature, parse, evaluate) and
	// hand it to the writers, so no fetch waits on the database and no
	// transaction is open during a fetch. The queue holds every source, so
	// a worker never blocks on it.
	queue := make(chan pending, len(jobs))
	var writers sync.WaitGroup
	for range writerCount {
		writers.Go(func() {
			for p := range queue {
				if runCtx.Err() != nil {
					record(outcomeSkipped) // nothing more is written once the check is cancelled
					continue
				}
				record(c.write(runCtx, l, p))
			}
		})
	}
	_ = c.fetcher.Run(runCtx, reqs, func(_ context.Context, i int, resp fetch.Response, ferr error) {
		mu.Lock()
		started++
		mu.Unlock()
		p, ok := c.prepare(runCtx, jobs[i], core, dismissals, l.Epoch, resp, ferr)
		if !ok {
			record(outcomeSkipped)
			return
		}
		queue <- p
	})
	close(queue)
	writers.Wait()
	counts.Skipped += len(jobs) - started // never started: cancelled before their turn
	if err := context.Cause(runCtx); err != nil {
		return counts, len(jobs), err
	}

	var removedResults, removedSources int64
	err = c.lease.WithLease(ctx, l.Owner, func(tx *store.Tx) error {
		var err error
		removedResults, removedSources, err = tx.CleanUp(ctx)
		return err
	})
	if err != nil {
		return counts, len(jobs), err
	}
	if removedResults+removedSources > 0 {
		c.logger.InfoContext(ctx, "cleaned up", "results", removedResults, "sources", removedSources)
	}
	return counts, len(jobs), nil
}

// plan groups the components by source and finds the installed core.
func plan(components []store.Component, stored []store.Source) ([]job, string) {
	byURL := make(map[string]store.Source, len(stored))
	for _, s := range stored {
		byURL[s.URL] = s
	}
	var jobs []job
	index := map[string]int{}
	core := ""
	for _, comp := range components {
		if comp.Code == updatedoc.CoreCode {
			core = comp.InstalledVersion
		}
		if comp.SourceURL == "" {
			continue
		}
		i, ok := index[comp.SourceURL]
		if !ok {
			jobs = append(jobs, job{url: comp.SourceURL, key: comp.PinnedKey, stored: byURL[comp.SourceURL]})
			i = len(jobs) - 1
			index[comp.SourceURL] = i
		}
		jobs[i].components = append(jobs[i].components, comp)
	}
	return jobs, core
}

// outcome is what became of one source; err, when set, stops the whole
// check (the lease is gone or the database refuses writes).
type outcome struct {
	kind outcomeKind
	err  error
}

type outcomeKind int

const (
	fetched outcomeKind = iota + 1
	notModified
	failed
	skipped
)

var (
	outcomeFetched     = outcome{kind: fetched}
	outcomeNotModified = outcome{kind: notModified}
	outcomeFailed      = outcome{kind: failed}
	outcomeSkipped     = outcome{kind: skipped}
)

// writerCount is how many goroutines write prepared sources. Their fenced
// transactions serialise on the lease's lock; two let one open its
// transaction while the other holds the lock.
const writerCount = 2

// pending is one source's outcome, prepared outside any transaction and
// written in one fenced transaction.
type pending struct {
	job     job
	failure string // set: record this failure, keep the stored document
	// newDocument: store document (else only the validators and success move).
	newDocument  bool
	notModified  bool
	document     store.SourceDocument
	etag         string // the validators the publisher sent
	lastModified string
	results      []store.Result
}

// prepare turns one fetch into what to write. It reports false when the
// check was cancelled: a cancelled request is not the publisher's failure
// and nothing is recorded for it.
func (c *Checker) prepare(ctx context.Context, j job, core string, dismissals map[string]map[string]bool, epoch int64, resp fetch.Response, ferr error) (pending, bool) {
	if ctx.Err() != nil || fetch.IsCancelled(ctx, ferr) {
		return pending{}, false
	}
	fail := func(msg string) (pending, bool) { return pending{job: j, failure: msg}, true }
	if ferr != nil {
		return fail(ferr.Error())
	}

	body, signature, state := resp.Body, resp.Signature, "unsigned"
	newDocument := !resp.NotModified
	if resp.NotModified {
		if j.stored.Document == nil {
			return fail("publisher answered 304 Not Modified but no document is stored")
		}
		body, signature, state = j.stored.Document, j.stored.Signature, j.stored.SignatureState
	}
	if j.key != "" && newDocument {
		key, err := updatedoc.ParsePublicKey(j.key)
		if err != nil {
			return fail(fmt.Sprintf("pinned key: %v", err))
		}
		if signature == "" {
			sig, err := c.fetcher.FetchSignature(ctx, j.url)
			if fetch.IsCancelled(ctx, err) {
				return pending{}, false
			}
			if err != nil {
				return fail(fmt.Sprintf("document is unsigned and its .sig could not be fetched: %v", err))
			}
			signature = sig
		}
		if err := updatedoc.Verify(body, signature, key); err != nil {
			return fail(fmt.Sprintf("signature: %v", err))
		}
		state = "verified"
	}
	if j.key != "" && !newDocument && state != "verified" {
		// The stored document predates the pinned key: it cannot be trusted.
		return fail("stored document is not signed with the pinned key")
	}

	doc, err := updatedoc.Parse(body)
	if err != nil {
		return fail(fmt.Sprintf("invalid document: %v", err))
	}
	// The stored sequence counts only under the key it was accepted with:
	// a new pinned key starts a new history.
	haveSeq := j.stored.Sequence != nil && j.stored.Document != nil && j.stored.SequenceKey == j.key
	var storedSeq int64
	if haveSeq {
		storedSeq = *j.stored.Sequence
	}
	if newDocument {
		if err := updatedoc.CheckSequence(storedSeq, doc.Sequence, haveSeq); err != nil {
			return fail(err.Error())
		}
		if haveSeq && doc.Sequence == storedSeq {
			newDocument = false // same publication: validators move, the document stays
			if stored, err := updatedoc.Parse(j.stored.Document); err == nil {
				doc = stored
			}
		}
	}
	p := pending{
		job: j, newDocument: newDocument, notModified: resp.NotModified, etag: resp.ETag, lastModified: resp.LastModified,
		results: c.evaluate(doc, j, core, epoch, dismissals),
	}
	if newDocument {
		p.document = store.SourceDocument{
			URL: j.url, Document: body, Signature: signature, Sequence: doc.Sequence, SequenceKey: j.key,
			ETag: resp.ETag, LastModified: resp.LastModified, ExpiresAt: expiry(doc), SignatureState: state, Epoch: epoch,
		}
	}
	return p, true
}

// write stores one prepared source in one fenced transaction: the source
// row and its components' results commit together, or not at all.
func (c *Checker) write(ctx context.Context, l lease.Lease, p pending) outcome {
	if p.failure != "" {
		c.logger.WarnContext(ctx, "update source failed", "url", p.job.url, "error", p.failure)
	}
	err := c.lease.WithLease(ctx, l.Owner, func(tx *store.Tx) error {
		switch {
		case p.failure != "":
			if err := tx.SourceSaveFailure(ctx, p.job.url, p.failure, l.Epoch); err != nil {
				return err
			}
			return tx.ResultRecordFailure(ctx, p.job.url, p.failure, l.Epoch)
		case p.newDocument:
			if err := tx.SourceSaveDocument(ctx, p.document); err != nil {
				return err
			}
		default:
			if err := tx.SourceSaveUnchanged(ctx, p.job.url, p.etag, p.lastModified, l.Epoch); err != nil {
				return err
			}
		}
		for _, r := range p.results {
			if _, err := tx.ResultUpsert(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	switch {
	case err != nil && ctx.Err() != nil && !errors.Is(err, lease.ErrLeaseLost):
		return outcomeSkipped
	case err != nil:
		return outcome{kind: failed, err: err}
	case p.failure != "":
		return outcomeFailed
	case p.notModified:
		return outcomeNotModified
	}
	return outcomeFetched
}

// evaluate computes the results of every component of j from doc.
func (c *Checker) evaluate(doc *updatedoc.Document, j job, core string, epoch int64, dismissals map[string]map[string]bool) []store.Result {
	stale := doc.Stale(c.now())
	out := make([]store.Result, 0, len(j.components))
	for _, comp := range j.components {
		r := store.Result{Code: comp.Code, SourceURL: j.url, InstalledVersion: comp.InstalledVersion, Stale: stale, Epoch: epoch}
		ev, err := updatedoc.Evaluate(doc, comp.Code, comp.InstalledVersion, core, dismissals[comp.Code])
		if err != nil {
			r.LastError = err.Error()
			out = append(out, r)
			continue
		}
		r.Succeeded = true
		r.UpdateAvailable, r.Security, r.NeedsNewerCore, r.Vulnerable = ev.UpdateAvailable, ev.Security, ev.NeedsNewerCore, ev.Vulnerable
		if ev.Missing {
			r.LastError = fmt.Sprintf("the document has no package %q", comp.Code)
		}
		if ev.Latest != nil {
			r.LatestVersion, r.ReleaseURL = ev.Latest.Version, ev.Latest.URL
		}
		if ev.Update != nil {
			r.UpdateVersion, r.ReleaseURL = ev.Update.Version, ev.Update.URL
		}
		if ev.BlockedUpdate != nil {
			r.RequiredCore = ev.BlockedUpdate.RequiresCore
		}
		r.Advisories, _ = json.Marshal(ev.Advisories)
		r.Evaluation, _ = json.Marshal(ev)
		out = append(out, r)
	}
	return out
}

func expiry(d *updatedoc.Document) *time.Time {
	if d.Expires.IsZero() {
		return nil
	}
	t := d.Expires
	return &t
}
