package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// The advisory feeds' tables (migrations/00009_feeds.sql, docs/feeds.md).
// Every write here is meant for a fenced transaction of the lease holder.

// Feed is one feed's stored position: where its next sync starts.
type Feed struct {
	Kind, URL          string
	ETag, LastModified string
	Cursor             string // "" never synced
}

// Feed reads one feed's row; ErrNotFound before its first sync.
func (e *Executor) Feed(ctx context.Context, kind readmodel.FeedKind) (Feed, error) {
	r, err := e.q.FeedGet(ctx, e.dbtx, string(kind))
	if errors.Is(err, pgx.ErrNoRows) {
		return Feed{}, ErrNotFound
	}
	if err != nil {
		return Feed{}, mapError(err)
	}
	return Feed{Kind: r.Kind, URL: r.Url, ETag: deref(r.Etag), LastModified: deref(r.LastModified), Cursor: deref(r.Cursor)}, nil
}

// FeedBegin records the start of a sync of kind from url and returns its
// id; interrupted is the start of an earlier sync of the feed that never
// finished (now recorded as interrupted), nil when none.
func (t *Tx) FeedBegin(ctx context.Context, kind readmodel.FeedKind, url, trigger string, epoch int64) (id int64, interrupted *time.Time, err error) {
	r, err := t.q.FeedBegin(ctx, t.tx, db.FeedBeginParams{Kind: string(kind), Url: url, Trigger: trigger, Epoch: epoch})
	if err != nil {
		return 0, nil, mapError(err)
	}
	return r.ID, timeOf(r.InterruptedStartedAt), nil
}

// FeedOutcome is what a completed sync moves the feed to.
type FeedOutcome struct {
	SyncID             int64
	Status             readmodel.FeedSyncStatus // completed or not_modified
	ETag, LastModified string
	Cursor             string
	Changed            bool // something stored changed
	Records            int  // what the feed holds now; -1 unknown (kept)
	Written, Unchanged int
	Skipped            []readmodel.SkippedRecord
	SkippedCount       int
}

// FeedComplete records a completed sync: cursor, validators and last
// success move and the feed's pending components are cleared. Call it only
// once their re-evaluation was written.
func (t *Tx) FeedComplete(ctx context.Context, kind readmodel.FeedKind, o FeedOutcome, epoch int64) error {
	skipped, err := skippedJSON(o.Skipped)
	if err != nil {
		return err
	}
	return mapError(t.q.FeedComplete(ctx, t.tx, db.FeedCompleteParams{
		Kind: string(kind), SyncID: o.SyncID, Status: string(o.Status), Etag: ref(o.ETag), LastModified: ref(o.LastModified),
		Cursor: ref(o.Cursor), Changed: o.Changed, Records: int32(o.Records), Written: int32(o.Written),
		Unchanged: int32(o.Unchanged), Skipped: skipped, SkippedCount: int32(o.SkippedCount), Epoch: epoch,
	}))
}

// FeedFailure is why a sync stopped: the kind the pages word, its
// arguments, the technical text, and what it had done.
type FeedFailure struct {
	SyncID       int64
	Kind, Detail string
	Args         readmodel.FailureArgs
	Written      int
	Skipped      []readmodel.SkippedRecord
	SkippedCount int
	// HistoryOnly: a refused import, recorded in the history alone; the
	// feed's last error, failures and skipped records stay.
	HistoryOnly bool
}

// FeedFail records a failed sync; the cursor, validators, last success and
// pending components stay.
func (t *Tx) FeedFail(ctx context.Context, kind readmodel.FeedKind, f FeedFailure, epoch int64) error {
	skipped, err := skippedJSON(f.Skipped)
	if err != nil {
		return err
	}
	args, err := failureArgsJSON(f.Args)
	if err != nil {
		return err
	}
	return mapError(t.q.FeedFail(ctx, t.tx, db.FeedFailParams{
		Kind: string(kind), SyncID: f.SyncID, Error: f.Detail, ErrorKind: f.Kind, ErrorArgs: args,
		Written: int32(f.Written), Skipped: skipped, SkippedCount: int32(f.SkippedCount), Epoch: epoch, OnFeed: !f.HistoryOnly,
	}))
}

func skippedJSON(s []readmodel.SkippedRecord) ([]byte, error) {
	if len(s) > readmodel.MaxSkippedListed {
		s = s[:readmodel.MaxSkippedListed]
	}
	if s == nil {
		s = []readmodel.SkippedRecord{}
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode the skipped records: %w", err)
	}
	return b, nil
}

// FeedsDue returns those of kinds whose last success is older than period
// (or that never succeeded), on the database clock.
func (e *Executor) FeedsDue(ctx context.Context, kinds []readmodel.FeedKind, period time.Duration) ([]readmodel.FeedKind, error) {
	ks := make([]string, len(kinds))
	for i, k := range kinds {
		ks[i] = string(k)
	}
	rows, err := e.q.FeedsDue(ctx, e.dbtx, db.FeedsDueParams{Kinds: ks, Period: pgtype.Interval{Microseconds: period.Microseconds(), Valid: true}})
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]readmodel.FeedKind, len(rows))
	for i, k := range rows {
		out[i] = readmodel.FeedKind(k)
	}
	return out, nil
}

