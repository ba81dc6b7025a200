// The words of a check, each defined once: what each check status and
// trigger is called, for the history, the dashboard's widget and the audit
// log. app.js, which words the widget's last check after a check, reads
// the status and trigger words from the data attributes the widget carries
// (statusWordsJSON) instead of keeping its own copy. The names and order of
// a component's and a source's states sit with their pages (catalog.go,
// sources.go).

package views

import (
	"encoding/json"
	"strings"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// checkStatus is how the pages word one check status.
type checkStatus struct {
	// Label is the history's badge ("Interrupted"); lower-cased, it is the
	// widget's note ("interrupted, manual check").
	Label string
	// Reason says why in a few words; "" when the label says it all.
	Reason string
	Tone   tone
	// Ran: the run got to fetch, so its counts and duration mean something.
	// Not for refused runs (busy, cooldown, skipped), nor for one still
	// running or abandoned before it could record them.
	Ran bool
}

// checkStatuses are the words for every check status: the statuses of
// check_runs, "interrupted" (the API's name for lease_lost, which
// connection_lost also answers), "abandoned" (a run still marked running
// whose lease ran out, as the history reads it: its process died or froze,
// or could not reach the database until then) and "" for none.
var checkStatuses = map[string]checkStatus{
	string(readmodel.CheckCompleted): {"Completed", "", toneOK, true},
	// A check that ran to its end while some sources failed (the history
	// adds how many, and a link to the sources).
	string(readmodel.CheckCompletedWithFailures): {"Completed with failures", "", toneWarn, true},
	string(readmodel.CheckRunning):               {"Running", "in progress now", toneInfo, false},
	string(readmodel.CheckBusy):                  {"Busy", "another check was running", toneNeutral, false},
	string(readmodel.CheckCooldown):              {"Cooldown", "too soon after the last manual check", toneNeutral, false},
	string(readmodel.CheckSkipped):               {"Skipped", "this period’s check had already completed", toneNeutral, false},
	string(readmodel.CheckLeaseLost):             {"Interrupted", "it lost its lock before finishing", toneWarn, true},
	string(readmodel.CheckConnectionLost):        {"Interrupted", "lost its connection to the database", toneWarn, true},
	string(readmodel.StatusInterrupted):          {"Interrupted", "it lost its lock or its connection to the database before finishing", toneWarn, true},
	string(readmodel.CheckCancelled):             {"Cancelled", "the server was shutting down", toneWarn, true},
	string(readmodel.CheckFailed):                {"Failed", "it could not write its results", toneDanger, true},
	string(readmodel.StatusAbandoned):            {"Abandoned", "it stopped before its end was recorded", toneWarn, false},
	"":                                           {"Unknown", "", toneNeutral, true},
	string(readmodel.StatusRefused):              {"Refused", "", toneWarn, true}, // an import whose document was refused, as the history reads it (shownStatus)
}

// triggerLabels word what started a check.
var triggerLabels = map[string]string{
	string(readmodel.TriggerScheduled): "Scheduled",
	string(readmodel.TriggerManual):    "Manual",
	string(readmodel.TriggerOperator):  "Command line",
	string(readmodel.TriggerImport):    "Document import", // upcheck source import, the Sources page's upload form
}

// actorOrigins word what started a run when its actor, not its trigger,
// says it: the demo's own first check is the demo's, not an operator's
// command line.
var actorOrigins = map[string]string{
	readmodel.ActorDemo: "Demo start",
}

// originLabel words what started a run, in the history's "Trigger" column
// and (lower-cased) the widget's note: the actor's origin when it has one
// (actorOrigins), else the trigger.
func originLabel(trigger, actor string) string {
	if l, ok := actorOrigins[actor]; ok {
		return l
	}
	return triggerLabel(trigger)
}

// actorLabel words who started a run (readmodel.ActorText): a user's
// email as it is.
func actorLabel(actor string) string {
	return readmodel.ActorText(actor)
}

// statusNotes are the widget's words for the statuses whose label alone
// would not say what happened (statusWord).
var statusNotes = map[string]string{
	string(readmodel.CheckConnectionLost): "interrupted: lost its connection to the database",
}

// statusWord is a status in the widget's note on the last check: its
// label, lower-cased, or its statusNotes entry.
func statusWord(status string) string {
	if w, ok := statusNotes[status]; ok {
		return w
	}
	return strings.ToLower(runStatus(status).Label)
}

// runStatus words a check's status; an unknown one is shown as it is.
func runStatus(status string) checkStatus {
	if w, ok := checkStatuses[status]; ok {
		return w
	}
	return checkStatus{Label: status, Tone: toneNeutral, Ran: true}
}

// ranChecks is whether a run got to fetch (checkStatus.Ran).
func ranChecks(status string) bool {
	return runStatus(status).Ran
}

// triggerLabel words what started a check; an unknown trigger is shown as
// it is.
func triggerLabel(trigger string) string {
	if l, ok := triggerLabels[trigger]; ok {
		return l
	}
	return trigger
}

// statusWordsJSON, triggerWordsJSON and actorWordsJSON are the words of
// the widget's note on the last check, lower-cased, as JSON objects from a
// status, a trigger and an actor (actorOrigins, which win over the
// trigger's) to its word. The widget carries them in data-status-words,
// data-trigger-words and data-actor-words, where app.js reads them.
var statusWordsJSON, triggerWordsJSON, actorWordsJSON = checkWordsJSON()

func checkWordsJSON() (statuses, triggers, actors string) {
	s := make(map[string]string, len(checkStatuses))
	for k := range checkStatuses {
		s[k] = statusWord(k)
	}
	return mustJSON(s), mustJSON(lowered(triggerLabels)), mustJSON(lowered(actorOrigins))
}

// lowered is m with its words lower-cased.
func lowered(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, l := range m {
		out[k] = strings.ToLower(l)
	}
	return out
}

// mustJSON encodes a map of strings, which cannot fail (keys are sorted).
func mustJSON(m map[string]string) string {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// lastCheckText words a check's status and what started it, as the history
// does (originLabel): "completed, manual check", "completed, demo start
// check". app.js builds the same note from statusWordsJSON,
// triggerWordsJSON and actorWordsJSON.
func lastCheckText(status, trigger, actor string) string {
	s := statusWord(status)
	if origin := originLabel(trigger, actor); origin != "" {
		s += ", " + strings.ToLower(origin) + " check"
	}
	return s
}
