// Sentences the pages build from counts and props: the check outcome, the
// badge's and the alert's words, the widget's stale warning, the history's
// counts, error pages and the detail page's "unknown". app.js builds some
// of the same sentences after a check; static/js/app.js says which.

package views

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

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

// CheckOutcomeMessage words a check outcome for the no-JavaScript form post
// (DashboardProps.Flash), in the sentences app.js shows for the same JSON
// answers; where app.js has no sentence for an answer (a cancelled or
// failed check) it names the HTTP status instead.
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

// staleAgeText is readmodel.StaleAge in words, "48 hours": the pages'
// and app.js's (data-stale-age) one spelling of it.
var staleAgeText = readmodel.DurationText(readmodel.StaleAge)

// CheckOutcomeTone is the tone of a check outcome's notice: the words say
// it all; the colour repeats it. app.js reads the same tones from the live
// region's data-tones (outcomeTonesJSON).
func CheckOutcomeTone(status string) string {
	if t, ok := outcomeTones[status]; ok {
		return string(t)
	}
	return string(toneDanger)
}

// outcomeTones: a check that did its work is ok; one with failing sources,
// interrupted or cancelled warns; a refusal informs; anything else is a
// danger.
var outcomeTones = map[string]tone{
	string(readmodel.CheckCompleted):             toneOK,
	string(readmodel.CheckCompletedWithFailures): toneWarn,
	string(readmodel.CheckBusy):                  toneInfo,
	string(readmodel.CheckCooldown):              toneInfo,
	string(readmodel.CheckSkipped):               toneInfo,
	string(readmodel.CheckLeaseLost):             toneWarn,
	string(readmodel.StatusInterrupted):          toneWarn,
	string(readmodel.CheckCancelled):             toneWarn,
}

// outcomeTonesJSON is outcomeTones for app.js, as a JSON object.
var outcomeTonesJSON = func() string {
	m := make(map[string]string, len(outcomeTones))
	for k, t := range outcomeTones {
		m[k] = string(t)
	}
	return mustJSON(m)
}()

