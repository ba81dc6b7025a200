package updatecheck

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// ErrUnknownSource: no installed component names the source a document was
// imported for.
var ErrUnknownSource = errors.New("no installed component uses this update source")

// ErrNpmSource: a document was imported for an npm source, which is read
// from its registry only.
var ErrNpmSource = errors.New("an npm source is read from its registry: no document can be imported for it")

// Importable says whether documents can be imported for the source at
// url: ErrNpmSource for an npm source, nil otherwise. The import pages ask
// it before they offer a form.
func Importable(url string) error { return kindOf(url).importable() }

// ImportStatus is how an import ended.
type ImportStatus string

// The statuses of an import.
const (
	// Imported: the document replaced the stored one and the source's
	// components were evaluated from it.
	Imported ImportStatus = "imported"
	// ImportUnchanged: the document is the publication already stored (the
	// same sequence under the same pin); it stays, and the components were
	// evaluated from it again.
	ImportUnchanged ImportStatus = "unchanged"
	// ImportRefused: the acceptance policy refused the document (signature,
	// rollback, malformed, too large); nothing was written and the stored
	// document stays. Kind and Args word why (readmodel.ProblemSentence).
	ImportRefused ImportStatus = ImportStatus(readmodel.StatusRefused)
	// ImportBusy: a check (or another import) holds the lease; nothing was
	// done and nothing waited.
	ImportBusy ImportStatus = ImportStatus(readmodel.CheckBusy)
)

// ImportResult is what an import reports.
type ImportResult struct {
	Status     ImportStatus `json:"status"`
	URL        string       `json:"url"`
	RunID      int64        `json:"run_id,omitempty"`
	Sequence   int64        `json:"sequence,omitempty"`
	Components int          `json:"components"` // evaluated from the document
	// Kind (a readmodel.ErrorKind), Args and Detail: why a refused import
	// was refused, as a fetch failure would be stored.
	Kind   readmodel.ErrorKind   `json:"kind,omitempty"`
	Args   readmodel.FailureArgs `json:"args,omitzero"`
	Detail string                `json:"error,omitempty"`
}

// Importer accepts documents obtained elsewhere (Import). It writes through
// the check's write path and holds the lease as a check does.
type Importer struct {
	*writer
	fetcher *fetch.Fetcher
}

// NewImporter returns the import writing as c does: the same store, lease,
// fetcher's limits, notifier, observer and reads (NotifyWith, Observe and
// TellReads on c apply to it).
func NewImporter(c *Checker) *Importer { return &Importer{writer: c.writer, fetcher: c.fetcher} }

// Limit is the most bytes an imported document may have: the fetcher's
// body cap.
func (im *Importer) Limit() int64 { return im.fetcher.MaxBody() }

