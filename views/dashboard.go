package views

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// DashboardProps is the dashboard: the updates widget (from
// Layout.Summary) and, for managers, the "Check for updates" button.
type DashboardProps struct {
	Layout LayoutProps
	// CanManage shows the check button (plugins.can_manage).
	CanManage bool
	// Flash is the outcome of a check posted without JavaScript, shown in
	// the same live region app.js writes to; CheckOutcomeMessage words it.
	Flash string
	// FlashTone is its notice's tone (CheckOutcomeTone).
	FlashTone string
	// Cooldown is the least time between two manual checks in force
	// (updatecheck.Checker.Cooldown), which the page's words name; 0
	// words the production one, readmodel.ManualCooldown.
	Cooldown time.Duration
}

// CheckOutcome is how a "Check for updates" request ended, as the JSON API
// reports it (updatecheck.Result).
type CheckOutcome struct {
	// Status is completed, busy, cooldown, lease_lost (or "interrupted"),
	// skipped, cancelled or failed.
	Status                       string
	Fetched, NotModified, Failed int
	// RetryAfter is the cooldown left, in seconds.
	RetryAfter int
	// Cooldown is the cooldown in force (updatecheck.Checker.Cooldown);
	// 0 words the production one, readmodel.ManualCooldown.
	Cooldown time.Duration
}

// CheckOutcomeMessage words a check outcome: the no-JavaScript form post's
// notice (DashboardProps.Flash) and the check API's message, which app.js
// shows as it is, so an answer reads the same either way.
func CheckOutcomeMessage(o CheckOutcome) string {
	switch readmodel.CheckStatus(o.Status) {
	case readmodel.CheckCompleted:
		return fmt.Sprintf("Check completed: %s fetched, %d unchanged, %d failed.",
			countNoun(o.Fetched, "source", "sources"), o.NotModified, o.Failed)
	case readmodel.CheckCompletedWithFailures:
		return fmt.Sprintf("Check completed with failures: %s fetched, %d unchanged, %d failed. Source health says why.",
			countNoun(o.Fetched, "source", "sources"), o.NotModified, o.Failed)
	case readmodel.CheckBusy:
		return "A check is already running. Try again in a few minutes."
	case readmodel.CheckLeaseLost, readmodel.StatusInterrupted:
		return "The check was interrupted (it lost its lock or its connection to the database) and will be retried."
	case readmodel.CheckCooldown:
		return cooldownSentence(o.Cooldown) + " You can check again in " + readmodel.SecondsText(o.RetryAfter) + "."
	case readmodel.CheckSkipped:
		return "A check has already completed in this period, so nothing was fetched."
	case readmodel.CheckCancelled:
		return "The check was cancelled because the server is shutting down. Try again in a moment."
	default:
		return "The check could not run. Try again later."
	}
}

// cooldownLimit is how often a manual check may run, "one every 2
// minutes", for the cooldown in force (0: readmodel.ManualCooldown).
func cooldownLimit(d time.Duration) string {
	if d <= 0 {
		d = readmodel.ManualCooldown
	}
	text := readmodel.DurationText(d)
	if unit, ok := strings.CutPrefix(text, "1 "); ok {
		return "one every " + unit
	}
	return "one every " + text
}

// cooldownSentence says the limit: "Checks are limited to one every 2
// minutes." (app.js reads it from the check outcome's
// data-cooldown-text).
func cooldownSentence(d time.Duration) string {
	return "Checks are limited to " + cooldownLimit(d) + "."
}

// cooldownSeconds is the cooldown in force in whole seconds, at least 1,
// for app.js's countdown when an answer names no wait.
func cooldownSeconds(d time.Duration) string {
	if d <= 0 {
		d = readmodel.ManualCooldown
	}
	return strconv.Itoa(max(1, int((d+time.Second-1)/time.Second)))
}

// countdownJSON is a wait in words (readmodel.SecondsText or
// SpokenSecondsText) for each second from 0 to the cooldown in force, as a
// JSON array, which app.js counts down along instead of wording seconds
// itself.
func countdownJSON(d time.Duration, words func(int) string) string {
	n, _ := strconv.Atoi(cooldownSeconds(d))
	list := make([]string, n+1)
	for i := range list {
		list[i] = words(i)
	}
	b, err := json.Marshal(list)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// CheckOutcomeTone is the tone of a check outcome's notice, the
// status's tone everywhere (readmodel.CheckStatusText). app.js reads the
// same tones from the live region's data-tones (outcomeTonesJSON).
func CheckOutcomeTone(status string) string {
	return string(readmodel.CheckStatusText(status).Tone)
}

// outcomeTonesJSON is the tone of every status a check answers (and the
// API's "interrupted") for app.js, as a JSON object.
var outcomeTonesJSON = func() string {
	m := map[string]string{string(readmodel.StatusInterrupted): CheckOutcomeTone(string(readmodel.StatusInterrupted))}
	for _, s := range readmodel.AllCheckStatuses() {
		if s.Answered() {
			m[string(s)] = CheckOutcomeTone(string(s))
		}
	}
	return mustJSON(m)
}()

// staleText is the widget's stale warning.
func staleText(n int) string {
	return fmt.Sprintf("%s not been checked successfully for over %s.",
		countNoun(n, "component has", "components have"), staleAgeText)
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
	return lastCheckText(string(lc.Status), string(lc.Trigger), lc.Actor)
}

// nextCheckText is when the next scheduled check runs, in UTC: "today at
// 04:17 UTC", "tomorrow at 04:17 UTC", "on Thu 3 Dec at 04:17 UTC";
// "not scheduled" when no schedule runs.
func nextCheckText(now time.Time, next *time.Time) string {
	if next == nil {
		return "not scheduled"
	}
	n, today := next.UTC(), now.UTC()
	at := " at " + n.Format("15:04") + " UTC"
	y, m, d := today.Date()
	midnight := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	switch days := int(n.Sub(midnight) / (24 * time.Hour)); {
	case n.Before(midnight):
		return "overdue since " + n.Format("2 Jan 15:04") + " UTC"
	case days == 0:
		return "today" + at
	case days == 1:
		return "tomorrow" + at
	case days < 300:
		return "on " + n.Format("Mon 2 Jan") + at
	default:
		return "on " + readmodel.DateText(n) + at
	}
}