// Feeds lists every feed that has synced at least once, as Source health
// shows it.
func (e *Executor) Feeds(ctx context.Context) ([]readmodel.FeedRow, error) {
	rows, err := e.q.FeedList(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]readmodel.FeedRow, len(rows))
	for i, r := range rows {
		f := readmodel.FeedRow{Kind: readmodel.FeedKind(r.Kind), URL: r.Url, Records: int(r.Records),
			LastSuccessAt: utc(r.LastSuccessAt), LastChangeAt: utc(r.LastChangeAt), LastAttemptAt: utc(r.LastAttemptAt),
			LastError: deref(r.LastError), LastErrorKind: deref(r.LastErrorKind), LastErrorArgs: storedFailureArgs(r.LastErrorArgs),
			ConsecutiveFailures: int(r.ConsecutiveFailures), InterruptedAt: utc(r.InterruptedAt),
			SkippedCount: int(r.SkippedCount), Stale: r.Stale, Failing: r.Failing}
		if err := json.Unmarshal(r.Skipped, &f.Skipped); err != nil {
			return nil, fmt.Errorf("decode the skipped records of feed %s: %w", r.Kind, err)
		}
		out[i] = f
	}
	return out, nil
}

// FeedSyncs lists the latest n syncs, newest first.
func (e *Executor) FeedSyncs(ctx context.Context, n int) ([]readmodel.FeedSyncRow, error) {
	rows, err := e.q.FeedSyncList(ctx, e.dbtx, int32(n))
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]readmodel.FeedSyncRow, len(rows))
	for i, r := range rows {
		out[i] = readmodel.FeedSyncRow{ID: r.ID, Kind: readmodel.FeedKind(r.Kind), Trigger: r.Trigger, StartedAt: r.StartedAt.UTC(),
			FinishedAt: utc(r.FinishedAt), Status: readmodel.FeedSyncStatus(r.Status), Written: int(r.Written),
			Unchanged: int(r.Unchanged), Skipped: int(r.Skipped), Error: deref(r.Error)}
	}
	return out, nil
}

// OSVStoredHashes returns the stored sha256 of those of ids that are stored.
func (e *Executor) OSVStoredHashes(ctx context.Context, ids []string) (map[string][]byte, error) {
	rows, err := e.q.OSVStoredHashes(ctx, e.dbtx, ids)
	if err != nil {
		return nil, mapError(err)
	}
	out := make(map[string][]byte, len(rows))
	for _, r := range rows {
		out[r.ID] = r.Hash
	}
	return out, nil
}

// OSVRecord is one record to store, with what matching reads of it.
type OSVRecord struct {
	ID        string
	Hash      []byte
	Body      []byte
	Modified  time.Time
	Withdrawn *time.Time
	Keys      []string // upper-cased id and aliases
	Malicious bool
	Packages  []OSVPackage
}

// OSVPackage is one package a record names.
type OSVPackage struct{ Ecosystem, Name string }

// OSVStore writes records (only those whose bytes changed and that are
// not older than the stored ones) and their package rows (only the rows
// that differ), and returns the packages the written records name, old and
// new (the caller marks their components in the same transaction), and how
// many it wrote.
func (t *Tx) OSVStore(ctx context.Context, feed readmodel.FeedKind, recs []OSVRecord, epoch int64) (pkgs []OSVPackage, written int, err error) {
	if len(recs) == 0 {
		return nil, 0, nil
	}
	params := make([]db.OSVRecordUpsertParams, len(recs))
	var p db.OSVPackagesSyncParams
	for i, r := range recs {
		params[i] = db.OSVRecordUpsertParams{ID: r.ID, Hash: r.Hash, Record: r.Body, Modified: r.Modified, Withdrawn: r.Withdrawn,
			Keys: orNoStrings(r.Keys), Malicious: r.Malicious, Feed: string(feed), Epoch: epoch}
	}
	var firstErr error
	keep := make([]bool, len(recs))
	t.q.OSVRecordUpsert(ctx, t.tx, params).QueryRow(func(i int, _ string, err error) {
		switch {
		case err == nil:
			keep[i] = true
		case errors.Is(err, pgx.ErrNoRows): // older than the stored record
		case firstErr == nil:
			firstErr = err
		}
	})
	if firstErr != nil {
		return nil, 0, mapError(fmt.Errorf("store OSV records: %w", firstErr))
	}
	p = db.OSVPackagesSyncParams{}
	for i, r := range recs {
		if !keep[i] {
			continue
		}
		written++
		p.RecordIds = append(p.RecordIds, r.ID)
		for _, pk := range r.Packages {
			p.Ids, p.Ecosystems, p.Names = append(p.Ids, r.ID), append(p.Ecosystems, pk.Ecosystem), append(p.Names, pk.Name)
		}
	}
	if written == 0 {
		return nil, 0, nil
	}
	p.Ids, p.Ecosystems, p.Names = orNoStrings(p.Ids), orNoStrings(p.Ecosystems), orNoStrings(p.Names)
	rows, err := t.q.OSVPackagesSync(ctx, t.tx, p)
	if err != nil {
		return nil, 0, mapError(fmt.Errorf("store the packages of OSV records: %w", err))
	}
	pkgs = make([]OSVPackage, len(rows))
	for i, r := range rows {
		pkgs[i] = OSVPackage{Ecosystem: r.Ecosystem, Name: r.Name}
	}
	return pkgs, written, nil
}

