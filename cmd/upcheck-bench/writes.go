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
// results), each written the fastest way: one pipelined batch behind the
// fence (lease.SendFenced, as a check writes) against the same batch sent
// without it. Interleaved, so both see the same machine. The same writes
// in transactions (WithLease, store.WithTx: a round trip per statement)
// are reported for comparison.
func fencedWrites(ctx context.Context, url string) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	st := store.New(pool)
	lm, acq, err := acquireForWrites(ctx, st)
	if err != nil {
		return err
	}
	defer lm.Release(ctx, acq.Lease.Owner, false)
	w, err := newSourceWriter(ctx, st, acq.Lease.Epoch)
	if err != nil {
		return err
	}
	var fenced, plain, fencedTx, plainTx []time.Duration
	for i := range writeIters * 4 {
		start := time.Now()
		switch i % 4 {
		case 0:
			err = w.send(i, func(b *store.Batch) error { return lm.SendFenced(ctx, acq.Lease.Owner, b) })
			fenced = append(fenced, time.Since(start))
		case 1:
			err = w.send(i, func(b *store.Batch) error { return st.SendBatch(ctx, b) })
			plain = append(plain, time.Since(start))
		case 2:
			err = lm.WithLease(ctx, acq.Lease.Owner, func(tx *store.Tx) error { _, err := w.write(ctx, tx, i); return err })
			fencedTx = append(fencedTx, time.Since(start))
		default:
			err = st.WithTx(ctx, func(tx *store.Tx) error { _, err := w.write(ctx, tx, i); return err })
			plainTx = append(plainTx, time.Since(start))
		}
		if err != nil {
			return fmt.Errorf("write benchmark: %w", err)
		}
	}
	f, p := median(fenced), median(plain)
	report("write_fenced_p50", f.Seconds()*1000, "ms", "", nil)
	report("write_plain_p50", p.Seconds()*1000, "ms", "", nil)
	report("write_tx_fenced_p50", median(fencedTx).Seconds()*1000, "ms", "", nil)
	report("write_tx_plain_p50", median(plainTx).Seconds()*1000, "ms", "", nil)
	r := f.Seconds() / p.Seconds()
	report("write_fenced_ratio", r, "fenced/plain", "<= 1.05", yes(r <= 1.05))
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
	comps, err := st.Components(ctx, store.LocalSite)
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

// send writes what write does, as one pipelined batch sent by sendFn, and
// checks that every result was written.
func (w *sourceWriter) send(i int, sendFn func(*store.Batch) error) error {
	b, written := w.batch(i)
	if err := sendFn(b); err != nil {
		return err
	}
	if n := len(w.byURL[w.urls[i%len(w.urls)]]); len(*written) != n {
		return fmt.Errorf("wrote %d of %d results", len(*written), n)
	}
	return nil
}

// batch is write's statements in a batch; written gets the codes written
// once it is sent.
func (w *sourceWriter) batch(i int) (*store.Batch, *[]store.ComponentKey) {
	u := w.urls[i%len(w.urls)]
	var b store.Batch
	written := new([]store.ComponentKey)
	b.SourceSaveUnchanged(store.Unchanged{URL: u, Epoch: w.epoch}, nil)
	b.ResultWrite(w.results(u), written)
	return &b, written
}

// write saves the i-th source as unchanged and rewrites its results; it
// returns the codes written.
func (w *sourceWriter) write(ctx context.Context, tx *store.Tx, i int) ([]store.ComponentKey, error) {
	u := w.urls[i%len(w.urls)]
	if _, err := tx.SourceSaveUnchanged(ctx, store.Unchanged{URL: u, Epoch: w.epoch}); err != nil {
		return nil, err
	}
	results := w.results(u)
	written, err := tx.ResultWrite(ctx, results)
	if err == nil && len(written) != len(results) {
		err = fmt.Errorf("wrote %d of %d results", len(written), len(results))
	}
	return written, err
}

