package store_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// A failure's arguments are stored as values (last_error_args, a JSON
// object of readmodel.FailureArgs), never as a formatted text: what the
// check and the feed sync write is what the pages read back, the
// interrupted sync's start included, and a refused sequence of 0 stays 0.
func TestFailureArgsAreStoredAsValues(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	url := "http://127.0.0.1:9/feed.json"
	b.exec(t, `INSERT INTO feeds (kind, url, epoch) VALUES ('osv', 'http://127.0.0.1:9/all.zip', 1)`)
	b.exec(t, `INSERT INTO feed_syncs (kind, trigger, started_at, status, epoch) VALUES ('osv', 'check', '2026-12-01T03:00:00.25Z', 'running', 1)`)
	err := b.st.WithTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.SourceSaveFailure(ctx, url, store.SourceFailure{Kind: string(readmodel.ErrorRollback), Detail: "rolled back",
			Args: readmodel.RollbackArgs(0, 7)}, 1); err != nil {
			return err
		}
		_, _, err := tx.FeedBegin(ctx, readmodel.FeedOSV, "http://127.0.0.1:9/all.zip", "check", 1)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var typ string
	var stored []byte
	b.db.QueryRow(t, `SELECT jsonb_typeof(last_error_args), last_error_args FROM sources WHERE url = $1`, url).Scan(&typ, &stored)
	var args readmodel.FailureArgs
	if err := json.Unmarshal(stored, &args); err != nil || typ != "object" || !reflect.DeepEqual(args, readmodel.RollbackArgs(0, 7)) {
		t.Errorf("stored source args %s (%s): %+v, %v; want RollbackArgs(0, 7) as an object", stored, typ, args, err)
	}
	started := time.Date(2026, 12, 1, 3, 0, 0, 250e6, time.UTC)
	feed := func() readmodel.FeedRow {
		t.Helper()
		rows, err := b.st.Feeds(ctx)
		if err != nil || len(rows) != 1 {
			t.Fatalf("feeds %+v, %v", rows, err)
		}
		return rows[0]
	}
	if f := feed(); f.LastErrorKind != string(readmodel.ErrorInterrupted) || f.LastErrorArgs.StartedAt == nil || !f.LastErrorArgs.StartedAt.Equal(started) {
		t.Errorf("interrupted feed %s %+v, want started at %v", f.LastErrorKind, f.LastErrorArgs, started)
	}
	err = b.st.WithTx(ctx, func(tx *store.Tx) error {
		return tx.FeedFail(ctx, readmodel.FeedOSV, store.FeedFailure{Kind: string(readmodel.ErrorTooManyRecords), Detail: "too many",
			Args: readmodel.TooManyRecordsArgs(12000, 10000)}, 1)
	})
	if err != nil {
		t.Fatal(err)
	}
	if f := feed(); f.LastErrorKind != string(readmodel.ErrorTooManyRecords) || f.LastErrorArgs != readmodel.TooManyRecordsArgs(12000, 10000) {
		t.Errorf("failed feed %s %+v, want TooManyRecordsArgs(12000, 10000)", f.LastErrorKind, f.LastErrorArgs)
	}
}