// IntelBump moves the version of the feeds' advisories and returns it.
func (t *Tx) IntelBump(ctx context.Context) (int64, error) {
	v, err := t.q.IntelBump(ctx, t.tx)
	return v, mapError(err)
}

// IntelVersion is the version of the feeds' advisories now.
func (e *Executor) IntelVersion(ctx context.Context) (int64, error) {
	v, err := e.q.IntelVersion(ctx, e.dbtx)
	return v, mapError(err)
}

// IntelVersionNow returns the feeds' version with the database's clock.
func (e *Executor) IntelVersionNow(ctx context.Context) (int64, time.Time, error) {
	r, err := e.q.IntelVersionNow(ctx, e.dbtx)
	return r.Version, r.Now, mapError(err)
}

// IntelMarkPackages records the components that are one of pkgs as
// pending for feed, marked with version.
func (t *Tx) IntelMarkPackages(ctx context.Context, feed readmodel.FeedKind, pkgs []OSVPackage, version int64) (int64, error) {
	byEco := map[string][]string{}
	for _, p := range pkgs {
		byEco[p.Ecosystem] = append(byEco[p.Ecosystem], p.Name)
	}
	var n int64
	for eco, names := range byEco {
		m, err := t.q.IntelMarkPackages(ctx, t.tx, db.IntelMarkPackagesParams{Feed: string(feed), Packages: names, Ecosystem: eco, Version: version})
		if err != nil {
			return n, mapError(err)
		}
		n += m
	}
	return n, nil
}

// IntelMarkByKeys records the components whose current result lists an
// advisory with one of keys (upper-cased ids or aliases) as pending for
// feed, marked with version.
func (t *Tx) IntelMarkByKeys(ctx context.Context, feed readmodel.FeedKind, keys []string, version int64) (int64, error) {
	n, err := t.q.IntelMarkByKeys(ctx, t.tx, db.IntelMarkByKeysParams{Feed: string(feed), Keys: orNoStrings(keys), Version: version})
	return n, mapError(err)
}

// IntelPending lists the components feed's sync must still re-evaluate
// that have a stored document to be evaluated from (the others are
// evaluated when their source is first read), ordered by source.
func (e *Executor) IntelPending(ctx context.Context, feed readmodel.FeedKind) ([]Unevaluated, error) {
	rows, err := e.q.IntelPending(ctx, e.dbtx, string(feed))
	if err != nil {
		return nil, mapError(err)
	}
	var out []Unevaluated
	for _, r := range rows {
		if r.InstalledVersion == nil || !r.HasDocument {
			continue // no longer installed, or nothing to evaluate it from yet
		}
		out = append(out, Unevaluated{Site: r.SiteID, Code: r.Code, InstalledVersion: *r.InstalledVersion, SourceURL: r.SourceUrl,
			PinnedKey: deref(r.PinnedKey), Package: r.Package, Policy: r.Policy, Skipped: r.SkippedVersion, Approvals: r.Approvals})
	}
	return out, nil
}

// OSVForPackages returns the stored records naming each of names in
// ecosystem, by name.
func (e *Executor) OSVForPackages(ctx context.Context, ecosystem string, names []string) (map[string][][]byte, error) {
	rows, err := e.q.OSVForPackages(ctx, e.dbtx, db.OSVForPackagesParams{Ecosystem: ecosystem, Names: orNoStrings(names)})
	if err != nil {
		return nil, mapError(err)
	}
	out := make(map[string][][]byte)
	for _, r := range rows {
		out[r.Name] = append(out[r.Name], r.Record)
	}
	return out, nil
}

// OSVCount is how many records are stored.
func (e *Executor) OSVCount(ctx context.Context) (int, error) {
	n, err := e.q.OSVCount(ctx, e.dbtx)
	return int(n), mapError(err)
}

// OSVStoredModified returns the stored "modified" time of those of ids
// that are stored.
func (e *Executor) OSVStoredModified(ctx context.Context, ids []string) (map[string]time.Time, error) {
	rows, err := e.q.OSVStoredModified(ctx, e.dbtx, ids)
	if err != nil {
		return nil, mapError(err)
	}
	out := make(map[string]time.Time, len(rows))
	for _, r := range rows {
		out[r.ID] = r.Modified
	}
	return out, nil
}

// OSVLastModified is the newest "modified" time among the records feed
// stored; nil when none.
func (e *Executor) OSVLastModified(ctx context.Context, feed readmodel.FeedKind) (*time.Time, error) {
	v, err := e.q.OSVLastModified(ctx, e.dbtx, string(feed))
	if err != nil {
		return nil, mapError(err)
	}
	return timeOf(v), nil
}
