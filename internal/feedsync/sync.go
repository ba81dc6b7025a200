// Package feedsync syncs the advisory feeds (OSV archive or API, KEV, EPSS;
// docs/feeds.md) into the store under the check's lease: batches, cursor,
// validators, and the components a changed advisory leaves pending for the
// check to evaluate again. The check (updatecheck) runs it through Sync and
// implements Host; this package never imports updatecheck.
package feedsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/localfile"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// Sync syncs the advisory feeds (docs/feeds.md) under the check's lease,
// with the guarantees of a job that can die at any moment:
//
//   - records are stored in batches (BatchSize), each one fenced
//     transaction that also marks the components the batch affects and
//     records them as pending for the feed;
//   - a record whose bytes hash as the stored ones is not written, and a
//     changed one writes only the package rows that differ;
//   - the feed's cursor, validators and last success move, and its
//     pending components are cleared, only once the sync completed and
//     their re-evaluation was written (FeedComplete); an interrupted sync
//     leaves all three where they were, so the next one fetches again,
//     finds what the interrupted one stored unchanged, and still
//     re-evaluates every pending component;
//   - results change only when a component is evaluated again (by the
//     Host, which owns evaluation);
//   - the next sync records an interrupted one (FeedBegin), and Source
//     health, the history and /metrics say so until a sync succeeds.
//
// The check holds a Sync (updatecheck.Checker.UseFeeds) and runs SyncDue
// under its own lease before it evaluates; the CLI runs RunLockedFeedSync
// and RunLockedFeedImport, which take the lease through the Host.
type Sync struct {
	store   *store.Store
	lease   *lease.Manager
	fetcher *fetch.Fetcher
	logger  *slog.Logger
	host    Host
	feeds   []feed.Feed
	// dir holds the archives being read (spooled there, never in memory).
	dir    string
	limits feed.Limits
	// period is how old a feed's last success may be before a check syncs
	// it again.
	period time.Duration
	// apiMax is the most records an osv-api sync fetches one by one
	// (maxAPIRecords; lower in tests).
	apiMax int
	// afterBatch, for tests, runs after each batch of records was stored.
	afterBatch func()
}

// Host is what the sync needs from the check that runs it: the check owns
// the lease's bookkeeping, evaluation, results and their notifications,
// and the words of a fetch's failure. updatecheck implements it; this
// package never imports updatecheck.
type Host interface {
	// HoldLease runs fn holding the lease as an import does (under its
	// heartbeat, given back at once after, no cooldown, no period
	// completed); ErrBusy when a check or another sync holds it.
	HoldLease(ctx context.Context, fn func(context.Context, lease.Lease) error) error
	// Reevaluate evaluates again, from their stored documents and what the
	// feeds know now, the components todo, and writes their results in
	// fenced transactions of l (queuing their notifications); it returns
	// how many results it wrote.
	Reevaluate(ctx context.Context, l lease.Lease, todo []store.Unevaluated) (int, error)
	// EvaluateTree evaluates again every installed package version of the
	// tree, when the tree or the feeds' version moved since it last did,
	// and writes its findings in one fenced transaction of l; it reports
	// whether it wrote.
	EvaluateTree(ctx context.Context, l lease.Lease) (bool, error)
	// FailureOf is the stored kind of a fetch's failure and its
	// arguments, as a source's failure is classified.
	FailureOf(err error) (readmodel.ErrorKind, readmodel.FailureArgs)
}

// Config is what New needs: the store and the lease the sync writes
// through (fenced by the lease's owner), the fetcher it reads with, and
// the Host that runs it.
type Config struct {
	Store   *store.Store
	Lease   *lease.Manager
	Fetcher *fetch.Fetcher
	Logger  *slog.Logger
	Host    Host
	// Feeds are the configured feeds (UPCHECK_FEEDS).
	Feeds []feed.Feed
	// Dir spools the archives ("" for the system's temporary directory).
	Dir string
}

// BatchSize is how many records one fenced transaction stores.
const BatchSize = 500

// Period is how often a check syncs each feed.
const Period = 24 * time.Hour

// New returns the sync of cfg's feeds.
func New(cfg Config) *Sync {
	return &Sync{store: cfg.Store, lease: cfg.Lease, fetcher: cfg.Fetcher, logger: cfg.Logger, host: cfg.Host, feeds: cfg.Feeds,
		dir: cfg.Dir, limits: feed.DefaultLimits(), period: Period, apiMax: maxAPIRecords}
}

// WithLimits sets the archive's limits (the tests' zip bombs).
func (s *Sync) WithLimits(l feed.Limits) *Sync { s.limits = l; return s }

// WithDir spools the archives under dir instead ("" for the system's
// temporary directory).
func (s *Sync) WithDir(dir string) *Sync { s.dir = dir; return s }

// WithAPIMax sets the most records an osv-api sync fetches one by one
// (the tests' small cap).
func (s *Sync) WithAPIMax(n int) *Sync { s.apiMax = n; return s }

