package store_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/migrations"
)

// Migration 00022 on a database where events were failed because their
// channel was disabled (and so never sent): they are held, pending again,
// and the release of an enabled channel returns them for a new job each;
// an event that failed for another reason stays failed.
func TestMigration00022HoldsEventsFailedByADisabledChannel(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	sqlDB := stdlib.OpenDBFromPool(b.db.Pool)
	defer sqlDB.Close()
	provider, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := provider.DownTo(ctx, 21); err != nil {
		t.Fatal(err)
	}
	lost, refused := uuid.New(), uuid.New()
	b.exec(t, `INSERT INTO notification_channels (id, name, kind, target, events) VALUES (1, 'ops', 'webhook', 'https://hooks.example/x', 'all')`)
	b.exec(t, `INSERT INTO notification_events (id, channel_id, key, type, payload, state, attempts, last_error, last_attempt_at) VALUES
		('`+lost.String()+`', 1, 'test:a', 'test', '{}', 'failed', 1, 'the channel is disabled', clock_timestamp()),
		('`+refused.String()+`', 1, 'test:b', 'test', '{}', 'failed', 8, 'the receiver answered 500 Internal Server Error', clock_timestamp())`)
	if _, err := provider.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if n := b.count(t, `SELECT count(*) FROM notification_events WHERE id = '`+lost.String()+`'
		AND state = 'pending' AND held_at IS NOT NULL AND last_error IS NULL AND attempts = 0`); n != 1 {
		t.Fatal("the event failed by a disabled channel is not held")
	}
	if n := b.count(t, `SELECT count(*) FROM notification_events WHERE id = '`+refused.String()+`' AND state = 'failed' AND held_at IS NULL`); n != 1 {
		t.Fatal("an event that failed for another reason changed")
	}
	var released []uuid.UUID
	if err := b.st.WithTx(ctx, func(tx *store.Tx) error {
		var err error
		released, err = tx.EventReleaseHeld(ctx, 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(released) != 1 || released[0] != lost {
		t.Fatalf("released %v, want the held event %s", released, lost)
	}
	if _, err := provider.DownTo(ctx, 21); err != nil {
		t.Fatal(err)
	}
	if _, err := provider.Up(ctx); err != nil {
		t.Fatal(err)
	}
}
