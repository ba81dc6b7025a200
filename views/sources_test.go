package views

import (
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

func TestSourcesFailingFirst(t *testing.T) {
	t.Parallel()
	root := doc(t, pages()["sources"])
	var order []string
	for _, r := range byTestID(root, "source-row") {
		state, _ := attr(r, "data-state")
		order = append(order, state)
	}
	if got := strings.Join(order, " "); got != "failing failing failing stale unfetched unfetched healthy healthy" {
		t.Errorf("source order %q", got)
	}
}

// A source never read is stale only 48 hours after its installation; then
// its badge says so instead of "Waiting for its first import".
func TestSourceNeverReadBadges(t *testing.T) {
	t.Parallel()
	words := func(s readmodel.SourceRow) string {
		var w []string
		for _, b := range sourceBadges(s) {
			w = append(w, b.Text)
		}
		return strings.Join(w, ", ")
	}
	if got := words(readmodel.SourceRow{URL: "offline:x", Offline: true}); got != "Waiting for its first import" {
		t.Errorf("offline, new: %q", got)
	}
	if got := words(readmodel.SourceRow{URL: "offline:x", Offline: true, Stale: true}); got !=
		"Stale: nothing read in the 48 hours since it was installed, Offline: imported, never fetched" {
		t.Errorf("offline, waiting for 48 hours: %q", got)
	}
	if got := words(readmodel.SourceRow{URL: "https://p.example/u.json", Failing: true, ConsecutiveFailures: 1}); got !=
		"Failing, 1 time in a row, Never fetched successfully" {
		t.Errorf("new and failing: %q", got)
	}
}