// AfterBatch makes fn run after each batch of records was stored (tests
// interrupt a sync there); nil removes it.
func (s *Sync) AfterBatch(fn func()) { s.afterBatch = fn }

// Result is what one feed's sync did.
type Result struct {
	Kind   readmodel.FeedKind       `json:"kind"`
	Status readmodel.FeedSyncStatus `json:"status"`
	// Written, Unchanged and Skipped count records; Reevaluated the
	// components evaluated again.
	Written     int `json:"written"`
	Unchanged   int `json:"unchanged"`
	Skipped     int `json:"skipped"`
	Reevaluated int `json:"reevaluated"`
	// TreeEvaluated: the installed tree's findings were evaluated again.
	TreeEvaluated bool `json:"tree_evaluated,omitempty"`
	// Interrupted is the start of an earlier sync found interrupted.
	Interrupted *time.Time `json:"interrupted,omitempty"`
	// Error words a failure (readmodel.FeedProblemSentence), Detail is its
	// technical text.
	Error  string `json:"error,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// ErrNotConfigured: a sync or an import named a feed kind the
// settings do not configure and that cannot be imported without one.
var ErrNotConfigured = errors.New("no such feed is configured (UPCHECK_FEEDS)")

// ErrBusy: a check or another sync holds the lease.
var ErrBusy = errors.New("a check or another sync holds the lease: try again when it ends")

// RunLockedFeedSync syncs every configured feed now (`upcheck feed sync`),
// holding the lease as an import does: busy when a check holds it, no
// cooldown, and its release completes no period.
func (s *Sync) RunLockedFeedSync(ctx context.Context) ([]Result, error) {
	var out []Result
	err := s.locked(ctx, func(ctx context.Context, l lease.Lease) error {
		for _, fd := range s.feeds {
			res, err := s.sync(ctx, l, fd, "", "cli")
			out = append(out, res)
			if err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// RunLockedFeedImport brings a feed's file by hand (`upcheck feed import
// KIND FILE`, for sites without network): the same reading, caps, batches
// and bookkeeping as a fetch, from path.
func (s *Sync) RunLockedFeedImport(ctx context.Context, kind readmodel.FeedKind, path string) (Result, error) {
	fd := feed.Feed{Kind: kind, URL: "file:" + path}
	for _, f := range s.feeds {
		if f.Kind == kind {
			fd.URL = f.URL
		}
	}
	if kind == readmodel.FeedOSVAPI {
		return Result{Kind: kind}, errors.New("an osv-api feed is an API to query: import the OSV archive (kind osv) instead")
	}
	if !kind.Valid() {
		return Result{Kind: kind}, fmt.Errorf("unknown feed kind %q (one of osv, kev, epss)", kind)
	}
	// Opened once before the lease, without blocking: a named pipe or a
	// device is refused at once, in words, leaving the feed as it was.
	f, err := localfile.Open(path)
	if errors.Is(err, localfile.ErrNotRegular) {
		return Result{Kind: kind}, err
	}
	if err != nil {
		return Result{Kind: kind}, fmt.Errorf("read %s: %w", path, err)
	}
	_ = f.Close()
	var res Result
	err = s.locked(ctx, func(ctx context.Context, l lease.Lease) error {
		var err error
		res, err = s.sync(ctx, l, fd, path, "import")
		return err
	})
	return res, err
}

// locked runs fn holding the lease as an import (Host.HoldLease).
func (s *Sync) locked(ctx context.Context, fn func(context.Context, lease.Lease) error) error {
	return s.host.HoldLease(ctx, fn)
}

// SyncDue syncs the feeds whose last success is older than the period,
// for a check holding l. A feed's failure is recorded on the feed and
// does not fail the check; the lease lost or the database gone does.
func (s *Sync) SyncDue(ctx context.Context, l lease.Lease) error {
	kinds := make([]readmodel.FeedKind, len(s.feeds))
	for i, f := range s.feeds {
		kinds[i] = f.Kind
	}
	due, err := s.store.FeedsDue(ctx, kinds, s.period)
	if err != nil {
		return err
	}
	for _, fd := range s.feeds {
		for _, k := range due {
			if fd.Kind != k {
				continue
			}
			if _, err := s.sync(ctx, l, fd, "", "check"); err != nil {
				if fatal(ctx, err) {
					return err
				}
				// The feed could not even record its failure (a statement
				// ran out of time): the check goes on, and the next one
				// finds the sync interrupted.
				s.logger.WarnContext(ctx, "feed sync could not record its outcome", "kind", fd.Kind, "error", err)
			}
		}
	}
	return nil
}

// feedRun is one sync in progress: its feed, its row, what it did.
type feedRun struct {
	kind   readmodel.FeedKind
	fd     feed.Feed
	file   string // an imported file; "" to fetch
	epoch  int64
	id     int64
	stored store.Feed
	out    store.FeedOutcome
}

// skip lists a malformed record.
func (r *feedRun) skip(id, path, reason string) {
	r.out.SkippedCount++
	if len(r.out.Skipped) < readmodel.MaxSkippedListed {
		r.out.Skipped = append(r.out.Skipped, readmodel.SkippedRecord{ID: id, Path: path, Reason: reason})
	}
}

// sync runs one feed's sync under l. A returned error means the lease is
// lost or the database gone (nothing more can be recorded); every other
// failure is recorded on the feed and returned in the result.
func (s *Sync) sync(ctx context.Context, l lease.Lease, fd feed.Feed, file, trigger string) (Result, error) {
	kind := fd.Kind
	res := Result{Kind: kind}
	run := &feedRun{kind: kind, fd: fd, file: file, epoch: l.Epoch}
	err := s.fenced(ctx, l, func(tx *store.Tx) error {
		var err error
		run.id, res.Interrupted, err = tx.FeedBegin(ctx, kind, fd.URL, trigger, l.Epoch)
		return err
	})
	if err != nil {
		return res, err
	}
	if res.Interrupted != nil {
		s.logger.WarnContext(ctx, "feed sync was interrupted before it finished", "kind", kind, "started_at", res.Interrupted)
	}
	if run.stored, err = s.store.Feed(ctx, kind); err != nil {
		return res, err
	}
	run.out.SyncID, run.out.Records = run.id, -1
	run.out.ETag, run.out.LastModified, run.out.Cursor = run.stored.ETag, run.stored.LastModified, run.stored.Cursor
	switch kind {
	case readmodel.FeedOSV:
		err = s.syncArchive(ctx, l, run)
	case readmodel.FeedOSVAPI:
		err = s.syncAPI(ctx, l, run)
	case readmodel.FeedKEV:
		err = s.syncKEV(ctx, l, run)
	case readmodel.FeedEPSS:
		err = s.syncEPSS(ctx, l, run)
	default:
		err = fmt.Errorf("unknown feed kind %q", kind)
	}
	res.Written, res.Unchanged, res.Skipped = run.out.Written, run.out.Unchanged, run.out.SkippedCount
	if err != nil {
		return s.failed(ctx, l, run, res, err)
	}
	if res.Reevaluated, err = s.reevaluate(ctx, l, kind); err != nil {
		return s.failed(ctx, l, run, res, err)
	}
	// The tree is evaluated again when what is stored moved (an
	// interrupted sync leaves the last findings: the next one, or the
	// next check, finds the feeds' version moved and evaluates).
	if res.TreeEvaluated, err = s.host.EvaluateTree(ctx, l); err != nil {
		return s.failed(ctx, l, run, res, err)
	}
	if run.out.Status == "" {
		run.out.Status = readmodel.FeedSyncCompleted
	}
	res.Status = run.out.Status
	err = s.fenced(ctx, l, func(tx *store.Tx) error { return tx.FeedComplete(ctx, kind, run.out, l.Epoch) })
	if err == nil {
		s.logger.InfoContext(ctx, "feed synced", "kind", kind, "status", res.Status, "written", res.Written,
			"unchanged", res.Unchanged, "skipped", res.Skipped, "reevaluated", res.Reevaluated)
	}
	return res, err
}

// fenced runs fn in one fenced transaction of l.
func (s *Sync) fenced(ctx context.Context, l lease.Lease, fn func(*store.Tx) error) error {
	return s.lease.WithLease(ctx, l.Owner, fn)
}

// reevaluate has the Host evaluate again the components kind's batches
// recorded as pending, and write their results (fenced); it returns how
// many it wrote. The pending rows stay until the sync completes
// (FeedComplete clears them).
func (s *Sync) reevaluate(ctx context.Context, l lease.Lease, kind readmodel.FeedKind) (int, error) {
	todo, err := s.store.IntelPending(ctx, kind)
	if err != nil || len(todo) == 0 {
		return 0, err
	}
	return s.host.Reevaluate(ctx, l, todo)
}

// storeRecords writes one batch of records in one fenced transaction,
// marking the components of the packages they change as pending.
func (s *Sync) storeRecords(ctx context.Context, l lease.Lease, run *feedRun, recs []store.OSVRecord) error {
	if len(recs) == 0 {
		return nil
	}
	written := 0
	err := s.fenced(ctx, l, func(tx *store.Tx) error {
		pkgs, n, err := tx.OSVStore(ctx, run.kind, recs, l.Epoch)
		if written = n; err != nil || len(pkgs) == 0 {
			return err
		}
		v, err := tx.IntelBump(ctx)
		if err != nil {
			return err
		}
		_, err = tx.IntelMarkPackages(ctx, run.kind, pkgs, v)
		return err
	})
	if err != nil {
		return err
	}
	// A record older than the stored one (an old file imported) is kept
	// as stored: it counts as unchanged.
	run.out.Written += written
	run.out.Unchanged += len(recs) - written
	run.out.Changed = run.out.Changed || written > 0
	if s.afterBatch != nil {
		s.afterBatch()
	}
	return nil
}