// results are the i-th source's results as the bench's documents make them.
func (w *sourceWriter) results(u string) []store.Result {
	results := make([]store.Result, 0, len(w.byURL[u]))
	for _, c := range w.byURL[u] {
		// What the bench's documents say of every plugin: an update to
		// 1.1.0, a security release for the first of each source, an
		// advisory fixed in 1.1.0.
		r := store.Result{Site: c.Site, Code: c.Code, SourceURL: u, InstalledVersion: c.InstalledVersion,
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
	return results
}

// sourceWrites measures the cost of one source's write as a check sends
// it: the source's row, its five results and the notifications' question
// (EventPlanNothingNew), one pipelined batch behind the fence, one source
// after the other on one connection, so that nothing waits for the lock.
// A fenced write holds the lease's lock from its fence to the end of its
// commit, so this is also how long each source held the lock when a check
// wrote one source a commit. Beside it, interleaved: the same batch on a
// connection with synchronous_commit off (what is left without the
// commit's wait for its WAL to reach the disk: the statements), and
// groupSources sources in one batch, as a check writes the sources that
// waited for the lock (per source).
func sourceWrites(ctx context.Context, url string) error {
	const group = 16
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	nosync, err := noSyncPool(ctx, url)
	if err != nil {
		return err
	}
	defer nosync.Close()
	st := store.New(pool)
	lmNosync, err := lease.New(store.New(nosync), lease.DefaultTimings())
	if err != nil {
		return err
	}
	lm, acq, err := acquireForWrites(ctx, st)
	if err != nil {
		return err
	}
	defer lm.Release(ctx, acq.Lease.Owner, false)
	w, err := newSourceWriter(ctx, st, acq.Lease.Epoch)
	if err != nil {
		return err
	}
	var one, oneNosync, grouped, groupedNosync []time.Duration
	for i := range writeIters * 4 {
		n := 1
		if i%4 >= 2 {
			n = group
		}
		b, check := w.groupBatch(i*group, n)
		start := time.Now()
		switch i % 4 {
		case 0:
			err = lm.SendFenced(ctx, acq.Lease.Owner, b)
			one = append(one, time.Since(start))
		case 1:
			err = lmNosync.SendFenced(ctx, acq.Lease.Owner, b)
			oneNosync = append(oneNosync, time.Since(start))
		case 2:
			err = lm.SendFenced(ctx, acq.Lease.Owner, b)
			grouped = append(grouped, time.Since(start)/group)
		default:
			err = lmNosync.SendFenced(ctx, acq.Lease.Owner, b)
			groupedNosync = append(groupedNosync, time.Since(start)/group)
		}
		if err != nil {
			return fmt.Errorf("source write benchmark: %w", err)
		}
		if err := check(); err != nil {
			return err
		}
	}
	report("write_source_p50", median(one).Seconds()*1000, "ms", "", nil)
	report("write_source_nosync_p50", median(oneNosync).Seconds()*1000, "ms", "", nil)
	report("write_source_grouped_p50", median(grouped).Seconds()*1000, "ms/source", "", nil)
	report("write_source_grouped_nosync_p50", median(groupedNosync).Seconds()*1000, "ms/source", "", nil)
	return nil
}

// noSyncPool is a pool on url whose connections commit with
// synchronous_commit off.
func noSyncPool(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	return pgxpool.NewWithConfig(ctx, cfg)
}

// groupBatch is the writes of n sources from the from-th, with the
// notifications' one question for them all, as a check sends them; check
// says, once the batch is sent, whether every result was written.
func (w *sourceWriter) groupBatch(from, n int) (b *store.Batch, check func() error) {
	b = &store.Batch{}
	var checks []func() error
	var codes []string
	for k := range n {
		at := from + k
		written, c := w.add(b, at)
		codes = append(codes, c...)
		want := len(w.byURL[w.urls[at%len(w.urls)]])
		checks = append(checks, func() error {
			if len(*written) != want {
				return fmt.Errorf("wrote %d of %d results", len(*written), want)
			}
			return nil
		})
	}
	b.EventPlanNothingNew(codes) // one question for the batch, as a check asks it
	return b, func() error {
		for _, c := range checks {
			if err := c(); err != nil {
				return err
			}
		}
		return nil
	}
}

// add puts the i-th source's write into b as a check sends it (as unchanged:
// a 304); the codes written arrive in the slice returned once b is sent.
// It returns the codes of the results, for the notifications' question.
func (w *sourceWriter) add(b *store.Batch, i int) (*[]store.ComponentKey, []string) {
	u := w.urls[i%len(w.urls)]
	written := new([]store.ComponentKey)
	b.SourceSaveUnchanged(store.Unchanged{URL: u, Epoch: w.epoch}, nil)
	results := w.results(u)
	b.ResultWrite(results, written)
	codes := make([]string, len(results))
	for k, r := range results {
		codes[k] = r.Code
	}
	return written, codes
}

// acquireForWrites takes the check's lease on st for a write benchmark,
// which writes under it as a check does; the caller releases it.
func acquireForWrites(ctx context.Context, st *store.Store) (*lease.Manager, lease.Acquisition, error) {
	lm, err := lease.New(st, lease.DefaultTimings())
	if err != nil {
		return nil, lease.Acquisition{}, err
	}
	acq, err := lm.Acquire(ctx, lease.Operator)
	if err != nil || acq.Outcome != lease.Acquired {
		return nil, lease.Acquisition{}, fmt.Errorf("acquire for the write benchmark: %v %v", acq.Outcome, err)
	}
	return lm, acq, nil
}
