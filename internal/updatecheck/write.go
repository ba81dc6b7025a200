package updatecheck

import (
	"context"
	"errors"
	"log/slog"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/npm"
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
	// afterKnowledge, for tests, runs when an evaluation has read what the
	// feeds know and before it evaluates.
	afterKnowledge func()
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

// write stores one prepared source: its row and the first batch of its
// results in one fenced write (one pipelined batch when nothing is to be
// queued, see sendFenced; otherwise one fenced transaction), the other results in further short
// fenced ones (see completeResults). Until a component's result is written,
// the read model shows it as not evaluated, never as evaluated from
// another document.
func (w *writer) write(ctx context.Context, l lease.Lease, p pending) outcome {
	if p.failure.failed() {
		w.logger.WarnContext(ctx, "update source failed", "url", p.job.url, "kind", p.failure.kind, "error", p.failure.detail)
	}
	fenced := func(ctx context.Context, fn func(*store.Tx) error) error { return w.lease.WithLease(ctx, l.Owner, fn) }
	first, rest := p.results[:min(resultBatch, len(p.results))], p.results[min(resultBatch, len(p.results)):]
	var using int
	var written []string
	err := store.ErrEventsToQueue // the transaction below, unless the batch is enough
	if !p.failure.failed() && p.trustChange == nil && p.registryChange == nil {
		err = w.sendFenced(ctx, l, p, first, &using, &written)
	}
	if errors.Is(err, store.ErrEventsToQueue) {
		// Events to queue (or a failure to record): nothing of the batch
		// was written; write it again in a fenced transaction that
		// queues them, with their delivery jobs.
		using, written = 0, nil
		err = fenced(ctx, func(tx *store.Tx) error {
			var err error
			switch {
			case p.failure.failed():
				f := store.SourceFailure{Kind: string(p.failure.kind), Arg: p.failure.arg, Detail: p.failure.detail}
				if using, err = tx.SourceSaveFailure(ctx, p.job.url, f, l.Epoch); err == nil {
					err = w.queueSourceFailing(ctx, tx, p.job.url, l.Epoch)
				}
			case p.newDocument:
				using, err = tx.SourceSaveDocument(ctx, p.document)
			default:
				using, err = tx.SourceSaveUnchanged(ctx, p.unchanged(l.Epoch))
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
			if written, err = tx.ResultWrite(ctx, first); err != nil {
				return err
			}
			return w.queue(ctx, tx, written, l.Epoch)
		})
	}
	refused := len(written) < len(first)
	if err == nil && p.doc != nil {
		err = w.completeResults(ctx, fenced, p.doc, rest, written, refused, using, l.Epoch)
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

// sendFenced writes the source's row and its first results as one pipelined
// batch behind the fence: one round trip. With notifications, the batch
// also asks whether the results call for any event not queued yet; if so
// it fails with store.ErrEventsToQueue, having written nothing, and the
// caller writes again in a transaction that queues them (a batch cannot
// insert the events' delivery jobs, which River inserts). The question is
// asked of every code of the batch, written or refused: a refused one can
// only send the write to the transaction, never lose an event.
func (w *writer) sendFenced(ctx context.Context, l lease.Lease, p pending, first []store.Result, using *int, written *[]string) error {
	var b store.Batch
	if p.newDocument {
		b.SourceSaveDocument(p.document, using)
	} else {
		b.SourceSaveUnchanged(p.unchanged(l.Epoch), using)
	}
	if p.trust != nil { // never a change of keys: those go through the transaction, with their audit entry
		b.SourceTrustSave(*p.trust)
	}
	if p.doc != nil && len(first) > 0 {
		b.ResultWrite(first, written)
		if w.notifier != nil {
			codes := make([]string, len(first))
			for i, r := range first {
				codes[i] = r.Code
			}
			b.EventPlanNothingNew(codes)
		}
	}
	return w.lease.SendFenced(ctx, l.Owner, &b)
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

// queue plans the notifications of the results just written in tx.
func (w *writer) queue(ctx context.Context, tx *store.Tx, codes []string, epoch int64) error {
	if w.notifier == nil || len(codes) == 0 {
		return nil
	}
	_, err := w.notifier.Queue(ctx, tx, codes, 0, epoch)
	return err
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
