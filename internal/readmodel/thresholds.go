package readmodel

import "time"

// The read model's thresholds, each defined once in Go; the SQL that
// judges by them is held to these values by TestThresholdsMatchSQL.
const (
	// StaleAge is how long a source in use may go without a successful
	// read (since it last succeeded, or since its first component was
	// installed) before its components are stale: upcheck_stale_age()
	// (the read model's SQL), read by upcheck_stale.
	StaleAge = 48 * time.Hour
	// ExpiryWarning is how close a stored document's own expiry makes its
	// source need a look (upcheck_expiry_warning in SQL):
	// source_state.untrusted (the view) and Source health's expires_soon.
	ExpiryWarning = 7 * 24 * time.Hour
	// ManualCooldown is the least time between two manual checks in
	// production (lease.DefaultTimings); UPCHECK_TEST_TIMINGS may shorten
	// it, so words about the cooldown take the value in force, not this.
	ManualCooldown = 2 * time.Minute
	// SourceFailingNotice is how long a source in use fails (since
	// failing_since) before it notifies its source.failing event
	// (EventPlanSourceFailing).
	SourceFailingNotice = 24 * time.Hour
	// CheckOverdue is how long no check may complete before the
	// check.overdue event (EventPlanOverdue).
	CheckOverdue = 48 * time.Hour
	// UnusedSourceKept is how long a source no component uses keeps its
	// row and rollback state (SourceDeleteUnused), so that removing a
	// plugin for one check does not reset them.
	UnusedSourceKept = 30 * 24 * time.Hour
)
