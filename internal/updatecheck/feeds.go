package updatecheck

import (
	"context"
	"errors"

	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/feedsync"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// NewFeeds returns the sync of feeds (internal/feedsync) writing as c
// does, spooling archives under dir ("" for the system's temporary
// directory): c's store, lease and fetcher, with c as its Host (feedHost).
func NewFeeds(c *Checker, feeds []feed.Feed, dir string) *feedsync.Sync {
	return feedsync.New(feedsync.Config{Store: c.store, Lease: c.lease, Fetcher: c.fetcher, Logger: c.logger,
		Host: feedHost{c.writer}, Feeds: feeds, Dir: dir})
}

// UseFeeds makes every check sync the feeds that are due before it
// evaluates.
func (c *Checker) UseFeeds(s *feedsync.Sync) { c.feeds = s }

// feedHost is what the feed sync needs of the check (feedsync.Host): the
// lease held as an import, the re-evaluation of the components a changed
// advisory concerns, and the words of a fetch's failure.
type feedHost struct{ w *writer }

// HoldLease runs fn holding the lease under its heartbeat, as an import.
func (h feedHost) HoldLease(ctx context.Context, fn func(context.Context, lease.Lease) error) error {
	w := h.w
	acq, err := w.lease.Acquire(ctx, lease.Import)
	if err != nil {
		return err
	}
	if acq.Outcome != lease.Acquired {
		return feedsync.ErrBusy
	}
	l := acq.Lease
	w.observer.LeaseHeld(true)
	w.reads.Changed()
	defer w.reads.Changed()
	// The sites whose components a feed's records evaluated again.
	ctx, countSites := w.withCounts(ctx)
	defer countSites()
	runCtx, hb := w.lease.StartHeartbeat(ctx, l)
	err = fn(runCtx, l)
	if cause := context.Cause(runCtx); err == nil && errors.Is(cause, lease.ErrLeaseLost) {
		err = cause
	}
	hb.Stop()
	w.settle(ctx, hb.Lease(), false, nil)
	w.observer.LeaseHeld(false)
	return err
}

// Reevaluate evaluates again, from their stored documents and what the
// feeds know now, the components todo, and writes their results (fenced
// by l, their notifications queued in the same transactions).
func (h feedHost) Reevaluate(ctx context.Context, l lease.Lease, todo []store.Unevaluated) (int, error) {
	w := h.w
	results, err := w.evaluateFromStored(ctx, todo)
	if err != nil {
		return 0, err
	}
	for _, u := range todo {
		countsDue(ctx, u.Site)
	}
	written := 0
	for start := 0; start < len(results); start += resultBatch {
		batch := results[start:min(start+resultBatch, len(results))]
		for i := range batch {
			batch[i].Epoch = l.Epoch
		}
		err := w.lease.WithLease(ctx, l.Owner, func(tx *store.Tx) error {
			codes, err := tx.ResultWrite(ctx, batch)
			if err != nil {
				return err
			}
			written += len(codes)
			return w.queue(ctx, tx, codes, l.Epoch)
		})
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// EvaluateTree evaluates the installed tree's findings again under l when
// the tree or the feeds moved (writer.evaluateTree).
func (h feedHost) EvaluateTree(ctx context.Context, l lease.Lease) (bool, error) {
	return h.w.evaluateTree(ctx, l)
}

// FailureOf classifies a feed's fetch error as a source's (failureOf).
func (feedHost) FailureOf(err error) (readmodel.ErrorKind, readmodel.FailureArgs) {
	f := failureOf(err, "")
	return f.kind, f.args
}
