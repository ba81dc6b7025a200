package readmodel

import "slices"

// CheckStatus is how a check run stands or ended: what check_runs.status
// records (its CHECK constraint allows exactly AllCheckStatuses), what a
// check answers (updatecheck.Result, the CLI's JSON line and exit code,
// the API), what metrics label a check with and what the history shows.
type CheckStatus string

// The statuses.
const (
	// CheckRunning: the check holds the lease and has not ended; the
	// history records it, a check never answers it.
	CheckRunning CheckStatus = "running"
	// CheckCompleted: every source was fetched (or answered 304) and
	// written.
	CheckCompleted CheckStatus = "completed"
	// CheckCompletedWithFailures: the check ran to its end, but some
	// sources (perhaps all) gave no usable document. Like CheckCompleted
	// it completes the period; unlike it, it asks for attention.
	CheckCompletedWithFailures CheckStatus = "completed_with_failures"
	// CheckBusy: another check held the lease.
	CheckBusy CheckStatus = "busy"
	// CheckCooldown: too soon after the last manual check.
	CheckCooldown CheckStatus = "cooldown"
	// CheckSkipped: this period's check had already completed.
	CheckSkipped CheckStatus = "skipped"
	// CheckLeaseLost: the lease was refused, taken over or not confirmed
	// in time; nothing more was written.
	CheckLeaseLost CheckStatus = "lease_lost"
	// CheckConnectionLost is a status of the history only: the record of
	// a CheckLeaseLost check that lost its lease because the database
	// could not be reached ("Interrupted: lost its connection to the
	// database"). The check itself answers CheckLeaseLost (the API's
	// "interrupted", exit code 5 of `upcheck check`); its end and its
	// release are written once the database answers again
	// (lease.Manager.Settle).
	CheckConnectionLost CheckStatus = "connection_lost"
	// CheckCancelled: the process was shutting down; the lease was
	// released.
	CheckCancelled CheckStatus = "cancelled"
	// CheckFailed: the check could not write (a database error other than
	// a lost lease); the lease was released.
	CheckFailed CheckStatus = "failed"
)

// AllCheckStatuses are the statuses check_runs.status may hold, in the
// order of its CHECK constraint (TestVocabulariesMatchSQL holds the two
// together).
func AllCheckStatuses() []CheckStatus {
	return []CheckStatus{CheckRunning, CheckCompleted, CheckCompletedWithFailures, CheckBusy, CheckCooldown,
		CheckSkipped, CheckLeaseLost, CheckConnectionLost, CheckCancelled, CheckFailed}
}

// RanToEnd reports whether a check with this status ran to its end:
// CheckCompleted or CheckCompletedWithFailures. Such a check completes its
// period.
func (s CheckStatus) RanToEnd() bool { return s == CheckCompleted || s == CheckCompletedWithFailures }

// Refused reports whether a check with this status never got the lease
// (busy, cooldown, skipped): it ran nothing, and the summary's last check
// and the history's folding of repeats pass over it, as the SQL does.
func (s CheckStatus) Refused() bool { return s == CheckBusy || s == CheckCooldown || s == CheckSkipped }

// Answered reports whether a check answers this status (updatecheck.Result,
// the API, the CLI): every status but CheckRunning and
// CheckConnectionLost, which only the history records.
func (s CheckStatus) Answered() bool {
	switch s {
	case CheckRunning, CheckConnectionLost:
		return false
	}
	return slices.Contains(AllCheckStatuses(), s)
}

// The statuses shown besides the stored ones.
const (
	// StatusRefused is how a document import whose document was refused
	// reads: it is recorded as completed_with_failures (it ran to its end
	// and its one source failed), but it checked no publisher, so
	// "completed" would not be true of it.
	StatusRefused CheckStatus = "refused"
	// StatusAbandoned is how a run still recorded as running reads once
	// its lease is no longer live: its process died or froze before it
	// could record its end (the history's statement says so in SQL).
	StatusAbandoned CheckStatus = "abandoned"
	// StatusInterrupted is what POST /api/admin/plugins/updates/check
	// answers for a check that lost its lease (CheckLeaseLost, recorded as
	// CheckLeaseLost or CheckConnectionLost).
	StatusInterrupted CheckStatus = "interrupted"
)

// ShownRunStatuses are the statuses a run may show (ShownRunStatus, the
// history's statement): the stored ones, then abandoned and refused.
func ShownRunStatuses() []CheckStatus {
	return append(AllCheckStatuses(), StatusAbandoned, StatusRefused)
}

// ShownRunStatus is the status a check run shows, on the history page,
// in the audit log and in GET /api/admin/history alike: the stored one,
// except for a refused import (StatusRefused).
func ShownRunStatus(status, trigger string) string {
	if Trigger(trigger) == TriggerImport && CheckStatus(status) == CheckCompletedWithFailures {
		return string(StatusRefused)
	}
	return status
}

// Trigger says why a check ran (check_runs.trigger, the lease's rules, the
// metrics label, the history).
type Trigger string

// The triggers.
const (
	// TriggerScheduled runs once per period: skipped when a check
	// completed since the period began.
	TriggerScheduled Trigger = "scheduled"
	// TriggerManual is the AdminCP button and `upcheck check --manual`:
	// subject to the cooldown, which it stamps when it acquires.
	TriggerManual Trigger = "manual"
	// TriggerOperator is `upcheck check` without --manual: no cooldown,
	// no skip.
	TriggerOperator Trigger = "operator"
	// TriggerImport is a document imported by hand (`upcheck source
	// import`, the Sources page's upload form): no cooldown, no skip, and
	// its release completes no period, since it checked no publisher (the
	// summary's last check passes over it, as its SQL does).
	TriggerImport Trigger = "import"
)

// AllTriggers are the triggers, in this order.
func AllTriggers() []Trigger {
	return []Trigger{TriggerScheduled, TriggerManual, TriggerOperator, TriggerImport}
}
