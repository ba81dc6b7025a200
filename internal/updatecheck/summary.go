package updatecheck

import (
	"context"
	"time"
)

// Summary is the shape of GET /api/admin/plugins/updates/summary (DESIGN.md
// section 4). The navigation badge, the security alert and the dashboard
// widget all read this one value.
type Summary struct {
	Components       int        `json:"components"`
	UpdatesAvailable int        `json:"updates_available"`
	SecurityUpdates  int        `json:"security_updates"`
	Vulnerable       int        `json:"vulnerable"`
	FailingSources   int        `json:"failing_sources"`
	Stale            int        `json:"stale"`
	OldestSuccessAt  *time.Time `json:"oldest_success_at"`
	LastCheck        *LastCheck `json:"last_check"`
	CheckRunning     bool       `json:"check_running"`
}

// LastCheck is the latest check that ran.
type LastCheck struct {
	Status     string     `json:"status"`
	Trigger    string     `json:"trigger"`
	FinishedAt *time.Time `json:"finished_at"`
}

// Summary reads stored results only; it never fetches.
func (c *Checker) Summary(ctx context.Context) (Summary, error) {
	s, err := c.store.Summary(ctx)
	if err != nil {
		return Summary{}, err
	}
	out := Summary{
		Components: s.Components, UpdatesAvailable: s.UpdatesAvailable, SecurityUpdates: s.SecurityUpdates,
		Vulnerable: s.Vulnerable, FailingSources: s.FailingSources, Stale: s.Stale,
		OldestSuccessAt: utc(s.OldestSuccessAt), CheckRunning: s.CheckRunning,
	}
	if s.LastCheck != nil {
		status := s.LastCheck.Status
		out.LastCheck = &LastCheck{Status: status, Trigger: s.LastCheck.Trigger, FinishedAt: utc(s.LastCheck.FinishedAt)}
	}
	return out, nil
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
