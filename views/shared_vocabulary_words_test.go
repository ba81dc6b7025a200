package views

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The pages word every value of readmodel's vocabularies: a value added
// there and not worded here would be shown raw (as an unknown one is).
func TestPagesWordEveryVocabulary(t *testing.T) {
	t.Parallel()
	for _, s := range append(readmodel.ShownRunStatuses(), readmodel.StatusInterrupted) {
		if _, ok := checkStatuses[string(s)]; !ok {
			t.Errorf("check status %s has no words", s)
		}
	}
	for _, tr := range readmodel.AllTriggers() {
		if triggerLabel(string(tr)) == string(tr) {
			t.Errorf("trigger %s has no words", tr)
		}
	}
	for _, e := range readmodel.AllEventTypes() {
		if eventTypeText(string(e)) == string(e) {
			t.Errorf("event type %s has no words", e)
		}
	}
	for _, a := range readmodel.AllAuditActions() {
		if auditWhat(readmodel.AuditRow{Action: string(a)}) == string(a) {
			t.Errorf("audit action %s has no words", a)
		}
	}
	for _, k := range readmodel.AllAuditKinds() {
		if k != readmodel.AuditKindOther && auditKindLabel(string(k)) == auditKindLabel(string(readmodel.AuditKindOther)) {
			t.Errorf("audit kind %s has no words of its own", k)
		}
	}
	for _, k := range readmodel.AllSourceKinds() {
		if sourceKindText(k) == string(k) {
			t.Errorf("source kind %s has no words", k)
		}
	}
	for _, k := range readmodel.AttentionKinds {
		// Each with the facts its kind has, and no other.
		v := "2.0.0"
		a := readmodel.AttentionItem{Kind: k, Installed: "1.0.0"}
		switch k {
		case readmodel.KindSecurity:
			a.SecurityRelease = &readmodel.ReleaseRef{Version: v, Installable: true}
		case readmodel.KindProvenanceLost:
			a.ProvenanceLost = &v
		case readmodel.KindDeprecated:
			a.Deprecated = &v
		case readmodel.KindNewPublisher:
			a.NewPublisher = &readmodel.NewPublisher{Version: v, Account: "someone"}
		case readmodel.KindPinDowngrade:
			a.PinDowngrade = &readmodel.PinDowngrade{Reason: "the manifest pins no key any more"}
		case readmodel.KindBrings:
			a.Brings = &readmodel.Signal{Kind: readmodel.SignalBurst, Args: readmodel.SignalArgs{Version: v, Count: 7, Window: 60}}
		default:
			a.Advisory = &readmodel.AdvisoryRef{ID: "A-1"}
		}
		if attentionProblem(a) == attentionProblem(readmodel.AttentionItem{Kind: "unknown"}) {
			t.Errorf("attention kind %s has no words of its own", k)
		}
	}
	for _, s := range readmodel.AllTrustStates() {
		if signatureBadge(string(s)).Text == string(s) {
			t.Errorf("trust state %s has no words", s)
		}
	}
}

// One status, one word, one tone: the history's badge, the check
// outcome's notice (CheckOutcomeTone, app.js's data-tones) and a feed
// sync's badge give a status readmodel.CheckStatusText's label and tone.
func TestOneTonePerStatus(t *testing.T) {
	t.Parallel()
	var tones map[string]string
	if err := json.Unmarshal([]byte(outcomeTonesJSON), &tones); err != nil {
		t.Fatal(err)
	}
	for _, s := range append(readmodel.ShownRunStatuses(), readmodel.StatusInterrupted) {
		w := readmodel.CheckStatusText(string(s))
		if got := runStatus(string(s)); got.Label != w.Label || got.Tone != w.Tone {
			t.Errorf("history: %s reads %q (%s), readmodel %q (%s)", s, got.Label, got.Tone, w.Label, w.Tone)
		}
		if s.Answered() || s == readmodel.StatusInterrupted {
			if got := CheckOutcomeTone(string(s)); got != string(w.Tone) || tones[string(s)] != got {
				t.Errorf("outcome: %s has the tone %s (data-tones %s), the history %s", s, got, tones[string(s)], w.Tone)
			}
		}
	}
	for _, s := range []readmodel.FeedSyncStatus{readmodel.FeedSyncRunning, readmodel.FeedSyncCompleted,
		readmodel.FeedSyncFailed, readmodel.FeedSyncInterrupted} {
		w := readmodel.CheckStatusText(string(s))
		if got := feedSyncStatusText(readmodel.FeedSyncRow{Status: s}); got.Text != w.Label || got.Tone != w.Tone {
			t.Errorf("feed sync: %s reads %q (%s), a check %q (%s)", s, got.Text, got.Tone, w.Label, w.Tone)
		}
	}
	interrupted := readmodel.CheckStatusText(string(readmodel.StatusInterrupted))
	if got := feedState(readmodel.FeedRow{InterruptedAt: new(time.Time)}); got.Text != interrupted.Label || got.Tone != interrupted.Tone {
		t.Errorf("feed: interrupted reads %q (%s), a check %q (%s)", got.Text, got.Tone, interrupted.Label, interrupted.Tone)
	}
}