// countNoun is "1 source" or "3 sources".
func countNoun(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// pick is one or many by n.
func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// updatesAvailableText is the navigation badge's words for screen readers.
func updatesAvailableText(n int) string {
	return countNoun(n, "update available", "updates available")
}

// needsAttention is whether the security alert shows.
func needsAttention(s readmodel.Summary) bool {
	return s.SecurityUpdates+s.Vulnerable > 0
}

// securityAlertText is the security alert's sentence, e.g. "2 security
// updates and 1 vulnerable component need attention."
func securityAlertText(security, vulnerable int) string {
	var parts []string
	if security > 0 {
		parts = append(parts, countNoun(security, "security update", "security updates"))
	}
	if vulnerable > 0 {
		parts = append(parts, countNoun(vulnerable, "vulnerable component", "vulnerable components"))
	}
	verb := "need"
	if len(parts) == 1 && (security == 1 || vulnerable == 1) {
		verb = "needs"
	}
	return strings.Join(parts, " and ") + " " + verb + " attention."
}

// staleText is the widget's stale warning.
func staleText(n int) string {
	return fmt.Sprintf("%s not been checked successfully for over %s.",
		countNoun(n, "component has", "components have"), staleAgeText)
}

// runCountsText is what a check did with the sources.
func runCountsText(r RunRow) string {
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

// errorText is an error page's default title and message.
func errorText(status int) (title, message string) {
	switch status {
	case 400:
		return "Bad request", "The request could not be understood. Go back and try again."
	case 401:
		return "Please log in", "Your session has ended. Log in again to continue."
	case 403:
		return "Access denied", "Your account is not allowed to do this. Ask an administrator if you need access."
	case 404:
		return "Page not found", "There is nothing at this address. It may have been removed, or the link may be wrong."
	case 503:
		return "Temporarily unavailable", "upcheck cannot answer right now, usually because its database cannot be reached. Try again in a minute."
	default:
		return "Something went wrong", "The server could not complete the request. Try again in a minute; if it keeps happening, the server log says why."
	}
}

// UnknownComponentText is the 404 of a component page whose code names no
// installed component: “nope” is what was asked for (templ escapes it).
func UnknownComponentText(code string) string {
	if r := []rune(code); len(r) > 80 {
		code = string(r[:79]) + "…"
	}
	return "No installed component has the code “" + code + "”."
}

// nameOr is a component's display name, its code when it has none.
func nameOr(name, code string) string {
	if name != "" {
		return name
	}
	return code
}

// sourcesTotalText is "5 sources".
func sourcesTotalText(n int) string {
	return countNoun(n, "source", "sources")
}

// factsKnown is whether the detail page may list a component's releases
// and advisories, and say "none" when there are none: only from a current
// evaluation that worked. Otherwise nothing is known (notEvaluatedText
// says why), and the page must never read as "no known advisory".
func factsKnown(p DetailProps) bool {
	return p.Evaluated && !evalFailed(p)
}

// evalFailed: the component's document was read but could not be
// evaluated for it.
func evalFailed(p DetailProps) bool {
	return p.EvalFailed || readmodel.ErrorKind(p.LastErrorKind) == readmodel.ErrorEvaluation
}

// notEvaluatedText says why nothing is known about a component that has no
// current evaluation, or one that could not be made: the detail page's
// headline says it, once (unknownFactsText points back to it).
func notEvaluatedText(p DetailProps) string {
	switch {
	case p.Evaluated && evalFailed(p):
		return "Unknown: the publisher’s document was read, but this component could not be evaluated from it (see the problem below), so nothing is known about its releases or advisories."
	case p.LastSuccessAt == nil && p.Offline:
		return "Unknown: the offline update source is waiting for its first import, so nothing is known about releases or advisories for this version. An admin imports its document from Source health."
	case p.LastSuccessAt == nil && p.LastError != "":
		return "Unknown: the update source has never been read successfully, so nothing is known about releases or advisories for this version."
	case p.LastSuccessAt == nil:
		return "Unknown: the update source has not been read yet. The next check will fetch it."
	default:
		return "Unknown: the installed version (or the core's) changed, or the pinned key did, since the source was last read; the next check evaluates it."
	}
}

// problemText is a stored failure's sentence (readmodel.ProblemSentence).
// A failure of no known kind gets the general sentence there, "The last
// check of this source failed.", which every place that shows a problem
// has already said (the "Check failing" badge, the detail page's "The last
// check of this component failed."): here it points to the technical
// text instead of saying it again.
func problemText(kind, arg string) string {
	if s := readmodel.ProblemSentence(kind, arg); s != readmodel.ProblemSentence("", "") {
		return s
	}
	return "Its cause was not recorded in plain words; the technical detail says what happened."
}

// unknownFactsText stands where the detail page would list a component's
// releases or advisories when none is known: the headline has said why
// (notEvaluatedText), so this says only that none is known.
func unknownFactsText(p DetailProps, what string) string {
	if p.SourceURL == "" {
		return "No " + what + " are known: the component has no update source."
	}
	return "No " + what + " are known, for the reason given at the top of the page."
}

// runLabel is a history row's status badge: "Cooldown ×7" for refusals
// folded together.
func runLabel(r RunRow) string {
	label := runStatus(readmodel.ShownRunStatus(r.Status, r.Trigger)).Label
	if r.Repeats > 1 {
		label += " ×" + strconv.Itoa(r.Repeats)
	}
	return label
}

// runTimeText is when a history row's run started, exact, in UTC; for
// folded refusals, from the first to the last: "2026-11-29 01:02–01:05 UTC".
func runTimeText(r RunRow) string {
	if r.Repeats <= 1 || r.FirstStartedAt.IsZero() || !r.FirstStartedAt.Before(r.StartedAt) {
		return absTime(r.StartedAt)
	}
	first, last := r.FirstStartedAt.UTC(), r.StartedAt.UTC()
	if first.Format("2006-01-02") == last.Format("2006-01-02") {
		return first.Format("2006-01-02 15:04") + "–" + last.Format("15:04") + " UTC"
	}
	return first.Format("2006-01-02 15:04") + " – " + absTime(last)
}

// failedSourcesText is how many of a run's sources failed: "1 of 4
// sources failed".
func failedSourcesText(r RunRow) string {
	total := r.Fetched + r.NotModified + r.Failed + r.Skipped
	return fmt.Sprintf("%d of %s failed", r.Failed, countNoun(total, "source", "sources"))
}

// lastErrorConsequence says what a component's failed check leaves the
// page with: the last good document; "" when nothing is known, which the
// headline already says (notEvaluatedText).
func lastErrorConsequence(p DetailProps) string {
	if !factsKnown(p) {
		return ""
	}
	return "What you see below comes from the last document that was fetched successfully."
}

// staleNoticeText is the detail page's stale warning. For a source never
// read the headline says that nothing is known; this adds for how long.
func staleNoticeText(p DetailProps) string {
	if p.LastSuccessAt == nil {
		return "More than " + staleAgeText + " have passed since this component was installed without a successful read of its update source."
	}
	return "This component has not been checked successfully for over " + staleAgeText + ", so newer releases or advisories may be missing."
}
