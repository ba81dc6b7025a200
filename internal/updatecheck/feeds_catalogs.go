package updatecheck

import (
	"context"
	"io"
	"os"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
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
// (conditionally; a 304 leaves fn uncalled and says so).
func (s *Feeds) read(ctx context.Context, run *feedRun, max int64, fn func(io.Reader) error) (notModified bool, err error) {
	if run.file != "" {
		f, err := os.Open(run.file)
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
		return true, nil
	}
	run.out.ETag, run.out.LastModified = resp.ETag, resp.LastModified
	return false, nil
}

// syncKEV replaces the stored catalogue in one fenced transaction, writing
// only the entries that differ, and marks the components whose advisories
// name a CVE added, removed or changed.
func (s *Feeds) syncKEV(ctx context.Context, l lease.Lease, run *feedRun) error {
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
		if notModified {
			run.out.Status = readmodel.FeedSyncNotModified
		}
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
	err = s.fenced(ctx, l, func(tx *store.Tx) error {
		changed, err := tx.KEVReplace(ctx, entries, l.Epoch)
		if err != nil {
			return err
		}
		return s.markChanged(ctx, tx, run, changed)
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
func (s *Feeds) syncEPSS(ctx context.Context, l lease.Lease, run *feedRun) error {
	var scores []store.EPSSScore
	var header feed.EPSSHeader
	notModified, err := s.read(ctx, run, maxEPSS, func(r io.Reader) error {
		scores = scores[:0] // a retried download starts again
		h, skipped, err := feed.ReadEPSS(r, maxEPSS, func(e feed.EPSSScore) error {
			scores = append(scores, store.EPSSScore{CVE: strings.ToUpper(e.CVE), Score: float32(e.EPSS), Percentile: float32(e.Percentile)})
			return nil
		})
		header = h
		for _, k := range skipped {
			run.skip(k.ID, k.Path, k.Reason)
		}
		return err
	})
	if err != nil || notModified {
		if notModified {
			run.out.Status = readmodel.FeedSyncNotModified
		}
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
		return s.markChanged(ctx, tx, run, changed)
	})
	if err != nil {
		return err
	}
	run.out.Records = len(scores)
	if !header.ScoreDate.IsZero() {
		run.out.Cursor = header.ScoreDate.UTC().Format(time.DateOnly)
	}
	return nil
}

// markChanged marks, in tx, the components whose current results name one
// of the changed CVEs, with a new version of the feeds.
func (s *Feeds) markChanged(ctx context.Context, tx *store.Tx, run *feedRun, changed []string) error {
	if len(changed) == 0 {
		return nil
	}
	run.out.Changed = true
	run.out.Written += len(changed)
	v, err := tx.IntelBump(ctx)
	if err != nil {
		return err
	}
	_, err = tx.IntelMarkByKeys(ctx, run.kind, changed, v)
	return err
}
