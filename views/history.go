package views

import (
	"fmt"
	"strconv"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// HistoryProps is the check history, newest first.
type HistoryProps struct {
	Layout LayoutProps
	Runs   []readmodel.RunRow
	// FeedSyncs are the latest feed syncs, newest first.
	FeedSyncs []readmodel.FeedSyncRow
}

// runCountsText is what a check did with the sources.
func runCountsText(r readmodel.RunRow) string {
	if readmodel.Trigger(r.Trigger) == readmodel.TriggerImport {
		return importRunText(r)
	}
	s := fmt.Sprintf("%d fetched, %d unchanged, %d failed", r.Fetched, r.NotModified, r.Failed)
	unwritten := min(r.Unwritten, r.Skipped)
	if unwritten > 0 {
		s += fmt.Sprintf(", %d fetched but not saved", unwritten)
	}
	if n := r.Skipped - unwritten; n > 0 {
		s += fmt.Sprintf(", %d not fetched", n)
	}
	if r.Skipped > 0 {
		s += " (the check stopped first)"
	}
	return s
}

// runLabel is a history row's status badge: "Cooldown ×7" for refusals
// folded together.
func runLabel(r readmodel.RunRow) string {
	label := runStatus(readmodel.ShownRunStatus(r.Status, r.Trigger)).Label
	if r.Repeats > 1 {
		label += " ×" + strconv.Itoa(r.Repeats)
	}
	return label
}

// runTimeText is when a history row's run started, exact, in UTC; for
// folded refusals, from the first to the last: "2026-11-29 01:02–01:05 UTC".
func runTimeText(r readmodel.RunRow) string {
	if r.Repeats <= 1 || r.FirstStartedAt.IsZero() || !r.FirstStartedAt.Before(r.StartedAt) {
		return readmodel.TimeText(r.StartedAt)
	}
	return readmodel.TimeRangeText(r.FirstStartedAt, r.StartedAt)
}

// failedSourcesText is how many of a run's sources failed: "1 of 4
// sources failed".
func failedSourcesText(r readmodel.RunRow) string {
	total := r.Fetched + r.NotModified + r.Failed + r.Skipped
	return fmt.Sprintf("%d of %s failed", r.Failed, countNoun(total, "source", "sources"))
}
