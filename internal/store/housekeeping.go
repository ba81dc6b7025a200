package store

import (
	"context"
	"fmt"
)

// CheckRunPurge deletes check runs older than keepDays days, keeping the
// newest run that ran, and reports how many it deleted.
func (e *Executor) CheckRunPurge(ctx context.Context, keepDays int) (int64, error) {
	n, err := e.q.CheckRunPurge(ctx, e.dbtx, int32(keepDays))
	if err != nil {
		return 0, mapError(fmt.Errorf("purge check runs: %w", err))
	}
	return n, nil
}

// AuditPurge deletes audit rows older than keepDays days.
func (e *Executor) AuditPurge(ctx context.Context, keepDays int) (int64, error) {
	n, err := e.q.AuditPurge(ctx, e.dbtx, int32(keepDays))
	if err != nil {
		return 0, mapError(fmt.Errorf("purge audit log: %w", err))
	}
	return n, nil
}

// FeedSyncPurge deletes feed syncs older than keepDays days, keeping each
// feed's newest and those still running, and reports how many it deleted.
func (e *Executor) FeedSyncPurge(ctx context.Context, keepDays int) (int64, error) {
	n, err := e.q.FeedSyncPurge(ctx, e.dbtx, int32(keepDays))
	if err != nil {
		return 0, mapError(fmt.Errorf("purge feed syncs: %w", err))
	}
	return n, nil
}
