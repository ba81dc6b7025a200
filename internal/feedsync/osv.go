package feedsync

// maxDelta is the most records a delta (modified_id.csv) fetches one by
// one; past it the whole archive is read instead.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/osv"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

const maxDelta = 1000

// deltaOverlap is how far before the cursor a delta reads again.
const deltaOverlap = 48 * time.Hour

// maxModifiedList caps modified_id.csv (npm's lists some 200,000 ids).
const maxModifiedList = 64 << 20

// syncArchive syncs an OSV archive: a delta from modified_id.csv when the
// server has one beside the archive and the feed synced before, else the
// whole archive, downloaded to a file (conditionally) and read twice:
// once to hash every record, so that an archive that cannot be read is
// known before anything is stored, then to store the records whose bytes
// changed.
func (s *Sync) syncArchive(ctx context.Context, l lease.Lease, run *feedRun) error {
	path := run.file
	if path == "" {
		if done, err := s.syncDelta(ctx, l, run); done || err != nil {
			return err
		}
		var err error
		if path, err = s.download(ctx, run); path == "" || err != nil {
			return err
		}
		defer os.Remove(path)
	}
	a, err := feed.OpenArchive(path, s.limits)
	if err != nil {
		return err
	}
	defer a.Close()
	changed, err := s.changedRecords(ctx, run, a)
	if err != nil {
		return err
	}
	if err := s.storeChanged(ctx, l, run, a, changed); err != nil {
		return err
	}
	return s.archiveCursor(ctx, run)
}

// download spools the archive to a file (conditionally: "" when it is not
// modified since the stored validators) once the killed syncs' leftovers
// are swept; the caller removes the file.
func (s *Sync) download(ctx context.Context, run *feedRun) (string, error) {
	s.sweepSpool(ctx)
	dl, err := feed.Spool(ctx, s.fetcher, fetch.Request{URL: run.fd.URL, ETag: run.stored.ETag,
		LastModified: run.stored.LastModified, MaxBody: s.limits.MaxArchive}, s.dir)
	if err != nil {
		return "", err
	}
	if dl.NotModified {
		run.out.Status = readmodel.FeedSyncNotModified
		return "", nil
	}
	run.out.ETag, run.out.LastModified = dl.ETag, dl.LastModified
	return dl.Path, nil
}

// changedRecords is the archive's first pass: every record hashed and
// compared with the stored hash, a batch at a time; it returns the
// indexes of the records whose bytes changed, and counts the unchanged
// and skips the too large.
func (s *Sync) changedRecords(ctx context.Context, run *feedRun, a *feed.Archive) ([]int, error) {
	var changed []int
	var scanned []feed.Entry
	compare := func() error {
		ids := make([]string, len(scanned))
		for i, e := range scanned {
			ids[i] = recordID(e.Name)
		}
		stored, err := s.store.OSVStoredHashes(ctx, ids)
		if err != nil {
			return err
		}
		for i, e := range scanned {
			switch h, ok := stored[ids[i]]; {
			case e.TooLarge:
				run.skip(ids[i], "", fmt.Sprintf("the record has %d bytes, more than the %d upcheck reads", e.Size, s.limits.MaxRecord))
			case ok && bytes.Equal(h, e.Hash[:]):
				run.out.Unchanged++
			default:
				changed = append(changed, e.Index)
			}
		}
		scanned = scanned[:0]
		return nil
	}
	err := a.Scan(func(e feed.Entry) error {
		if scanned = append(scanned, e); len(scanned) == BatchSize {
			return compare()
		}
		return nil
	})
	if err == nil {
		err = compare()
	}
	return changed, err
}

