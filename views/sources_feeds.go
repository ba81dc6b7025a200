package views

import (
	"strconv"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The Source health page's Feeds section and the history's feed syncs
// (docs/feeds.md): each advisory feed, what it holds, when it last
// succeeded and changed, an interruption and its last failure in words,
// never the technical text.

// feedState is a feed's state in a badge, most urgent first.
func feedState(f readmodel.FeedRow) badge {
	switch {
	case f.InterruptedAt != nil:
		return statusBadge(string(readmodel.StatusInterrupted))
	case f.Failing:
		return badge{"Failing", toneDanger}
	case f.Stale:
		return badge{"Stale", toneWarn}
	case f.LastSuccessAt == nil:
		return badge{"Not synced yet", toneNeutral}
	}
	return badge{"OK", toneOK}
}

// feedProblem is a feed's last failure in words; "" when its last sync
// succeeded. An interruption is said on its own line, not again here.
func feedProblem(f readmodel.FeedRow) string {
	if f.LastError == "" && f.LastErrorKind == "" {
		return ""
	}
	if readmodel.ErrorKind(f.LastErrorKind) == readmodel.ErrorInterrupted && f.InterruptedAt != nil {
		return ""
	}
	return readmodel.FeedProblemSentence(f.LastErrorKind, f.LastErrorArgs)
}

// feedRecordsText is "1,234 records" in the feed's own noun.
func feedRecordsText(f readmodel.FeedRow) string {
	switch f.Kind {
	case readmodel.FeedKEV:
		return countNounThousands(f.Records, "entry", "entries")
	case readmodel.FeedEPSS:
		return countNounThousands(f.Records, "score", "scores")
	}
	return countNounThousands(f.Records, "record", "records")
}

func countNounThousands(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return thousands(n) + " " + many
}

// skippedText heads a feed's skipped records: "3 records were skipped as
// malformed (the first 1 listed)".
func skippedText(f readmodel.FeedRow) string {
	n := max(f.SkippedCount, len(f.Skipped))
	s := countNounThousands(n, "record was", "records were") + " skipped as malformed by the last sync"
	if len(f.Skipped) < n {
		s += " (the first " + strconv.Itoa(len(f.Skipped)) + " listed)"
	}
	return s + "; the others were stored."
}

// feedSyncStatusText words a feed sync's status: in a check's words and
// tone where a check has the same status (readmodel.CheckStatusText:
// running, completed, failed, interrupted), "Not modified" otherwise.
func feedSyncStatusText(r readmodel.FeedSyncRow) badge {
	switch r.Status {
	case readmodel.FeedSyncNotModified:
		return badge{"Not modified", toneOK}
	case readmodel.FeedSyncCompleted, readmodel.FeedSyncFailed, readmodel.FeedSyncInterrupted, readmodel.FeedSyncRunning:
		return statusBadge(string(r.Status))
	}
	return badge{string(r.Status), toneNeutral}
}

// statusBadge is a check status's badge (readmodel.CheckStatusText).
func statusBadge(status string) badge {
	w := readmodel.CheckStatusText(status)
	return badge{w.Label, w.Tone}
}

// feedSyncCountsText is what a sync did with the records.
func feedSyncCountsText(r readmodel.FeedSyncRow) string {
	s := thousands(r.Written) + " written, " + thousands(r.Unchanged) + " unchanged"
	if r.Skipped > 0 {
		s += ", " + thousands(r.Skipped) + " skipped as malformed"
	}
	return s
}

// feedTriggerText words what started a feed sync (feed_syncs.trigger).
func feedTriggerText(trigger string) string {
	switch trigger {
	case "check":
		return "Before a check"
	case "cli":
		return "upcheck feed sync"
	case "import":
		return "Imported by hand"
	}
	return triggerLabel(trigger)
}

// skippedPathText joins a skipped record's id to its JSON path.
func skippedPathText(r readmodel.SkippedRecord) string {
	if r.Path == "" {
		return ""
	}
	return " at "
}
