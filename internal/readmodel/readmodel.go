// Package readmodel holds what the read model (the views component_state
// and source_state of migration 00005, judged by the database when read)
// condenses for the AdminCP: the update summary.
//
// It is plain data with JSON tags and imports nothing of the application,
// so one value travels the whole way: store fills it from one statement,
// updatecheck caches it, web returns it as the JSON of
// GET /api/admin/plugins/updates/summary and hands it to the pages, views
// renders it and metrics exports it. Nobody copies it field by field, so the
// badge, the alert, the widget, the API and /metrics cannot drift apart.
package readmodel

import "time"

// Summary is the stored state condensed: the JSON of
// GET /api/admin/plugins/updates/summary (docs/design.md section 4), and
// what the navigation badge, the security alert and the dashboard widget
// show. Times are UTC.
type Summary struct {
	// Components counts installed components; the core counts as one.
	Components int `json:"components"`
	// UpdatesAvailable counts components whose current evaluation found an
	// installable update; it is the navigation badge.
	UpdatesAvailable int `json:"updates_available"`
	// SecurityUpdates counts components with a newer security release
	// (also when it needs a newer core).
	SecurityUpdates int `json:"security_updates"`
	// Vulnerable counts components whose installed version is affected by
	// an advisory nobody dismissed.
	Vulnerable int `json:"vulnerable"`
	// FailingSources counts sources in use whose last fetch did not give a
	// usable document.
	FailingSources int `json:"failing_sources"`
	// Stale counts components whose source has not been fetched
	// successfully for 48 hours, or ever, or whose document has expired.
	Stale int `json:"stale"`
	// OldestSuccessAt is the oldest last successful fetch of a source in
	// use; nil while any component with a source has none.
	OldestSuccessAt *time.Time `json:"oldest_success_at"`
	// LastCheck is the latest check that ran; nil: none has.
	LastCheck *LastCheck `json:"last_check"`
	// CheckRunning: some instance holds the check lease now.
	CheckRunning bool `json:"check_running"`
	// NotificationsFailing counts notifications not delivered whose last
	// attempt failed: retrying, or failed for good and waiting for a retry
	// by hand.
	NotificationsFailing int `json:"notifications_failing"`
	// NotificationsPending counts notifications not delivered yet, and
	// OldestPendingSeconds is how long the oldest of them has waited (0:
	// none), on the database clock.
	NotificationsPending int     `json:"notifications_pending"`
	OldestPendingSeconds float64 `json:"oldest_pending_seconds"`
}

// LastCheck is the latest check that ran: refused attempts (busy,
// cooldown, skipped) and one still running do not count.
type LastCheck struct {
	// Status is completed, completed_with_failures, lease_lost, cancelled
	// or failed.
	Status string `json:"status"`
	// Trigger is scheduled, manual or operator.
	Trigger    string     `json:"trigger"`
	FinishedAt *time.Time `json:"finished_at"`
}