// storeChanged is the archive's second pass: the changed records, parsed
// and stored in batches.
func (s *Sync) storeChanged(ctx context.Context, l lease.Lease, run *feedRun, a *feed.Archive, changed []int) error {
	var batch []store.OSVRecord
	err := a.Read(changed, func(e feed.Entry, data []byte) error {
		rec, ok := s.parseRecord(run, recordID(e.Name), data)
		if !ok {
			return nil
		}
		if batch = append(batch, rec); len(batch) == BatchSize {
			err := s.storeRecords(ctx, l, run, batch)
			batch = batch[:0]
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.storeRecords(ctx, l, run, batch)
}

// spoolPattern names the files feed.Spool downloads archives to.
const spoolPattern = "upcheck-feed-*.download"

// spoolDead is how long a spooled file must have gone unwritten to be a
// dead process's: an attempt of a live download writes as it goes or ends
// within feed.DefaultSpoolTimeout, and the next attempt truncates the
// file again.
const spoolDead = 2 * feed.DefaultSpoolTimeout

// sweepSpool removes the archives that syncs killed while downloading
// left in the spool directory (a SIGKILL or an OOM kill runs no clean-up,
// and each may leave up to the archive's cap behind). Only files unwritten
// for spoolDead go: the directory may be shared (the system's temporary
// directory, another site on the same host), and a live download writes.
// A file that cannot be removed is left, and said in the log.
func (s *Sync) sweepSpool(ctx context.Context) {
	dir := s.dir
	if dir == "" {
		dir = os.TempDir()
	}
	matches, err := filepath.Glob(filepath.Join(dir, spoolPattern))
	if err != nil {
		return
	}
	for _, m := range matches {
		fi, err := os.Lstat(m)
		if err != nil || !fi.Mode().IsRegular() || time.Since(fi.ModTime()) < spoolDead {
			continue
		}
		if err := os.Remove(m); err != nil {
			s.logger.WarnContext(ctx, "could not remove an archive a killed feed sync left", "path", m, "error", err)
			continue
		}
		s.logger.InfoContext(ctx, "removed an archive a killed feed sync left", "path", m, "bytes", fi.Size())
	}
}

// archiveCursor sets the cursor a delta starts from: the newest modified
// time stored, and how many records the feed holds.
func (s *Sync) archiveCursor(ctx context.Context, run *feedRun) error {
	last, err := s.store.OSVLastModified(ctx, run.kind)
	if err != nil {
		return err
	}
	if last != nil {
		// A record dated in the future would hold every delta back.
		at := last.UTC()
		if now := time.Now().UTC(); at.After(now) {
			at = now
		}
		run.out.Cursor = at.Format(time.RFC3339Nano)
	}
	n, err := s.store.OSVCount(ctx)
	run.out.Records = n
	return err
}

// syncDelta reads the records modified since the cursor one by one, from
// the modified_id.csv beside the archive; done is false when there is no
// such list, no cursor yet, or more changes than a delta takes (then the
// whole archive is read).
func (s *Sync) syncDelta(ctx context.Context, l lease.Lease, run *feedRun) (done bool, err error) {
	ids, ok, err := s.modifiedSince(ctx, run)
	if !ok || err != nil {
		return false, err
	}
	if len(ids) == 0 {
		run.out.Status = readmodel.FeedSyncNotModified
		return true, s.archiveCursor(ctx, run)
	}
	listed := make([]string, len(ids))
	for i, m := range ids {
		listed[i] = m.ID
	}
	stored, err := s.store.OSVStoredHashes(ctx, listed) // one query, not one a record
	if err != nil {
		return false, err
	}
	var batch []store.OSVRecord
	for _, m := range ids {
		body, ok, err := s.fetchRecord(ctx, run, m.ID)
		if err != nil {
			return false, err
		}
		if !ok {
			continue
		}
		if h := osv.Hash(body); bytes.Equal(stored[m.ID], h[:]) {
			run.out.Unchanged++
			continue
		}
		rec, ok := s.parseRecord(run, m.ID, body)
		if !ok {
			continue
		}
		if batch = append(batch, rec); len(batch) == BatchSize {
			if err := s.storeRecords(ctx, l, run, batch); err != nil {
				return false, err
			}
			batch = batch[:0]
		}
	}
	if err := s.storeRecords(ctx, l, run, batch); err != nil {
		return false, err
	}
	if run.out.Written == 0 && run.out.SkippedCount == 0 {
		run.out.Status = readmodel.FeedSyncNotModified // what it read again was unchanged
	}
	return true, s.archiveCursor(ctx, run)
}

// modifiedSince reads the modified_id.csv beside the archive: the records
// modified since the cursor, less deltaOverlap. ok is false when a delta
// cannot be had: no cursor yet (or not a time), no list beside the
// archive, or more changes than a delta takes.
func (s *Sync) modifiedSince(ctx context.Context, run *feedRun) (ids []feed.Modified, ok bool, err error) {
	if run.stored.Cursor == "" {
		return nil, false, nil
	}
	since, err := time.Parse(time.RFC3339Nano, run.stored.Cursor)
	if err != nil {
		return nil, false, nil // not a time: read the whole archive
	}
	// A record can reach the list after newer ones (its modified time is
	// its database's): the records of the last deltaOverlap are read
	// again, and those unchanged cost a hash.
	since = since.Add(-deltaOverlap)
	listURL, err := feed.SiblingURL(run.fd.URL, "modified_id.csv")
	if err != nil {
		return nil, false, nil
	}
	var tooMany bool
	_, err = s.fetcher.Fetch(ctx, fetch.Request{URL: listURL, MaxBody: maxModifiedList, Consume: func(r io.Reader) error {
		var err error
		ids, tooMany, err = feed.ReadModifiedIDs(r, since, maxDelta)
		return err
	}})
	var status *fetch.StatusError
	switch {
	case errors.As(err, &status):
		return nil, false, nil // no list beside the archive
	case err != nil:
		return nil, false, err
	case tooMany:
		return nil, false, nil
	}
	return ids, true, nil
}

// fetchRecord fetches one record a delta lists, beside the archive; ok is
// false (and the record skipped) when it is too large, or gone from the
// server though listed.
func (s *Sync) fetchRecord(ctx context.Context, run *feedRun, id string) (body []byte, ok bool, err error) {
	recURL, err := feed.SiblingURL(run.fd.URL, id+".json")
	if err != nil {
		return nil, false, err
	}
	resp, err := s.fetcher.Fetch(ctx, fetch.Request{URL: recURL, MaxBody: s.limits.MaxRecord})
	var status *fetch.StatusError
	switch {
	case errors.Is(err, fetch.ErrTooLarge):
		run.skip(id, "", fmt.Sprintf("the record is larger than the %d bytes upcheck reads", s.limits.MaxRecord))
		return nil, false, nil
	case errors.As(err, &status) && (status.Code == http.StatusNotFound || status.Code == http.StatusGone):
		run.skip(id, "", fmt.Sprintf("modified_id.csv lists it, but the server answered %d for it", status.Code))
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return resp.Body, true, nil
}

// parseRecord reads one record; a malformed one is listed as skipped
// (its id and the JSON path of the problem) and never stops the others.
func (s *Sync) parseRecord(run *feedRun, id string, data []byte) (store.OSVRecord, bool) {
	r, err := osv.Parse(data)
	if err != nil {
		path, reason := splitPath(err)
		run.skip(id, path, reason)
		return store.OSVRecord{}, false
	}
	if id != "" && r.ID != id {
		run.skip(id, "id", fmt.Sprintf("the record's id %q is not the one it is filed under", r.ID))
		return store.OSVRecord{}, false
	}
	h := osv.Hash(data)
	rec := store.OSVRecord{ID: r.ID, Hash: h[:], Body: data, Modified: r.Modified, Keys: osv.AdvisoryKeys(r.ID, r.Aliases),
		Malicious: r.Malicious()}
	if r.IsWithdrawn() {
		w := r.Withdrawn
		rec.Withdrawn = &w
	}
	for _, p := range r.Packages() {
		rec.Packages = append(rec.Packages, store.OSVPackage{Ecosystem: p.Ecosystem, Name: p.Name})
	}
	return rec, true
}

// splitPath separates a malformed record's JSON path from the reason
// (osv.Parse says "malformed OSV record: PATH: reason").
func splitPath(err error) (path, reason string) {
	text := strings.TrimPrefix(err.Error(), osv.ErrMalformed.Error()+": ")
	if p, rest, ok := strings.Cut(text, ": "); ok && !strings.ContainsAny(p, " \"") {
		return p, rest
	}
	return "", text
}

// recordID is the id an archive entry is filed under ("ID.json").
func recordID(name string) string {
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	return strings.TrimSuffix(name, ".json")
}
