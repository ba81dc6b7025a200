package notify_test

import (
	"context"
	"errors"
	"testing"

	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/store"
)

// A check's pipelined write asks whether its results call for an event not
// queued yet (store.Batch.EventPlanNothingNew) and plans only when so. The
// question must never say "nothing" while planning would queue something:
// with every event queued it says nothing; with any one event planning
// makes missing, it says so; without an enabled channel it says nothing.
func TestNothingNewAsksWhatPlanningQueues(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.DefaultTimings())
	b.site()
	b.check()
	ctx := context.Background()
	codes := []string{"core", "blog", "gallery", "forms"}
	ask := func() error {
		var batch store.Batch
		batch.EventPlanNothingNew(codes)
		return b.store.SendBatch(ctx, &batch)
	}
	if err := ask(); err != nil {
		t.Fatalf("no channel: %v, want nothing to queue", err)
	}
	for _, events := range []string{"all", "security"} {
		if _, err := b.notify.AddChannel(ctx, store.NewChannel{Name: events, Kind: "webhook", Target: "http://127.0.0.1:1/hook", Events: events}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ask(); err != nil {
		t.Fatalf("every event queued: %v, want nothing to queue", err)
	}
	queued := b.events()
	if len(queued) < 5 { // three facts for "all", two for "security"
		t.Fatalf("events = %v", queued)
	}
	for key := range queued {
		b.db.MustExec(t, "DELETE FROM notification_events WHERE channel_id || ' ' || key = $1", key)
		if err := ask(); !errors.Is(err, store.ErrEventsToQueue) {
			t.Fatalf("event %q missing: %v, want store.ErrEventsToQueue", key, err)
		}
		var n int
		err := b.store.WithTx(ctx, func(tx *store.Tx) error {
			var err error
			n, err = b.notify.Queue(ctx, tx, codes, 0, 0)
			return err
		})
		if err != nil || n != 1 {
			t.Fatalf("planning again queued %d events (%v), want the one missing", n, err)
		}
		if err := ask(); err != nil {
			t.Fatalf("event %q queued again: %v, want nothing to queue", key, err)
		}
	}
	b.db.MustExec(t, "DELETE FROM notification_events")
	b.db.MustExec(t, "UPDATE notification_channels SET enabled = false")
	if err := ask(); err != nil {
		t.Fatalf("no enabled channel: %v, want nothing to queue", err)
	}
}
