package feedsync

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/localfile"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// The caps on the catalogues: KEV's JSON is a few megabytes, EPSS's daily
// file some 10 MB uncompressed.
const (
	maxKEV  = 64 << 20
	maxEPSS = 256 << 20
)

// read gives fn the feed's file: the imported one, or the download
// (conditionally; a 304 leaves fn uncalled, says so and makes the sync's
// status not_modified).
func (s *Sync) read(ctx context.Context, run *feedRun, max int64, fn func(io.Reader) error) (notModified bool, err error) {
	if run.file != "" {
		f, err := localfile.Open(run.file)
		if err != nil {
			return false, err
		}
		defer f.Close()
		return false, fn(f)
	}
	resp, err := s.fetcher.Fetch(ctx, fetch.Request{URL: run.fd.URL, ETag: run.stored.ETag, LastModified: run.stored.LastModified,
		MaxBody: max, Consume: fn})
	if err != nil {
		return false, err
	}
	if resp.NotModified {
		run.out.Status = readmodel.FeedSyncNotModified
		return true, nil
	}
	run.out.ETag, run.out.LastModified = resp.ETag, resp.LastModified
	return false, nil
}

// syncKEV replaces the stored catalogue in one fenced transaction, writing
// only the entries that differ, and marks the components whose advisories
// name a CVE added, removed or changed.
func (s *Sync) syncKEV(ctx context.Context, l lease.Lease, run *feedRun) error {
	var cat *feed.KEVCatalog
	notModified, err := s.read(ctx, run, maxKEV, func(r io.Reader) error {
		var skipped []feed.Skipped
		var err error
		cat, skipped, err = feed.ReadKEV(r, maxKEV)
		for _, k := range skipped {
			run.skip(k.ID, k.Path, k.Reason)
		}
		return err
	})
	if err != nil || notModified {
		return err
	}
	if err := enoughEntries(len(cat.Entries), run.out.SkippedCount); err != nil {
		return err
	}
	entries := make([]store.KEVEntry, 0, len(cat.Entries))
	for _, e := range cat.Entries {
		k := store.KEVEntry{CVE: strings.ToUpper(e.CVE), Vendor: e.Vendor, Product: e.Product, Name: e.Name,
			DateAdded: e.DateAdded, RequiredAction: e.RequiredAction, Ransomware: e.Ransomware}
		if !e.DueDate.IsZero() {
			due := e.DueDate
			k.DueDate = &due
		}
		entries = append(entries, k)
	}
	known, err := s.store.IntelKnownCVEs(ctx)
	if err != nil {
		return err
	}
	err = s.fenced(ctx, l, func(tx *store.Tx) error {
		changed, err := tx.KEVReplace(ctx, entries, l.Epoch)
		if err != nil {
			return err
		}
		return s.markChanged(ctx, tx, run, changed, known)
	})
	if err != nil {
		return err
	}
	run.out.Records, run.out.Cursor = len(entries), cat.Version
	return nil
}

// syncEPSS brings the stored scores to the day's file in one fenced
// transaction, writing only the scores that differ, and marks the
// components whose advisories name a CVE whose score changed.
func (s *Sync) syncEPSS(ctx context.Context, l lease.Lease, run *feedRun) error {
	// Every score is kept, so that an advisory named for the first time
	// has its score at its first evaluation (a channel's EPSS threshold
	// judges it then); only the CVEs the stored advisories name can
	// concern a component, so only those are marked (markChanged).
	known, err := s.store.IntelKnownCVEs(ctx)
	if err != nil {
		return err
	}
	var scores []store.EPSSScore
	var header feed.EPSSHeader
	rows := 0
	notModified, err := s.read(ctx, run, maxEPSS, func(r io.Reader) error {
		scores, rows = scores[:0], 0 // a retried download starts again
		seen := map[string]bool{}
		h, skipped, err := feed.ReadEPSS(r, maxEPSS, func(e feed.EPSSScore) error {
			rows++
			cve := strings.ToUpper(e.CVE)
			if !seen[cve] { // a CVE listed twice keeps its first score
				seen[cve] = true
				scores = append(scores, store.EPSSScore{CVE: cve, Score: float32(e.EPSS), Percentile: float32(e.Percentile)})
			}
			return nil
		})
		header = h
		for _, k := range skipped {
			run.skip(k.ID, k.Path, k.Reason)
		}
		return err
	})
	if err != nil || notModified {
		return err
	}
	if err := enoughEntries(rows, run.out.SkippedCount); err != nil {
		return err
	}
	next := 0
	err = s.fenced(ctx, l, func(tx *store.Tx) error {
		next = 0
		changed, err := tx.EPSSReplace(ctx, func() (store.EPSSScore, bool, error) {
			if next == len(scores) {
				return store.EPSSScore{}, false, nil
			}
			next++
			return scores[next-1], true, nil
		})
		if err != nil {
			return err
		}
		return s.markChanged(ctx, tx, run, changed, known)
	})
	if err != nil {
		return err
	}
	run.out.Records = rows
	if !header.ScoreDate.IsZero() {
		run.out.Cursor = header.ScoreDate.UTC().Format(time.DateOnly)
	}
	return nil
}

// enoughEntries refuses a catalogue in which no entry, or fewer entries
// than were skipped, could be read: a file of another shape (another
// JSON with a "vulnerabilities" array, a truncated CSV) would otherwise
// replace the stored catalogue with nothing.
func enoughEntries(valid, skipped int) error {
	switch {
	case valid == 0:
		return fmt.Errorf("%w: no entry could be read (%d skipped)", feed.ErrSchema, skipped)
	case skipped > valid:
		return fmt.Errorf("%w: %d entries could not be read, more than the %d that could", feed.ErrSchema, skipped, valid)
	}
	return nil
}

// markChanged marks, in tx, the components the changed CVEs may concern
// (IntelMarkByKeys), with a new version of the feeds. Only the CVEs the
// stored advisories name (known, read before tx) can concern one, so only
// those are asked about: a catalogue changes thousands of entries a day.
func (s *Sync) markChanged(ctx context.Context, tx *store.Tx, run *feedRun, changed []string, known map[string]bool) error {
	if len(changed) == 0 {
		return nil
	}
	run.out.Changed = true
	run.out.Written += len(changed)
	v, err := tx.IntelBump(ctx)
	if err != nil {
		return err
	}
	var concern []string
	for _, cve := range changed {
		if known[cve] {
			concern = append(concern, cve)
		}
	}
	if len(concern) == 0 {
		return nil
	}
	_, err = tx.IntelMarkByKeys(ctx, run.kind, concern, v)
	return err
}
