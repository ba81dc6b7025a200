package views

import (
	"testing"

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
		if auditWhat(AuditRow{Action: string(a)}) == string(a) {
			t.Errorf("audit action %s has no words", a)
		}
	}
	for _, k := range readmodel.AllAuditKinds() {
		if k != readmodel.AuditKindOther && auditKindLabel(string(k)) == auditKindLabel(string(readmodel.AuditKindOther)) {
			t.Errorf("audit kind %s has no words of its own", k)
		}
	}
	for _, s := range readmodel.AllTrustStates() {
		if signatureBadge(string(s)).Text == string(s) {
			t.Errorf("trust state %s has no words", s)
		}
	}
}
