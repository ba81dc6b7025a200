package store_test

import (
	"context"
	"fmt"
	"testing"
)

// Every refusal is recorded, and the history folds those that follow each
// other (same status, trigger and actor) into one entry that counts them
// and spans their times; anything between them, or another actor's click,
// starts a new entry. A run that completed with failing sources keeps its
// status and counts.
func TestRunsFoldRepeatedRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.exec(t, `INSERT INTO check_runs (trigger, actor, status, started_at, finished_at,
	                                  sources_fetched, sources_failed) VALUES
		('scheduled', 'cron',   'completed_with_failures', '2026-11-29T01:00:00Z', '2026-11-29T01:00:02Z', 3, 1),
		('manual',    'a@x',    'cooldown',  '2026-11-29T01:02:00Z', '2026-11-29T01:02:00Z', 0, 0),
		('manual',    'a@x',    'cooldown',  '2026-11-29T01:03:00Z', '2026-11-29T01:03:00Z', 0, 0),
		('manual',    'a@x',    'cooldown',  '2026-11-29T01:05:00Z', '2026-11-29T01:05:00Z', 0, 0),
		('manual',    'b@x',    'cooldown',  '2026-11-29T01:06:00Z', '2026-11-29T01:06:00Z', 0, 0),
		('manual',    'a@x',    'completed', '2026-11-29T01:10:00Z', '2026-11-29T01:10:01Z', 4, 0),
		('manual',    'a@x',    'cooldown',  '2026-11-29T01:11:00Z', '2026-11-29T01:11:00Z', 0, 0),
		('scheduled', 'cron',   'busy',      '2026-11-29T01:12:00Z', '2026-11-29T01:12:00Z', 0, 0),
		('scheduled', 'cron',   'busy',      '2026-11-29T01:13:00Z', '2026-11-29T01:13:00Z', 0, 0)`)
	runs, err := b.st.Runs(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, fmt.Sprintf("%s/%s/%s×%d %s–%s f%d", r.Status, r.Trigger, r.Actor, r.Repeats,
			r.FirstStartedAt.UTC().Format("15:04"), r.StartedAt.UTC().Format("15:04"), r.Failed))
	}
	want := fmt.Sprint([]string{
		"busy/scheduled/cron×2 01:12–01:13 f0",
		"cooldown/manual/a@x×1 01:11–01:11 f0",
		"completed/manual/a@x×1 01:10–01:10 f0",
		"cooldown/manual/b@x×1 01:06–01:06 f0",
		"cooldown/manual/a@x×3 01:02–01:05 f0",
		"completed_with_failures/scheduled/cron×1 01:00–01:00 f1",
	})
	if fmt.Sprint(got) != want {
		t.Fatalf("history\n got %v\nwant %s", got, want)
	}
	// The entry of a fold is its newest run's.
	var newest int64
	b.db.QueryRow(t, "SELECT max(id) FROM check_runs").Scan(&newest)
	if runs[0].ID != newest {
		t.Errorf("first entry's id %d, want the newest run's %d", runs[0].ID, newest)
	}

	// The limit counts entries, not runs.
	if top, err := b.st.Runs(context.Background(), 2); err != nil || len(top) != 2 || top[1].Status != "cooldown" {
		t.Fatalf("two entries = %+v, %v", top, err)
	}
}
