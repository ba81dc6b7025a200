// Package housekeeping deletes what upcheck keeps no longer: dead sessions
// and spent login-throttling rows (auth's purge), check runs after 90 days,
// audit rows after a year, and the installed tree's history of versions
// removed after its retention (400 days unless configured). Every instance runs it once a day; each
// deletion is idempotent and judged on the database clock, so two
// instances running it at once delete each row once and need no lease.
package housekeeping

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/upcheck/upcheck/internal/store"
)

// Retention of the history tables.
const (
	CheckRunDays = 90
	AuditDays    = 365
	// TreeHistory is how long the tree's history keeps a version after it
	// was removed, unless UPCHECK_TREE_HISTORY_RETENTION says otherwise:
	// over a year, so that an advisory published long after still finds
	// that the site ran the version.
	TreeHistory = 400 * 24 * time.Hour
)

// Purger is the part of auth that purges its own tables.
type Purger interface {
	Purge(ctx context.Context) error
}

// Task is the daily housekeeping of one process.
type Task struct {
	store       *store.Store
	auth        Purger
	logger      *slog.Logger
	treeHistory time.Duration
}

// Option configures a Task.
type Option func(*Task)

// WithTreeHistory keeps the tree's history of a removed version for d
// (UPCHECK_TREE_HISTORY_RETENTION); zero keeps TreeHistory.
func WithTreeHistory(d time.Duration) Option {
	return func(t *Task) {
		if d > 0 {
			t.treeHistory = d
		}
	}
}

// New returns a Task.
func New(st *store.Store, auth Purger, logger *slog.Logger, opts ...Option) *Task {
	t := &Task{store: st, auth: auth, logger: logger, treeHistory: TreeHistory}
	for _, o := range opts {
		o(t)
	}
	return t
}

// Report says what one run deleted.
type Report struct {
	CheckRuns, AuditRows, FeedSyncs, TreeVersions int64
}

// Run deletes everything past its retention once. A failure of one step
// does not stop the others; the errors are joined.
func (t *Task) Run(ctx context.Context) (Report, error) {
	var rep Report
	authErr := t.auth.Purge(ctx)
	var runsErr, auditErr, feedsErr, treeErr error
	rep.CheckRuns, runsErr = t.store.CheckRunPurge(ctx, CheckRunDays)
	rep.AuditRows, auditErr = t.store.AuditPurge(ctx, AuditDays)
	rep.FeedSyncs, feedsErr = t.store.FeedSyncPurge(ctx, CheckRunDays)
	rep.TreeVersions, treeErr = t.store.TreeVersionsPurge(ctx, t.treeHistory)
	return rep, errors.Join(authErr, runsErr, auditErr, feedsErr, treeErr)
}

// Every runs the task once shortly after the start (a random delay of up
// to first, so instances started together spread out), then every
// interval, until ctx ends. It returns when ctx ends.
func (t *Task) Every(ctx context.Context, first, interval time.Duration) {
	timer := time.NewTimer(rand.N(first + 1))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		rep, err := t.Run(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			t.logger.WarnContext(ctx, "housekeeping", "error", err, "check_runs", rep.CheckRuns, "audit_rows", rep.AuditRows, "feed_syncs", rep.FeedSyncs,
				"tree_versions", rep.TreeVersions)
		default:
			t.logger.InfoContext(ctx, "housekeeping", "check_runs", rep.CheckRuns, "audit_rows", rep.AuditRows, "feed_syncs", rep.FeedSyncs,
				"tree_versions", rep.TreeVersions)
		}
		timer.Reset(interval)
	}
}
