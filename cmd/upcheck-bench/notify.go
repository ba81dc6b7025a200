package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// notifications measures what notifications cost the check and how fast
// they go out: a source's fenced write (one pipelined batch) with and
// without asking whether it calls for new events, when nothing new is to be queued (the common case: every event
// was queued by an earlier check), and the deliveries per second of a
// webhook channel created with every outstanding event to send, to a
// receiver on loopback.
func notifications(ctx context.Context, url string) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	st := store.New(pool)
	quiet := slog.New(slog.DiscardHandler)
	lm, err := lease.New(st, lease.DefaultTimings(), lease.WithLogger(quiet))
	if err != nil {
		return err
	}
	f := fetch.New(fetch.Config{AllowPrivate: true}, quiet)
	defer f.Close()
	n, err := notify.New(pool, st, f, notify.Timings{Delivery: time.Minute, Backoff: time.Second}, quiet)
	if err != nil {
		return err
	}
	var received atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	acq, err := lm.Acquire(ctx, lease.Operator)
	if err != nil || acq.Outcome != lease.Acquired {
		return fmt.Errorf("acquire for the notification benchmark: %v %v", acq.Outcome, err)
	}
	w, err := newSourceWriter(ctx, st, acq.Lease.Epoch)
	if err != nil {
		return err
	}
	// Every source written once, so that its results say what the queueing
	// write will find.
	for i := range w.urls {
		if err := lm.WithLease(ctx, acq.Lease.Owner, func(tx *store.Tx) error { _, err := w.write(ctx, tx, i); return err }); err != nil {
			return err
		}
	}
	created, err := n.AddChannel(ctx, store.NewChannel{Name: "bench", Kind: string(readmodel.ChannelWebhook), Target: receiver.URL, Events: string(readmodel.ChannelEventsAll)})
	if err != nil {
		return err
	}
	if err := queueingWrites(ctx, lm, w, acq.Lease.Owner); err != nil {
		return err
	}
	if _, err := lm.Release(ctx, acq.Lease.Owner, false); err != nil {
		return err
	}
	return deliveryRate(ctx, n, &received, created.Queued)
}

// queueingWrites times the sources' writes as a check sends them
// (updatecheck.sendFenced): the source's batch behind the fence, with or
// without the question "any event not queued yet?", which fails the batch
// (store.ErrEventsToQueue) when there is one; every other write asks.
func queueingWrites(ctx context.Context, lm *lease.Manager, w *sourceWriter, owner uuid.UUID) error {
	var plain, queued []time.Duration
	for i := range writeIters * 2 {
		start := time.Now()
		err := w.send(i, func(b *store.Batch) error {
			if i%2 == 0 {
				u := w.urls[i%len(w.urls)]
				codes := make([]string, len(w.byURL[u]))
				for j, c := range w.byURL[u] {
					codes[j] = c.Code
				}
				b.EventPlanNothingNew(codes)
			}
			return lm.SendFenced(ctx, owner, b)
		})
		if err != nil {
			return fmt.Errorf("notification benchmark: %w", err)
		}
		if i%2 == 0 {
			queued = append(queued, time.Since(start))
		} else {
			plain = append(plain, time.Since(start))
		}
	}
	q, p := median(queued), median(plain)
	report("write_queue_p50", q.Seconds()*1000, "ms", "", nil)
	r := q.Seconds() / p.Seconds()
	report("write_queue_ratio", r, "queue/none", "<= 1.05", yes(r <= 1.05))
	return nil
}

// deliveryRate starts the deliveries and times them until the receiver
// has counted every queued event.
func deliveryRate(ctx context.Context, n *notify.Service, received *atomic.Int64, queued int) error {
	start := time.Now()
	if err := n.Start(ctx); err != nil {
		return err
	}
	for received.Load() < int64(queued) {
		if time.Since(start) > 2*time.Minute {
			return fmt.Errorf("%d of %d events delivered in 2 minutes", received.Load(), queued)
		}
		time.Sleep(10 * time.Millisecond)
	}
	elapsed := time.Since(start)
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := n.Stop(sctx); err != nil {
		return err
	}
	report("deliveries", float64(queued), "events", "", nil)
	report("deliveries_rate", float64(queued)/elapsed.Seconds(), "events/s", "", nil)
	return nil
}
