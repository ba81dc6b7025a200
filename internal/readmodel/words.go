package readmodel

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The words of quantities, each rule defined once and read by the pages,
// the CLI, emails and chat (docs/design.md, "Words"):
//
//   - a length the product sets or is told (a threshold, a soak, a
//     cooldown, a lockout) is exact: DurationText;
//   - a length measured or counted down (a check's run, a wait in
//     seconds) is short: SecondsText, RunText;
//   - an elapsed time is approximate: SpanText, and AgoText relative to
//     now;
//   - a moment is TimeText ("2006-01-02 15:04 UTC"), a day DateText
//     ("2 Jan 2006"), always in UTC.

// DurationText words an exact length: the largest of days, hours,
// minutes and seconds that divides it exactly, days only from 3 days
// (so that 24 and 48 hours stay hours): "7 days", "48 hours", "36 hours",
// "2 minutes", "90 seconds". A part of a second beyond a whole second
// rounds up to the next second, so a wait is never said shorter than it
// is; under a second (test timings) it is milliseconds.
func DurationText(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d <= 0:
		return "0 seconds"
	case d > 2*day && d%day == 0:
		return countText(int64(d/day), "day", "days")
	case d%time.Hour == 0:
		return countText(int64(d/time.Hour), "hour", "hours")
	case d%time.Minute == 0:
		return countText(int64(d/time.Minute), "minute", "minutes")
	case d < time.Second:
		return countText(int64(max(d/time.Millisecond, 1)), "millisecond", "milliseconds")
	}
	return countText(int64((d+time.Second-1)/time.Second), "second", "seconds")
}

// SecondsText is a wait in whole seconds, short: "45 s", "1 min 53 s".
func SecondsText(s int) string {
	s = max(s, 0)
	if s < 60 {
		return strconv.Itoa(s) + " s"
	}
	return fmt.Sprintf("%d min %d s", s/60, s%60)
}

// SpokenSecondsText is the same wait for a screen reader, which hears it
// once: "45 seconds", "about 2 minutes".
func SpokenSecondsText(s int) string {
	s = max(s, 0)
	if s < 90 {
		return countText(int64(s), "second", "seconds")
	}
	return "about " + strconv.Itoa((s+30)/60) + " minutes"
}

// RunText is a check's run time: "850 ms", "4.2 s", "2 min 5 s"
// (SecondsText from a minute).
func RunText(ms int64) string {
	switch {
	case ms < 1000:
		return strconv.FormatInt(ms, 10) + " ms"
	case ms < 60_000:
		return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + " s"
	}
	return SecondsText(int(ms / 1000))
}

// SpanText is an elapsed length, approximate (rounded down to its largest
// unit): "under a minute", "5 minutes", "2 hours", "3 days".
func SpanText(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "under a minute"
	case d < time.Hour:
		return countText(int64(d/time.Minute), "minute", "minutes")
	case d < 24*time.Hour:
		return countText(int64(d/time.Hour), "hour", "hours")
	}
	return countText(int64(d/(24*time.Hour)), "day", "days")
}

// AgoText is t relative to now: "just now", "5 minutes ago", "in 3 days"
// (SpanText); beyond 30 days the day itself (DateText).
func AgoText(now, t time.Time) string {
	d := now.Sub(t)
	future := d < 0
	if future {
		d = -d
	}
	switch {
	case d < time.Minute && future:
		return "in under a minute"
	case d < time.Minute:
		return "just now"
	case d >= 30*24*time.Hour:
		return DateText(t)
	case future:
		return "in " + SpanText(d)
	}
	return SpanText(d) + " ago"
}

