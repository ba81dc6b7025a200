package views

import (
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// A check's audit entry names what started it as the history does: the
// demo's start check is the demo's, not the command line's; and the
// entries upcheck made itself say so, not "nobody".
func TestAuditWordsWhoStartedIt(t *testing.T) {
	t.Parallel()
	start := readmodel.AuditRow{Action: string(readmodel.AuditCheck), Status: "completed", Trigger: string(readmodel.TriggerOperator), Actor: readmodel.ActorDemo}
	if got := auditWhat(start); got != "Completed (Demo start)" {
		t.Errorf("the demo's start check: %q", got)
	}
	cli := readmodel.AuditRow{Action: string(readmodel.AuditCheck), Status: "completed", Trigger: string(readmodel.TriggerOperator), Actor: readmodel.ActorCLI}
	if got := auditWhat(cli); got != "Completed (Command line)" {
		t.Errorf("a command line check: %q", got)
	}
	for _, a := range []readmodel.AuditAction{readmodel.AuditAdvisoryExpire, readmodel.AuditUserLockout, readmodel.AuditRegistryKeysPin} {
		if got := AuditActorText("", string(a)); len(got) < 6 || got[:6] == "nobody" {
			t.Errorf("%s: by %q", a, got)
		}
	}
}
