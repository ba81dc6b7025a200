package views

import (
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The banner words the trust downgrades of a new publisher and of a
// lowered pin, never offers the new publisher's version as the move to
// make, and the dashboard counts updates waiting for their soak.
func TestAttentionWordsTrustDowngrades(t *testing.T) {
	t.Parallel()
	pub := readmodel.AttentionItem{Code: "journal", Name: "Journal", Installed: "2.3.0", UpdateVersion: strp("2.4.0"),
		Kind: readmodel.KindNewPublisher, NewPublisher: &readmodel.NewPublisher{Version: "2.4.0", Account: "mallory"}}
	pin := readmodel.AttentionItem{Code: "wiki", Name: "Wiki", Installed: "1.0.0",
		Kind: readmodel.KindPinDowngrade, PinDowngrade: &readmodel.PinDowngrade{Reason: "the manifest requires 1 signature where it required 2", At: now}}
	for _, c := range []struct {
		item readmodel.AttentionItem
		want string
	}{
		{pub, "Journal 2.3.0: trust downgrade: 2.4.0 was published by an account new to this package (mallory)"},
		{pin, "Wiki 1.0.0: trust downgrade: the manifest lowered the trust of this source's keys: the manifest requires 1 signature where it required 2"},
	} {
		if got := attentionSubject(c.item) + ": " + attentionProblem(c.item); got != c.want {
			t.Errorf("%s: %q, want %q", c.item.Code, got, c.want)
		}
	}
	s := readmodel.Summary{Components: 2, UpdatesAvailable: 1, Waiting: 2, TrustDowngrades: 2, Attention: []readmodel.AttentionItem{pub, pin}, AttentionTotal: 2}
	root := doc(t, Dashboard(DashboardProps{Layout: layout(s, true)}))
	if got := text(one(t, one(t, root, "security-alert"), "security-alert-text")); got != "2 trust downgrades need attention." {
		t.Errorf("banner %q", got)
	}
	if got := text(one(t, root, "widget-waiting")); got != "2" {
		t.Errorf("widget's waiting %q", got)
	}
	if items := text(one(t, root, "widget-attention-items")); !strings.Contains(items, "2.4.0 was published by an account new to this package") {
		t.Errorf("widget's items %q", items)
	}
}
