// Vocabulary: what each check status, trigger and role is called, and the
// names and order of a component's and a source's states (data-state). The
// states themselves (stale, expired, failing, evaluated) are the read
// model's, judged by the database and passed in as props; this file only
// names and orders them.

package views

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// runStatus words a check's status: a label and a short reason.
func runStatus(status string) (label, reason string, t tone) {
	switch status {
	case "completed":
		return "Completed", "", toneOK
	case "running":
		return "Running", "in progress now", toneInfo
	case "busy":
		return "Busy", "another check was running", toneNeutral
	case "cooldown":
		return "Cooldown", "too soon after the last manual check", toneNeutral
	case "skipped":
		return "Skipped", "this period’s check had already completed", toneNeutral
	case "lease_lost", "interrupted":
		return "Interrupted", "it lost its lock before finishing", toneWarn
	case "cancelled":
		return "Cancelled", "the server was shutting down", toneWarn
	case "failed":
		return "Failed", "", toneDanger
	case "abandoned":
		return "Abandoned", "the server stopped before it finished", toneWarn
	case "":
		return "Unknown", "", toneNeutral
	default:
		return status, "", toneNeutral
	}
}

// ranChecks is whether a run ended after fetching, so its counts and
// duration mean something: not for refused runs (busy, cooldown, skipped),
// nor for one still running or abandoned before it could record them.
func ranChecks(status string) bool {
	switch status {
	case "busy", "cooldown", "skipped", "running", "abandoned":
		return false
	}
	return true
}

// triggerLabel words what started a check.
func triggerLabel(trigger string) string {
	switch trigger {
	case "scheduled":
		return "Scheduled"
	case "manual":
		return "Manual"
	case "operator":
		return "Command line"
	default:
		return trigger
	}
}

// lastCheckFinished is when the last check that ran ended; nil: none has.
func lastCheckFinished(lc *readmodel.LastCheck) *time.Time {
	if lc == nil {
		return nil
	}
	return lc.FinishedAt
}

// lastCheckNote is the widget's note on the last check, "completed, manual
// check"; "" when there is nothing to say.
func lastCheckNote(lc *readmodel.LastCheck) string {
	if lc == nil || lc.FinishedAt == nil || lc.Status == "" {
		return ""
	}
	return lastCheckText(lc.Status, lc.Trigger)
}

// lastCheckText words a check's status and trigger: "completed, manual
// check".
func lastCheckText(status, trigger string) string {
	label, _, _ := runStatus(status)
	s := strings.ToLower(label)
	if trigger != "" {
		s += ", " + strings.ToLower(triggerLabel(trigger)) + " check"
	}
	return s
}

// roleLabel words a role.
func roleLabel(role string) string {
	switch role {
	case "admin":
		return "Administrator"
	case "viewer":
		return "Viewer"
	default:
		return role
	}
}

// rowState is a catalog row's most urgent state, for data-state.
func rowState(r CatalogRow) string {
	switch {
	case r.Security || r.Vulnerable:
		return "security"
	case r.UpdateAvailable:
		return "update"
	case r.LastError != "" || r.Stale:
		return "problem"
	case r.SourceURL == "":
		return "untracked"
	case !r.Evaluated:
		return "unchecked"
	default:
		return "current"
	}
}

// sourceRank orders sources: failing, then stale or expired, then never
// fetched, then healthy. Failing and stale are the read model's flags; no
// time is judged here.
func sourceRank(s SourceRow) int {
	switch {
	case s.Failing:
		return 0
	case s.LastSuccessAt == nil:
		return 2
	case s.Stale:
		return 1
	default:
		return 3
	}
}

// sortedSources is the sources in display order; the props stay untouched.
func sortedSources(src []SourceRow) []SourceRow {
	out := slices.Clone(src)
	slices.SortStableFunc(out, func(a, b SourceRow) int {
		return cmp.Compare(sourceRank(a), sourceRank(b))
	})
	return out
}

// failingCount counts failing sources for the page's summary line, by the
// read model's flag, as the order and the badges do.
func failingCount(src []SourceRow) int {
	n := 0
	for _, s := range src {
		if s.Failing {
			n++
		}
	}
	return n
}

// sourceState is a source's rank as a word, for data-state.
func sourceState(s SourceRow) string {
	return [...]string{"failing", "stale", "unfetched", "healthy"}[sourceRank(s)]
}
