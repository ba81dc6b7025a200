package store

import (
	"context"
	"fmt"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// Summary reads the update summary in one statement over the read model,
// so its counts agree with each other, with the catalog and with source
// health. Times come back in UTC, as the JSON API shows them.
func (s *Store) Summary(ctx context.Context) (readmodel.Summary, error) {
	r, err := s.q.SummaryRead(ctx, s.pool)
	if err != nil {
		return readmodel.Summary{}, mapError(fmt.Errorf("read summary: %w", err))
	}
	out := readmodel.Summary{
		Components: int(r.Components), UpdatesAvailable: int(r.UpdatesAvailable), SecurityUpdates: int(r.SecurityUpdates),
		Vulnerable: int(r.Vulnerable), FailingSources: int(r.FailingSources), Stale: int(r.Stale), CheckRunning: r.CheckRunning,
		NotificationsFailing: int(r.NotificationsFailing), NotificationsPending: int(r.NotificationsPending),
		OldestPendingSeconds: r.OldestPendingSeconds,
	}
	// sqlc cannot type min() over the CTE: the column comes as a time.Time,
	// or nil for NULL.
	if t, ok := r.OldestSuccessAt.(time.Time); ok && !r.AnyNeverSucceeded {
		out.OldestSuccessAt = utc(&t)
	}
	if r.LastStatus != nil {
		out.LastCheck = &readmodel.LastCheck{Status: *r.LastStatus, Trigger: deref(r.LastTrigger), FinishedAt: utc(r.LastFinishedAt)}
	}
	return out, nil
}

// utc is t in UTC; nil stays nil.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
