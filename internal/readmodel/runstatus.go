package readmodel

// TriggerImport is the trigger of a document import in check_runs
// (lease.Import).
const TriggerImport = "import"

// StatusRefused is how a document import whose document was refused
// reads: it is recorded as completed_with_failures (it ran to its end and
// its one source failed), but it checked no publisher, so "completed"
// would not be true of it.
const StatusRefused = "refused"

// ShownRunStatus is the status a check run shows, on the history page,
// in the audit log and in GET /api/admin/history alike: the stored one,
// except for a refused import (StatusRefused).
func ShownRunStatus(status, trigger string) string {
	if trigger == TriggerImport && status == "completed_with_failures" {
		return StatusRefused
	}
	return status
}
