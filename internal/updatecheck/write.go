package updatecheck

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sync/atomic"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// writer is the write path that the check, the import and the manifest
// sync share: the store, the lease that fences (or locks) their
// transactions, the notifications those transactions queue, the observer
// that hears of the lease, and the reads they tell of every write. One
// writer is made by New; the Importer and the Syncer made from a Checker
// share its writer, so NotifyWith, Observe and TellReads apply to all three.
type writer struct {
	store    *store.Store
	lease    *lease.Manager
	logger   *slog.Logger
	observer Observer
	notifier Notifier
	reads    Reads
	// npm reads the "npm:NAME" sources (nil: the settings name no
	// registry, and every npm source fails with readmodel.ErrorNoRegistry).
	npm *npm.Client
	// intel keeps the feeds' catalogues between evaluations (knowledge).
	intel intelCache
	// treeChunk, for tests, is how many package names the tree's
	// evaluation reads at a time (0: treeChunk).
	treeChunk int
	// matched counts the package versions the trees' evaluations matched
	// against the feeds (each once per evaluation however many sites have
	// it): what a test reads to see that a version is read once.
	matched atomic.Int64
	// maxFixDocuments, for tests, lowers MaxFixDocuments.
	maxFixDocuments int
	// devMode is UPCHECK_LOCKFILE_DEV: which new tree findings are
	// counted, and so notified ("": readmodel.DevSeparate).
	devMode readmodel.DevMode
	// afterKnowledge, for tests, runs when an evaluation has read what the
	// feeds know and before it evaluates.
	afterKnowledge func()
	// For tests: queued runs each time a check hands a prepared source to
	// its writers, and beforeWrites in each writer before it takes the
	// first; queueFull when a preparer waits for room in the writers'
	// queue (maxQueuedResults, lowered by queuedResultsMax when not 0).
	queued, beforeWrites, queueFull func()
	queuedResultsMax                int
}

// registries are the npm registries the settings name (none without an
// npm client).
func (w *writer) registries() npm.Registries {
	if w.npm == nil {
		return npm.Registries{}
	}
	return w.npm.Registries
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
	skipped   // not fetched: the check stopped before its answer was read
	unwritten // fetched, but the check stopped before its outcome was written
)

var (
	outcomeFetched     = outcome{kind: fetched}
	outcomeNotModified = outcome{kind: notModified}
	outcomeFailed      = outcome{kind: failed}
	outcomeSkipped     = outcome{kind: skipped}
	outcomeUnwritten   = outcome{kind: unwritten}
)

// writerCount is how many goroutines write prepared sources. Their fenced
// transactions serialise on the lease's lock; two let one open its
// transaction while the other holds the lock.
const writerCount = 2

// preparerCount is how many goroutines prepare fetched sources (verify,
// parse, evaluate): as many as can run at once.
var preparerCount = runtime.GOMAXPROCS(0)

// maxQueuedResults bounds the results prepared and not written yet that
// the writers' queue holds, all its sources together: a preparer waits
// for room before it queues a source. Writes are slower than fetches
// when a source is many sites' component (an npm package 1,000 sites
// install is 1,000 results, each with its evaluation): unbounded, the
// queue held every source's results at once (a check of 10,000 sites'
// 100,000 components peaked at 519 MiB). A source with more results than
// the bound waits for the queue to empty and goes alone.
const maxQueuedResults = 10000

// groupSources and groupResults bound a group (gather): the sources one
// pipelined write takes, and the first results they may bring between them
// before no more are added. The lock is held for the group's statements
// and one commit; a commit waits for its WAL to reach the disk (0.05 ms
// on the development machine's idle disk, 5 ms while other processes
// write to it, against about 0.6 ms for a source's statements), so one
// commit for every source could make the flushes the check's bound
// (docs/performance.md).
const (
	groupSources = 16
	groupResults = resultBatch
)

// gather returns first and the prepared sources already waiting in queue
// behind it, up to the group's bounds; it never waits for one. A writer
// that finds the lock busy therefore writes, at its next turn, what was
// prepared meanwhile, in one commit.
func gather(queue <-chan pending, first pending) []pending {
	group, results := []pending{first}, len(first.results)
	for len(group) < groupSources && results < groupResults {
		select {
		case p, ok := <-queue:
			if !ok {
				return group
			}
			group, results = append(group, p), results+len(p.results)
		default:
			return group
		}
	}
	return group
}

// sourceWrite is one source's part of a pipelined write: its first results
// (the others are written by completeResults), and what the write answers:
// how many components use the source, and the codes written.
type sourceWrite struct {
	p           pending
	first, rest []store.Result
	using       int
	written     []store.ComponentKey
}

func newSourceWrite(p pending) *sourceWrite {
	n := min(resultBatch, len(p.results))
	return &sourceWrite{p: p, first: p.results[:n], rest: p.results[n:]}
}

// pipelined says whether p can be written as part of a pipelined batch: a
// failure to record (which may queue its event) and a change of keys
// (with its audit entry) need a transaction.
func (p pending) pipelined() bool {
	return !p.failure.failed() && p.trustChange == nil && p.registryChange == nil
}

