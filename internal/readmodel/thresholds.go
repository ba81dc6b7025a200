package readmodel

import (
	"strconv"
	"time"
)

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

// DurationText words a threshold: "7 days", "48 hours", "2 minutes",
// "1 minute", "90 seconds", in the largest unit that divides it exactly;
// days only beyond 48 hours, so that 48 hours stays 48 hours.
func DurationText(d time.Duration) string {
	unit := func(n time.Duration, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return strconv.FormatInt(int64(n), 10) + " " + many
	}
	const day = 24 * time.Hour
	switch {
	case d <= 0:
		return "0 seconds"
	case d > 2*day && d%day == 0:
		return unit(d/day, "day", "days")
	case d%time.Hour == 0:
		return unit(d/time.Hour, "hour", "hours")
	case d%time.Minute == 0:
		return unit(d/time.Minute, "minute", "minutes")
	case d%time.Second == 0:
		return unit(d/time.Second, "second", "seconds")
	}
	return unit(max(d/time.Millisecond, 1), "millisecond", "milliseconds")
}
