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
)