// write stores one prepared source; see writeGroup.
func (w *writer) write(ctx context.Context, l lease.Lease, p pending) outcome {
	return w.writeGroup(ctx, l, []pending{p})[0]
}

// writeGroup stores prepared sources and returns each one's outcome, in
// order. Those that need no transaction are written together: their rows
// and first results in one pipelined batch behind one fence (sendFenced),
// so they share one round trip and one commit. When that batch finds
// notification events to queue it wrote nothing, and each source is
// written again alone: in a batch of its own, or in a fenced transaction
// that queues its events (writeTx). The others are written in a fenced
// transaction each. Each source's other results follow in further short
// fenced transactions (completeResults). Until a component's result is
// written, the read model shows it as not evaluated, never as evaluated
// from another document.
func (w *writer) writeGroup(ctx context.Context, l lease.Lease, group []pending) []outcome {
	out := make([]outcome, len(group))
	var batch []*sourceWrite
	var at []int // at[k] is batch[k]'s index in group
	for i, p := range group {
		if p.failure.failed() {
			w.logger.WarnContext(ctx, "update source failed", "url", p.job.url, "kind", p.failure.kind, "error", p.failure.detail)
		}
		if p.pipelined() {
			batch, at = append(batch, newSourceWrite(p)), append(at, i)
		}
	}
	alone := make([]bool, len(group)) // to write one by one
	for i, p := range group {
		alone[i] = !p.pipelined()
	}
	if len(batch) > 0 {
		err := w.sendFenced(ctx, l, batch)
		switch {
		case err == nil:
			for k, s := range batch {
				out[at[k]] = w.complete(ctx, l, s, nil)
			}
		case errors.Is(err, store.ErrEventsToQueue) && len(batch) > 1:
			for _, i := range at {
				alone[i] = true
			}
		case errors.Is(err, store.ErrEventsToQueue):
			out[at[0]] = w.writeTx(ctx, l, batch[0])
		default:
			// Nothing of the batch was written; the error stops the
			// check, which counts the others as not written.
			out[at[0]] = w.complete(ctx, l, batch[0], err)
			for _, i := range at[1:] {
				out[i] = outcomeUnwritten
			}
		}
	}
	for i, p := range group {
		switch {
		case !alone[i]:
		case ctx.Err() != nil:
			out[i] = outcomeUnwritten // the check stopped: nothing more is written
		case p.pipelined():
			s := newSourceWrite(p)
			if err := w.sendFenced(ctx, l, []*sourceWrite{s}); errors.Is(err, store.ErrEventsToQueue) {
				out[i] = w.writeTx(ctx, l, s)
			} else {
				out[i] = w.complete(ctx, l, s, err)
			}
		default:
			out[i] = w.writeTx(ctx, l, newSourceWrite(p))
		}
	}
	return out
}

// writeTx writes s's row and first results in one fenced transaction that
// also records a failure, a change of keys, and queues the notifications
// they call for, with their delivery jobs.
func (w *writer) writeTx(ctx context.Context, l lease.Lease, s *sourceWrite) outcome {
	p := s.p
	s.using, s.written = 0, nil
	err := w.lease.WithLease(ctx, l.Owner, func(tx *store.Tx) error {
		var err error
		switch {
		case p.failure.failed():
			f := store.SourceFailure{Kind: string(p.failure.kind), Args: p.failure.args, Detail: p.failure.detail}
			if s.using, err = tx.SourceSaveFailure(ctx, p.job.url, f, l.Epoch); err == nil {
				err = w.queueSourceFailing(ctx, tx, p.job.url, l.Epoch)
			}
		case p.newDocument:
			s.using, err = tx.SourceSaveDocument(ctx, p.document)
		default:
			s.using, err = tx.SourceSaveUnchanged(ctx, p.unchanged(l.Epoch))
		}
		if err == nil && len(p.dependencies) > 0 {
			err = tx.NpmDependencySave(ctx, p.dependencies, l.Epoch)
		}
		if err == nil && len(p.provenance) > 0 {
			err = tx.NpmProvenanceSave(ctx, p.provenance, l.Epoch)
		}
		if err == nil {
			err = w.saveTrust(ctx, tx, p)
		}
		if err == nil {
			err = w.saveRegistryChange(ctx, tx, p.registryChange, l.Epoch)
		}
		if err != nil || p.doc == nil {
			return err
		}
		if s.written, err = tx.ResultWrite(ctx, s.first); err != nil {
			return err
		}
		return w.queue(ctx, tx, s.written, l.Epoch)
	})
	return w.complete(ctx, l, s, err)
}

// complete writes the rest of s's results once its first write succeeded
// (err nil), and says what became of the source.
func (w *writer) complete(ctx context.Context, l lease.Lease, s *sourceWrite, err error) outcome {
	p := s.p
	if err == nil && p.doc != nil {
		fenced := func(ctx context.Context, fn func(*store.Tx) error) error { return w.lease.WithLease(ctx, l.Owner, fn) }
		refused := len(s.written) < len(s.first)
		err = w.completeResults(ctx, fenced, p.doc, s.rest, s.written, refused, s.using, l.Epoch)
	}
	switch {
	case err != nil && ctx.Err() != nil && !errors.Is(err, lease.ErrLeaseLost):
		return outcomeUnwritten
	case err != nil:
		return outcome{kind: failed, err: err}
	case p.failure.failed():
		return outcomeFailed
	case p.notModified:
		return outcomeNotModified
	}
	return outcomeFetched
}

