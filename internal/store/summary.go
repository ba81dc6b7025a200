package store

import (
	"context"
	"fmt"
	"time"
)

// Summary is the stored state condensed for the navigation badge, the
// security alert and the dashboard widget.
type Summary struct {
	Components       int
	UpdatesAvailable int
	SecurityUpdates  int
	Vulnerable       int
	FailingSources   int
	Stale            int
	// OldestSuccessAt is the oldest last success among components with an
	// update source; nil while any of them has never succeeded.
	OldestSuccessAt *time.Time
	LastCheck       *LastCheck
	CheckRunning    bool
}

// LastCheck is the latest check that ran (refused attempts do not count).
type LastCheck struct {
	Status     string
	Trigger    string
	FinishedAt *time.Time
}

// Summary reads the summary in one statement.
func (s *Store) Summary(ctx context.Context) (Summary, error) {
	r, err := s.q.SummaryRead(ctx, s.pool)
	if err != nil {
		return Summary{}, mapError(fmt.Errorf("read summary: %w", err))
	}
	out := Summary{
		Components: int(r.Components), UpdatesAvailable: int(r.UpdatesAvailable), SecurityUpdates: int(r.SecurityUpdates),
		Vulnerable: int(r.Vulnerable), FailingSources: int(r.FailingSources), Stale: int(r.Stale), CheckRunning: r.CheckRunning,
	}
	if t, ok := r.OldestSuccessAt.(time.Time); ok && !r.AnyNeverSucceeded {
		out.OldestSuccessAt = &t
	}
	if r.LastStatus != nil {
		out.LastCheck = &LastCheck{Status: *r.LastStatus, Trigger: deref(r.LastTrigger), FinishedAt: r.LastFinishedAt}
	}
	return out, nil
}
