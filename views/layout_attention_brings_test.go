package views

import (
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The banner names an offered update that brings a signal by its most
// pressing one, with the move that offers it, and its sentence counts
// them, alone or after the other counts.
func TestAttentionWordsWhatAnUpdateBrings(t *testing.T) {
	t.Parallel()
	script := readmodel.AttentionItem{Code: "hulud", Name: "Hulud", Installed: "1.0.0", UpdateVersion: strp("1.0.1"),
		Kind: readmodel.KindBrings, Brings: &readmodel.Signal{Kind: readmodel.SignalInstallScript,
			Args: readmodel.SignalArgs{Version: "1.0.1", Name: "postinstall", Text: "node bundle.js", Added: true}}}
	if got, want := attentionSubject(script)+": "+attentionProblem(script),
		`Hulud 1.0.0 → 1.0.1: before you install it: 1.0.1 adds a postinstall script: "node bundle.js"`; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	s := readmodel.Summary{Components: 3, UpdatesAvailable: 2, Brings: 2, Attention: []readmodel.AttentionItem{script}, AttentionTotal: 2}
	root := doc(t, Dashboard(DashboardProps{Layout: layout(s, true)}))
	if got := text(one(t, one(t, root, "security-alert"), "security-alert-text")); got != "2 offered updates bring something to check before they are installed." {
		t.Errorf("banner %q", got)
	}
	s.Deprecated, s.Brings, s.AttentionTotal = 1, 1, 2
	if got := attentionAlertText(s); got != "1 deprecated installed version needs attention. 1 offered update brings something to check before it is installed." {
		t.Errorf("with a deprecated version: %q", got)
	}
}