// Import accepts a document obtained elsewhere (a mirror, a USB stick) for
// the source url, with its detached signature as served at <url>.sig (""
// for none), under the rules of a fetched one: the same acceptance policy
// (judge, then accept: signature under the source's pin, rollback), the
// same evaluation and the same fenced write. The signature covers the
// document's bytes alone, never the address it came from.
//
// Like a check it holds the lease while it writes: while a check (or
// another import) holds it, the import answers ImportBusy at once, without
// waiting. It has no cooldown, and its release completes no period. Every
// import that reached the lease is recorded in the check history with
// trigger "import" and its actor. A refused import is answered (Kind, Args,
// Detail) and recorded in the history, but not as the source's last error:
// the publisher's server did not fail, and the source's fetch facts stay.
func (im *Importer) Import(ctx context.Context, url string, body []byte, signature, actor string) (ImportResult, error) {
	res := ImportResult{URL: url}
	if err := Importable(url); err != nil {
		return res, err
	}
	if err := im.sourceInUse(ctx, url); err != nil {
		return res, err
	}
	if int64(len(body)) > im.Limit() {
		f := failureOf(fmt.Errorf("%w: the document has %d bytes, the limit is %d", fetch.ErrTooLarge, len(body), im.Limit()), "")
		res.Status, res.Kind, res.Detail = ImportRefused, f.kind, f.detail
		return res, nil
	}
	acq, err := im.lease.Acquire(ctx, lease.Import)
	if err != nil {
		return res, err
	}
	if acq.Outcome != lease.Acquired {
		res.Status = ImportBusy
		if err := im.store.CheckRunRecordRefused(ctx, string(lease.Import), actor, string(Busy)); err != nil {
			im.logger.WarnContext(ctx, "record refused import", "error", err)
		}
		return res, nil
	}

	start := time.Now()
	l := acq.Lease
	im.observer.LeaseHeld(true)
	im.reads.Changed()       // check_running changed
	defer im.reads.Changed() // and the results, whatever the outcome
	if res.RunID, err = im.store.CheckRunStart(ctx, string(lease.Import), actor, l.Owner, l.Epoch); err != nil {
		im.settle(ctx, l, false, nil)
		im.observer.LeaseHeld(false)
		return res, fmt.Errorf("record import start: %w", err)
	}
	hctx, hb := im.lease.StartHeartbeat(ctx, l)
	counts, importErr := im.importLocked(hctx, l, &res, body, strings.TrimSpace(signature))
	lostCause := context.Cause(hctx)
	hb.Stop()

	status := Completed
	switch {
	case errors.Is(importErr, lease.ErrLeaseLost) || errors.Is(lostCause, lease.ErrLeaseLost):
		status = LeaseLost
		if importErr == nil {
			importErr = lostCause
		}
	case ctx.Err() != nil:
		status = Cancelled
	case importErr != nil:
		status = Failed
	case res.Status == ImportRefused:
		// Recorded as a run that ended with its one source failed; the
		// history reads it as "Refused" (readmodel.ShownRunStatus).
		status = CompletedWithFailures
	}
	message := res.Detail
	if importErr != nil {
		message = importErr.Error()
	}
	// An import checked no publisher: it completes no period. Its end is
	// recorded with the release, as a check's is (Settle retries both
	// while the database does not answer).
	im.settle(ctx, l, false, func(ctx context.Context, tx *store.Tx) error {
		return tx.CheckRunFinish(ctx, res.RunID, string(status), counts, message)
	})
	im.observer.LeaseHeld(false)
	level := slog.LevelInfo
	if status != Completed {
		level = slog.LevelWarn
	}
	im.logger.Log(ctx, level, "document imported", "url", url, "status", status, "import", res.Status, "actor", actor,
		"run_id", res.RunID, "epoch", l.Epoch, "kind", res.Kind, "duration_ms", time.Since(start).Milliseconds(), "error", message)
	if importErr != nil {
		return res, fmt.Errorf("import: %w", importErr)
	}
	return res, nil
}

// sourceInUse answers ErrUnknownSource when no installed component names
// url, before the lease is taken.
func (im *Importer) sourceInUse(ctx context.Context, url string) error {
	components, err := im.store.Components(ctx, store.LocalSite)
	if err != nil {
		return err
	}
	for _, comp := range components {
		if comp.SourceURL == url {
			return nil
		}
	}
	return ErrUnknownSource
}

// importLocked judges and writes the document while the lease is held: the
// source's stored state and rollback state are read under the lease, so no
// check writes between the judgement and the write.
func (im *Importer) importLocked(ctx context.Context, l lease.Lease, res *ImportResult, body []byte, signature string) (store.RunCounts, error) {
	var counts store.RunCounts
	jobs, err := im.plan(ctx)
	if err != nil {
		return counts, err
	}
	var j job
	for _, candidate := range jobs {
		if candidate.url == res.URL {
			j = candidate
		}
	}
	if j.url == "" {
		return counts, ErrUnknownSource
	}
	// The counts of the sites whose components the source serves.
	ctx, countSites := im.withCounts(ctx)
	defer countSites()
	countsDue(ctx, sitesOf(j.components)...)
	p := judge(j, answer{resp: fetch.Response{Body: body}, signature: signature}, l.Epoch)
	if p.failure.failed() {
		counts.Failed = 1
		res.Status, res.Kind, res.Args, res.Detail = ImportRefused, p.failure.kind, p.failure.args, p.failure.detail
		if res.Kind == "" {
			res.Kind = readmodel.ErrorOther
		}
		return counts, nil
	}
	if o := im.write(ctx, l, p); o.err != nil {
		return counts, o.err
	} else if o.kind == skipped {
		return counts, context.Cause(ctx)
	}
	counts.Fetched = 1
	res.Status, res.Components = ImportUnchanged, len(p.results)
	if p.newDocument {
		res.Status = Imported
	}
	if p.doc != nil {
		res.Sequence = p.doc.doc.Sequence
	}
	if im.notifier == nil {
		return counts, nil
	}
	return counts, im.lease.WithLease(ctx, l.Owner, func(tx *store.Tx) error { return im.notifier.QueueRunEnd(ctx, tx, l.Epoch) })
}