// TimeText is a moment, exact, in UTC: "2026-12-06 04:56 UTC".
func TimeText(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// TimeRangeText is from one moment to a later one: "2026-11-29
// 01:02–01:05 UTC" within a day, else both moments in full.
func TimeRangeText(first, last time.Time) string {
	first, last = first.UTC(), last.UTC()
	if first.Format(time.DateOnly) == last.Format(time.DateOnly) {
		return first.Format("2006-01-02 15:04") + "–" + last.Format("15:04") + " UTC"
	}
	return first.Format("2006-01-02 15:04") + " – " + TimeText(last)
}

// DateText is a day in UTC: "6 Dec 2026".
func DateText(t time.Time) string {
	return t.UTC().Format("2 Jan 2006")
}

// countText is "1 day" or "3 days".
func countText(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

// Tone is the colour a status is shown in (its badge's or notice's
// class); the words always say the same thing, the tone repeats it.
type Tone string

// The tones.
const (
	ToneOK      Tone = "ok"
	ToneInfo    Tone = "info"
	ToneWarn    Tone = "warn"
	ToneDanger  Tone = "danger"
	ToneNeutral Tone = "neutral"
)

// StatusWords is how a check status reads: in the history's badge, the
// dashboard's widget, the check's outcome notice and the audit log.
type StatusWords struct {
	// Label is the badge ("Interrupted"); lower-cased, the widget's note.
	Label string
	// Reason says why in a few words; "" when the label says it all.
	Reason string
	// Tone is the badge's and the outcome notice's colour: a check that
	// did its work is ok; one with failing sources, interrupted or
	// cancelled warns; a refusal (busy, cooldown, skipped) or one running
	// informs; one that could not write is a danger.
	Tone Tone
}

// checkStatusWords are the words of every status a check is shown with
// (ShownRunStatuses) and "" for none.
var checkStatusWords = map[string]StatusWords{
	string(CheckCompleted): {"Completed", "", ToneOK},
	// A check that ran to its end while some sources failed (the history
	// adds how many, and a link to the sources).
	string(CheckCompletedWithFailures): {"Completed with failures", "", ToneWarn},
	string(CheckRunning):               {"Running", "in progress now", ToneInfo},
	string(CheckBusy):                  {"Busy", "another check was running", ToneInfo},
	string(CheckCooldown):              {"Cooldown", "too soon after the last manual check", ToneInfo},
	string(CheckSkipped):               {"Skipped", "this period’s check had already completed", ToneInfo},
	string(CheckLeaseLost):             {"Interrupted", "it lost its lock before finishing", ToneWarn},
	string(CheckConnectionLost):        {"Interrupted", "lost its connection to the database", ToneWarn},
	string(StatusInterrupted):          {"Interrupted", "it lost its lock or its connection to the database before finishing", ToneWarn},
	string(CheckCancelled):             {"Cancelled", "the server was shutting down", ToneWarn},
	string(CheckFailed):                {"Failed", "it could not write its results", ToneDanger},
	string(StatusAbandoned):            {"Abandoned", "it stopped before its end was recorded", ToneWarn},
	"":                                 {"Unknown", "", ToneNeutral},
	// an import whose document was refused, as the history reads it
	string(StatusRefused): {"Refused", "", ToneWarn},
}

// CheckStatusText words a check status; one upcheck does not know is
// shown as it is, as a danger (no answer known to be good).
func CheckStatusText(status string) StatusWords {
	if w, ok := checkStatusWords[status]; ok {
		return w
	}
	return StatusWords{Label: status, Tone: ToneDanger}
}

// WordedCheckStatuses are the statuses CheckStatusText has words for.
func WordedCheckStatuses() []string {
	out := make([]string, 0, len(checkStatusWords))
	for s := range checkStatusWords {
		out = append(out, s)
	}
	return out
}

// TierText is what a policy's offer tier ("all", "minor", "patch",
// "security"; "" is all) lets through: "takes patch updates only". The
// detail page's policy line and an offer's "not offered: this site …"
// read it; security releases are offered whatever the tier.
func TierText(offer string) string {
	switch offer {
	case "minor":
		return "takes minor and patch updates only"
	case "patch":
		return "takes patch updates only"
	case "security":
		return "takes security updates only"
	}
	return "takes every update"
}

// PolicyText says a policy in words, as every page, answer and command
// says one: "takes patch updates only · soak 3 days · hold <3.0.0"; "every
// update, as soon as it is published" for none. offer is the tier (""
// all), hold the range outside which nothing is offered, soak the soak in
// words (DurationText; "" none), approve the policy's approve ("scripts";
// "" none).
func PolicyText(offer, hold, soak, approve string) string {
	if offer == "" && hold == "" && soak == "" && approve == "" {
		return "every update, as soon as it is published"
	}
	parts := []string{TierText(offer)}
	if soak != "" {
		parts = append(parts, "soak "+soak)
	}
	if hold != "" {
		parts = append(parts, "hold "+hold)
	}
	if approve != "" {
		parts = append(parts, "install scripts and outside sources await approval")
	}
	return strings.Join(parts, " · ")
}

// SkipRefusal is why a skip or an unskip of a version was refused, in
// one word; SkipRefusalText says it to the operator, on the page, in the
// API's answer and on the command line alike.
type SkipRefusal string

// The refusals.
const (
	SkipReasonRequired SkipRefusal = "reason_required"
	SkipReasonTooLong  SkipRefusal = "reason_too_long"
	SkipFromManifest   SkipRefusal = "from_manifest"
	SkipNotAVersion    SkipRefusal = "not_a_version"
	SkipNotNewer       SkipRefusal = "not_newer"
	SkipNoSuchRelease  SkipRefusal = "no_such_release"
	SkipPrerelease     SkipRefusal = "prerelease"
	SkipWayOut         SkipRefusal = "way_out"
	SkipSecurity       SkipRefusal = "security"
	SkipNotEvaluated   SkipRefusal = "not_evaluated"
)

// SkipRefusalText is a refused skip in one sentence, naming the version
// asked for, in words that hold on every surface (no "below", no "this
// page"); maxReason is the longest reason kept.
func SkipRefusalText(r SkipRefusal, version string, maxReason int) string {
	v := "“" + version + "”"
	switch r {
	case SkipReasonRequired:
		return "Give a reason for skipping this version: it is shown with the skip and kept in the audit log."
	case SkipReasonTooLong:
		return "The reason is too long: keep it to " + strconv.Itoa(maxReason) + " characters."
	case SkipFromManifest:
		return "The manifest declares this component’s skip, so it is reviewed with the site’s code: change it in the manifest, and sync the components."
	case SkipNotAVersion:
		return v + " is not a version: write it as the release list does, such as 2.4.0."
	case SkipNotNewer:
		return v + " is not newer than the installed version: it is not offered anyway."
	case SkipNoSuchRelease:
		return "The update source publishes no release " + v + ": pick one it publishes (the component’s page lists them)."
	case SkipPrerelease:
		return v + " is a pre-release, which is not offered to a site on a stable release: there is nothing to skip."
	case SkipWayOut:
		return v + " is the only way out of a known malicious or exploited advisory of the installed version (the oldest release it does not affect), which cannot be skipped: dismiss the advisory, with a reason, to accept the risk."
	case SkipSecurity:
		return v + " is a security release for this site, which cannot be skipped. To accept the risk of one of its advisories, dismiss the advisory, with a reason."
	case SkipNotEvaluated:
		return "The releases of this component are not known now (its last check could not evaluate it, or none has), so no version can be skipped. Try again after the next check."
	}
	return ""
}
