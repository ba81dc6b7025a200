// The words of a check, each defined once: what each check status
// (readmodel.CheckStatusText) and trigger is called, for the history, the
// dashboard's widget and the audit log. app.js, after a check, takes the
// widget's note on the last check as the server renders it (data-live). The names and order of
// a component's and a source's states sit with their pages (catalog.go,
// sources.go).

package views

import (
	"encoding/json"
	"strings"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// checkStatus is how the pages show one check status: its words
// (readmodel.CheckStatusText: label, reason, tone) and whether it ran.
type checkStatus struct {
	readmodel.StatusWords
	// Ran: the run got to fetch, so its counts and duration mean something.
	// Not for refused runs (busy, cooldown, skipped), nor for one still
	// running or abandoned before it could record them.
	Ran bool
}

// notRan are the statuses of runs that did not get to fetch (checkStatus.Ran).
var notRan = map[string]bool{
	string(readmodel.CheckRunning): true, string(readmodel.CheckBusy): true, string(readmodel.CheckCooldown): true,
	string(readmodel.CheckSkipped): true, string(readmodel.StatusAbandoned): true,
}

// checkStatuses are the pages' statuses: every one readmodel words
// (readmodel.WordedCheckStatuses).
var checkStatuses = func() map[string]checkStatus {
	m := map[string]checkStatus{}
	for _, s := range readmodel.WordedCheckStatuses() {
		m[s] = runStatus(s)
	}
	return m
}()

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

// runStatus words a check's status (readmodel.CheckStatusText); an
// unknown one is shown as it is.
func runStatus(status string) checkStatus {
	return checkStatus{StatusWords: readmodel.CheckStatusText(status), Ran: !notRan[status]}
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
// check".
func lastCheckText(status, trigger, actor string) string {
	s := statusWord(status)
	if origin := originLabel(trigger, actor); origin != "" {
		s += ", " + strings.ToLower(origin) + " check"
	}
	return s
}
