package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/store"
)

// fencedWrites compares one source's write (the source row and its three
// results) through WithLease with the same writes in a plain transaction,
// interleaved so both see the same machine.
func fencedWrites(ctx context.Context, url string) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	st := store.New(pool)
	lm, err := lease.New(st, lease.DefaultTimings())
	if err != nil {
		return err
	}
	acq, err := lm.Acquire(ctx, lease.Operator)
	if err != nil || acq.Outcome != lease.Acquired {
		return fmt.Errorf("acquire for the write benchmark: %v %v", acq.Outcome, err)
	}
	defer lm.Release(ctx, acq.Lease.Owner, false)
	w, err := newSourceWriter(ctx, st, acq.Lease.Epoch)
	if err != nil {
		return err
	}
	var fenced, plain []time.Duration
	for i := range writeIters * 2 {
		start := time.Now()
		if i%2 == 0 {
			err = lm.WithLease(ctx, acq.Lease.Owner, func(tx *store.Tx) error { _, err := w.write(ctx, tx, i); return err })
			fenced = append(fenced, time.Since(start))
		} else {
			err = st.WithTx(ctx, func(tx *store.Tx) error { _, err := w.write(ctx, tx, i); return err })
			plain = append(plain, time.Since(start))
		}
		if err != nil {
			return fmt.Errorf("write benchmark: %w", err)
		}
	}
	f, p := median(fenced), median(plain)
	report("write_fenced_p50", f.Seconds()*1000, "ms", "", nil)
	report("write_plain_p50", p.Seconds()*1000, "ms", "", nil)
	r := f.Seconds() / p.Seconds()
	report("write_fenced_ratio", r, "fenced/plain", "<= 1.10", yes(r <= 1.10))
	return nil
}

// sourceWriter rewrites stored sources and their results as a check does.
type sourceWriter struct {
	urls   []string
	byURL  map[string][]store.Component
	hashes map[string][]byte
	core   string
	epoch  int64
}

func newSourceWriter(ctx context.Context, st *store.Store, epoch int64) (*sourceWriter, error) {
	comps, err := st.Components(ctx)
	if err != nil {
		return nil, err
	}
	sources, err := st.Sources(ctx)
	if err != nil {
		return nil, err
	}
	w := &sourceWriter{byURL: map[string][]store.Component{}, hashes: map[string][]byte{}, epoch: epoch}
	for _, c := range comps {
		if c.Code == "core" {
			w.core = c.InstalledVersion
		}
		if c.SourceURL != "" {
			if w.byURL[c.SourceURL] == nil {
				w.urls = append(w.urls, c.SourceURL)
			}
			w.byURL[c.SourceURL] = append(w.byURL[c.SourceURL], c)
		}
	}
	for _, s := range sources {
		w.hashes[s.URL] = s.DocumentHash
	}
	return w, nil
}

// write saves the i-th source as unchanged and rewrites its results; it
// returns the codes written.
func (w *sourceWriter) write(ctx context.Context, tx *store.Tx, i int) ([]string, error) {
	u := w.urls[i%len(w.urls)]
	if _, err := tx.SourceSaveUnchanged(ctx, u, "", "", w.epoch); err != nil {
		return nil, err
	}
	results := make([]store.Result, 0, len(w.byURL[u]))
	for _, c := range w.byURL[u] {
		// What the bench's documents say of every plugin: an update to
		// 1.1.0, a security release for the first of each source, an
		// advisory fixed in 1.1.0.
		r := store.Result{Code: c.Code, SourceURL: u, InstalledVersion: c.InstalledVersion,
			CoreVersion: w.core, DocumentHash: w.hashes[u], Epoch: w.epoch,
			LatestVersion: "1.1.0", UpdateVersion: "1.1.0", UpdateAvailable: true,
			AdvisoryIDs: []string{"A-" + strings.TrimPrefix(c.Code, "p")},
			Advisories:  []byte(`[{"id": "A-` + strings.TrimPrefix(c.Code, "p") + `", "affected": "<1.1.0", "fixed_in": "1.1.0", "no_fix": false}]`),
			Evaluation:  []byte("{}")}
		if strings.HasSuffix(c.Code, "-0") {
			r.Security, r.SecurityVersion = true, "1.1.0"
		}
		results = append(results, r)
	}
	written, err := tx.ResultWrite(ctx, results)
	if err == nil && len(written) != len(results) {
		err = fmt.Errorf("wrote %d of %d results", len(written), len(results))
	}
	return written, err
}
