package views

import (
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The banner's one list ranks what brings a signal by the signal, whether
// an offered update or a lockfile change brings it: a lockfile change's
// new install script comes before an offer's burst, and after an offer's
// exotic source; an advisory comes before both.
func TestAttentionEntriesRankSignalsAcrossTheTree(t *testing.T) {
	t.Parallel()
	s := readmodel.Summary{
		Attention: []readmodel.AttentionItem{
			{Code: "src", Name: "Src", Kind: readmodel.KindBrings, Brings: &readmodel.Signal{Kind: readmodel.SignalExoticSource}},
			{Code: "bur", Name: "Bur", Kind: readmodel.KindBrings, Brings: &readmodel.Signal{Kind: readmodel.SignalBurst}},
		},
		TreeAttention: readmodel.TreeAttentionItems{
			{Name: "debug", Version: "2.6.9", Kind: readmodel.KindVulnerable, AdvisoryID: "GHSA-1"},
			{Name: "lib", Version: "1.1.0", Kind: readmodel.KindBrings, Brings: &readmodel.Signal{Kind: readmodel.SignalInstallScript}},
		},
	}
	entries, _, _ := attentionEntries(s, 10)
	var got []string
	for _, e := range entries {
		if e.Component != nil {
			got = append(got, e.Component.Code)
		} else {
			got = append(got, e.Tree.Name)
		}
	}
	want := []string{"debug", "lib", "src", "bur"}
	if len(got) != len(want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("entries %v, want %v", got, want)
		}
	}
}
