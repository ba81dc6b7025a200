package feedsync

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"syscall"

	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// failed records err as the feed's failure, unless it is the lease lost
// or the database gone (then nothing can be, and the next sync records
// this one as interrupted). A refused import (a file brought by hand that
// could not be read) is recorded in the history only, as a refused
// document import is: the feed did not fail, and Source health and
// /metrics keep saying what its last sync did.
func (s *Sync) failed(ctx context.Context, l lease.Lease, run *feedRun, res Result, err error) (Result, error) {
	if fatal(ctx, err) {
		return res, err
	}
	kind, args := s.failureKind(err)
	res.Status, res.Detail = readmodel.FeedSyncFailed, err.Error()
	res.Error = readmodel.FeedProblemSentence(string(kind), args)
	imported := run.file != ""
	if imported {
		s.logger.WarnContext(ctx, "feed import refused", "kind", run.kind, "file", run.file, "error", err)
	} else {
		s.logger.WarnContext(ctx, "feed sync failed", "kind", run.kind, "error", err)
	}
	f := store.FeedFailure{SyncID: run.id, Kind: string(kind), Args: args, Detail: err.Error(), Written: run.out.Written,
		Skipped: run.out.Skipped, SkippedCount: run.out.SkippedCount, HistoryOnly: imported}
	return res, s.fenced(ctx, l, func(tx *store.Tx) error { return tx.FeedFail(ctx, run.kind, f, l.Epoch) })
}

// fatal: the sync cannot go on nor record anything.
func fatal(ctx context.Context, err error) bool {
	return errors.Is(err, lease.ErrLeaseLost) || store.IsConnectionLost(err) || ctx.Err() != nil
}

// failureKind is the stored kind of a feed's failure and its arguments.
func (s *Sync) failureKind(err error) (readmodel.ErrorKind, readmodel.FailureArgs) {
	switch {
	case errors.Is(err, feed.ErrArchive):
		return readmodel.ErrorArchive, readmodel.FailureArgs{Problem: trimKnown(err, feed.ErrArchive)}
	case errors.Is(err, feed.ErrSchema):
		return readmodel.ErrorSchema, readmodel.FailureArgs{Problem: trimKnown(err, feed.ErrSchema)}
	case errors.Is(err, feed.ErrSpoolDir):
		return readmodel.ErrorFeedDir, readmodel.FailureArgs{Problem: systemReason(err)}
	}
	if tooMany, ok := errors.AsType[*apiTooManyError](err); ok {
		return readmodel.ErrorTooManyRecords, readmodel.TooManyRecordsArgs(tooMany.named, tooMany.max)
	}
	return s.host.FailureOf(err)
}

// systemReason is the system's own words for a local file's failure ("no
// space left on device", "not a directory"), without the path, which the
// sentence names by its setting.
func systemReason(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return pathErr.Err.Error()
	}
	return trimKnown(err, feed.ErrSpoolDir)
}

// trimKnown is err's own words after the sentinel's, for a sentence that
// already says those: up to the next ": ", after which a reader's message
// quotes a library's error (technical text, kept in the detail).
func trimKnown(err, sentinel error) string {
	text := err.Error()
	if i := strings.Index(text, sentinel.Error()); i >= 0 {
		text = strings.TrimLeft(text[i+len(sentinel.Error()):], ": ")
	}
	text, _, _ = strings.Cut(text, ": ")
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	return text
}
