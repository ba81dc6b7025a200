package housekeeping

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

type countingPurger struct {
	mu    sync.Mutex
	calls int
}

func (p *countingPurger) Purge(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	return nil
}

// Old history goes, recent history and the newest run that ran stay, and
// several instances running at once delete each row once.
func TestRunPurgesPastRetention(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	d.MustExec(t, `INSERT INTO check_runs (trigger, status, started_at, finished_at) VALUES
		('scheduled', 'completed', clock_timestamp() - interval '200 days', clock_timestamp() - interval '200 days'),
		('scheduled', 'completed', clock_timestamp() - interval '100 days', clock_timestamp() - interval '100 days'),
		('manual', 'cooldown', clock_timestamp() - interval '95 days', clock_timestamp() - interval '95 days'),
		('scheduled', 'completed', clock_timestamp() - interval '10 days', clock_timestamp() - interval '10 days')`)
	d.MustExec(t, `INSERT INTO audit_log (action, at) VALUES
		('advisory.dismiss', clock_timestamp() - interval '400 days'),
		('advisory.dismiss', clock_timestamp() - interval '300 days')`)
	p := &countingPurger{}
	task := New(store.New(d.Pool), p, slog.Default())

	var wg sync.WaitGroup
	reports := make(chan Report, 4)
	for range 4 {
		wg.Go(func() {
			rep, err := task.Run(context.Background())
			if err != nil {
				t.Error(err)
			}
			reports <- rep
		})
	}
	wg.Wait()
	close(reports)
	var runs, audit int64
	for rep := range reports {
		runs += rep.CheckRuns
		audit += rep.AuditRows
	}
	if runs != 3 || audit != 1 || p.calls != 4 {
		t.Fatalf("deleted %d runs and %d audit rows in all (want 3 and 1), auth purged %d times (want 4)", runs, audit, p.calls)
	}
	var left int
	d.QueryRow(t, "SELECT count(*) FROM check_runs WHERE started_at > clock_timestamp() - interval '11 days'").Scan(&left)
	if left != 1 {
		t.Fatalf("%d recent runs left, want 1", left)
	}
}

// The newest run that ran is kept however old it is: the summary's last
// check must not become "never".
func TestRunKeepsTheNewestRun(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	d.MustExec(t, `INSERT INTO check_runs (trigger, status, started_at, finished_at) VALUES
		('scheduled', 'completed', clock_timestamp() - interval '300 days', clock_timestamp() - interval '300 days'),
		('scheduled', 'lease_lost', clock_timestamp() - interval '200 days', clock_timestamp() - interval '200 days'),
		('manual', 'busy', clock_timestamp() - interval '150 days', clock_timestamp() - interval '150 days')`)
	task := New(store.New(d.Pool), &countingPurger{}, slog.Default())
	if _, err := task.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var status string
	d.QueryRow(t, "SELECT string_agg(status, ',') FROM check_runs").Scan(&status)
	if status != "lease_lost" {
		t.Fatalf("runs left: %q, want the newest run that ran (lease_lost)", status)
	}
}

// Feed syncs go after the check runs' retention, but each feed's newest
// and one still running (its interruption is recorded by the next sync)
// stay.
func TestRunPurgesFeedSyncs(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	d.MustExec(t, `INSERT INTO feed_syncs (kind, trigger, status, started_at, epoch) VALUES
		('osv', 'check', 'running', clock_timestamp() - interval '300 days', 1),
		('osv', 'check', 'completed', clock_timestamp() - interval '200 days', 1),
		('osv', 'check', 'failed', clock_timestamp() - interval '100 days', 1),
		('kev', 'check', 'completed', clock_timestamp() - interval '150 days', 1),
		('epss', 'check', 'completed', clock_timestamp() - interval '200 days', 1),
		('epss', 'check', 'completed', clock_timestamp() - interval '1 day', 1)`)
	rep, err := New(store.New(d.Pool), &countingPurger{}, slog.Default()).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var left string
	d.QueryRow(t, "SELECT string_agg(kind || ':' || status, ',' ORDER BY id) FROM feed_syncs").Scan(&left)
	if want := "osv:running,osv:failed,kev:completed,epss:completed"; left != want || rep.FeedSyncs != 2 {
		t.Errorf("feed syncs left %q (%d purged), want %q (2 purged)", left, rep.FeedSyncs, want)
	}
}

// The tree's history loses the versions removed before the retention, on
// the database's clock, by default 400 days and otherwise as configured;
// a version still installed is kept however long ago it was installed.
func TestRunPurgesTheTreeHistory(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	// Written by hand: the lockfile sync stamps intervals with the
	// database's now, and these ended hundreds of days ago.
	d.MustExec(t, `INSERT INTO tree_versions (name, version, installed_at, removed_at) VALUES
		('debug', '4.4.0', clock_timestamp() - interval '900 days', clock_timestamp() - interval '401 days'),
		('debug', '4.4.1', clock_timestamp() - interval '900 days', clock_timestamp() - interval '399 days'),
		('debug', '4.4.2', clock_timestamp() - interval '900 days', clock_timestamp() - interval '31 days'),
		('debug', '4.4.3', clock_timestamp() - interval '900 days', NULL)`)
	left := func() (versions string) {
		d.QueryRow(t, `SELECT string_agg(version, ',' ORDER BY version) FROM tree_versions`).Scan(&versions)
		return versions
	}
	rep, err := New(store.New(d.Pool), &countingPurger{}, slog.Default()).Run(context.Background())
	if err != nil || rep.TreeVersions != 1 || left() != "4.4.1,4.4.2,4.4.3" {
		t.Fatalf("default retention: %+v, %v, left %s; want 4.4.0 gone", rep, err, left())
	}
	rep, err = New(store.New(d.Pool), &countingPurger{}, slog.Default(), WithTreeHistory(30*24*time.Hour)).Run(context.Background())
	if err != nil || rep.TreeVersions != 2 || left() != "4.4.3" {
		t.Fatalf("30 days: %+v, %v, left %s; want only the installed 4.4.3", rep, err, left())
	}
}