// sendFenced writes the sources' rows and their first results as one
// pipelined batch behind the fence: one round trip, one commit. With
// notifications, the batch also asks whether the results call for any
// event not queued yet; if so it fails with store.ErrEventsToQueue, having
// written nothing, and the caller writes again (a batch cannot insert the
// events' delivery jobs, which River inserts). The question is asked of
// every code of the batch, written or refused: a refused one can only send
// the write to the transaction, never lose an event.
func (w *writer) sendFenced(ctx context.Context, l lease.Lease, sources []*sourceWrite) error {
	var b store.Batch
	var results []store.Result
	var codes []string
	for _, s := range sources {
		p := s.p
		s.using, s.written = 0, nil
		if p.newDocument {
			b.SourceSaveDocument(p.document, &s.using)
		} else {
			b.SourceSaveUnchanged(p.unchanged(l.Epoch), &s.using)
		}
		if len(p.dependencies) > 0 {
			b.NpmDependencySave(p.dependencies, l.Epoch)
		}
		if len(p.provenance) > 0 {
			b.NpmProvenanceSave(p.provenance, l.Epoch)
		}
		if p.trust != nil { // never a change of keys: those go through the transaction, with their audit entry
			b.SourceTrustSave(*p.trust)
		}
		if p.doc != nil {
			results = append(results, s.first...)
		}
	}
	// Every source's first results in one statement, after the rows they
	// are checked against (docs/performance.md).
	var written []store.ComponentKey
	var keys []store.ComponentKey
	if len(results) > 0 {
		b.ResultWrite(results, &written)
		for _, r := range results {
			if r.Site == store.LocalSite {
				codes = append(codes, r.Code)
			} else {
				keys = append(keys, store.ComponentKey{Site: r.Site, Code: r.Code})
			}
		}
	}
	if w.notifier != nil && len(codes) > 0 {
		b.EventPlanNothingNew(codes)
	}
	if w.notifier != nil && len(keys) > 0 { // a registered site's: its channels of some sites and of the fleet
		b.EventPlanSitesNothingNew(keys)
	}
	if err := w.lease.SendFenced(ctx, l.Owner, &b); err != nil {
		for _, s := range sources { // nothing was written
			s.using, s.written = 0, nil
		}
		return err
	}
	if len(written) > 0 {
		for _, s := range sources {
			s.written = store.WrittenOf(s.first, written)
		}
	}
	return nil
}

// saveTrust stores the source's trust in the transaction that writes its
// row, and a change of its trusted keys in the audit log with it.
func (w *writer) saveTrust(ctx context.Context, tx *store.Tx, p pending) error {
	if p.trust == nil {
		return nil
	}
	if err := tx.SourceTrustSave(ctx, *p.trust); err != nil {
		return err
	}
	if p.trustChange == nil {
		return nil
	}
	return tx.AuditAppend(ctx, 0, auditTrust, p.trustChange)
}

// queue plans the notifications of the results just written in tx: the
// local site's components' for the channels that see it, and the
// registered sites' for the channels that see theirs.
func (w *writer) queue(ctx context.Context, tx *store.Tx, written []store.ComponentKey, epoch int64) error {
	if w.notifier == nil || len(written) == 0 {
		return nil
	}
	return w.notifier.QueueComponents(ctx, tx, written, epoch)
}

// queueSourceFailing plans the notification of a source failing for long,
// in the transaction that records its failure.
func (w *writer) queueSourceFailing(ctx context.Context, tx *store.Tx, url string, epoch int64) error {
	if w.notifier == nil {
		return nil
	}
	return w.notifier.QueueSourceFailing(ctx, tx, url, epoch)
}

// settle gives the lease back at once, so another instance need not wait
// for it to expire, and records the run's end (record) in the same
// transaction. It runs even when ctx was cancelled (shutdown) and when the
// database is away: lease.Manager.Settle tries again until the database
// answers or the lease could have expired, and for a few seconds at most
// once ctx is done.
func (w *writer) settle(ctx context.Context, l lease.Lease, completed bool, record func(context.Context, *store.Tx) error) {
	_, attempts, err := w.lease.Settle(ctx, l, completed, record)
	switch {
	case err != nil:
		w.logger.WarnContext(ctx, "could not release the lease or record the check's end", "epoch", l.Epoch, "attempts", attempts, "error", err)
	case attempts > 1 && record != nil:
		w.logger.InfoContext(ctx, "lease released and check's end recorded once the database answered", "epoch", l.Epoch, "attempts", attempts)
	case attempts > 1:
		w.logger.InfoContext(ctx, "lease released once the database answered", "epoch", l.Epoch, "attempts", attempts)
	}
}
