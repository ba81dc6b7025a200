package views

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// policyRows are catalog rows with what a policy held back and the trust
// downgrades, as the read model gives them (the reasons are the stored
// results' words).
func policyRows() []readmodel.CatalogRow {
	src := "https://acme.example/updates.json"
	base := func(code, name string) readmodel.CatalogRow {
		return readmodel.CatalogRow{Code: code, Name: name, Installed: "2.3.0", SourceURL: src, LastSuccessAt: ago(3 * time.Hour), Evaluated: true}
	}
	skipped := base("blog", "Blog")
	skipped.Latest = "2.4.0"
	skipped.Skipped = &readmodel.SkippedVersion{Version: "2.4.0", Reason: "breaks our theme", By: "ops@example.org", SkippedAt: *ago(24 * time.Hour)}
	waiting := base("forms", "Forms")
	waiting.Latest, waiting.UpdateVersion, waiting.UpdateAvailable = "2.5.0", "2.4.1", true
	until := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	waiting.Waiting = &readmodel.WaitingRelease{Version: "2.5.0", Until: &until, Reason: "waits until 4 Dec 18:00 UTC (soak 3 days)"}
	held := base("gallery", "Gallery")
	held.Latest = "3.0.0"
	held.Held = &readmodel.HeldRelease{Version: "3.0.0", Reason: "held by the policy <3.0.0"}
	tier := base("shop", "Shop")
	tier.Latest = "2.6.0"
	tier.Held = &readmodel.HeldRelease{Version: "2.6.0", Reason: "not offered: this site takes security updates only"}
	publisher := base("journal", "Journal")
	publisher.Latest, publisher.UpdateVersion, publisher.UpdateAvailable = "2.4.0", "2.4.0", true
	publisher.NewPublisher = &readmodel.NewPublisher{Version: "2.4.0", Account: "<b>mallory</b>"}
	pin := base("wiki", "Wiki")
	pin.Latest = "2.3.0"
	pin.PinDowngrade = &readmodel.PinDowngrade{Reason: "the manifest requires 1 signature where it required 2", At: *ago(2 * time.Hour)}
	return []readmodel.CatalogRow{skipped, waiting, held, tier, publisher, pin}
}

// The catalog says why a release is not offered, in the result's words,
// after "Up to date" or after the offered update, and names the trust
// downgrades (a publisher's account name escaped).
func TestCatalogSaysWhy(t *testing.T) {
	t.Parallel()
	root := doc(t, Catalog(CatalogProps{Layout: layout(calm(), true), Rows: policyRows(), Page: 1, Total: 6}))
	rows := byTestID(root, "catalog-row")
	want := map[string]string{
		"blog":    "No update offered · 2.4.0 skipped",
		"forms":   "Update to 2.4.1 · 2.5.0 waits until 4 Dec 18:00 UTC (soak 3 days)",
		"gallery": "No update offered · 3.0.0 held by the policy <3.0.0",
		"shop":    "No update offered · 2.6.0 not offered: this site takes security updates only",
		"journal": "Trust downgrade: 2.4.0 was published by an account new to this package (<b>mallory</b>)",
		"wiki":    "Trust downgrade: the manifest lowered the trust of this source's keys: the manifest requires 1 signature where it required 2",
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for _, r := range rows {
		code, _ := attr(r, "data-code")
		status := text(one(t, r, "catalog-status"))
		if !strings.Contains(status, want[code]) {
			t.Errorf("%s reads %q, want %q in it", code, status, want[code])
		}
		if state, _ := attr(r, "data-state"); code == "wiki" && state != rowProblem {
			t.Errorf("%s, a trust downgrade, has state %q, want %q", code, state, rowProblem)
		}
	}
	// Without the policy's facts the rows read as before: nothing said.
	for _, r := range policyRows() {
		r.Skipped, r.Waiting, r.Held = nil, nil, nil
		for _, b := range rowBadges(r, now) {
			if strings.Contains(b.Text, "skipped") || strings.Contains(b.Text, "waits") || strings.Contains(b.Text, "held") ||
				strings.Contains(b.Text, "not offered") {
				t.Errorf("%s without policy facts says %q", r.Code, b.Text)
			}
		}
	}
}

// The words of what the policy held back when the result has no reason
// for it (a reason is always stored; the row still says something true).
func TestPolicyNotesWithoutReasons(t *testing.T) {
	t.Parallel()
	until := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	r := readmodel.CatalogRow{Waiting: &readmodel.WaitingRelease{Version: "2.5.0", Until: &until}, Held: &readmodel.HeldRelease{Version: "3.0.0"}}
	if got := strings.Join(policyNotes(r), " · "); got != "2.5.0 waits until 4 Dec 18:00 UTC · 3.0.0 not offered by the policy" {
		t.Errorf("notes %q", got)
	}
	r.Waiting.Until = nil
	if got := policyNotes(r)[0]; got != "2.5.0 waits for its soak" {
		t.Errorf("a waiting release without a date: %q", got)
	}
}

// The catalog offers the waiting and skipped filters, with their counts,
// while a component is so or the filter is chosen, and not otherwise
// (most sites set no soak and skip nothing); the dashboard's waiting count
// links to the waiting filter.
func TestCatalogOffersWaitingAndSkipped(t *testing.T) {
	t.Parallel()
	links := func(p CatalogProps) map[readmodel.Filter]string {
		out := map[readmodel.Filter]string{}
		for _, a := range findAll(one(t, doc(t, Catalog(p)), "catalog-filters"), func(n *html.Node) bool { return n.Data == "a" }) {
			f, _ := attr(a, "data-filter")
			out[readmodel.Filter(f)] = text(a)
		}
		return out
	}
	got := links(CatalogProps{Layout: layout(calm(), true), Rows: policyRows(), Page: 1, Total: 6,
		Counts: map[readmodel.Filter]int{readmodel.FilterAll: 6, readmodel.FilterUpdates: 2, readmodel.FilterWaiting: 1, readmodel.FilterSkipped: 3}})
	if got[readmodel.FilterWaiting] != "Waiting for a soak (1)" || got[readmodel.FilterSkipped] != "Skipped (3)" {
		t.Errorf("with a waiting and skipped components the filters read %q", got)
	}
	got = links(CatalogProps{Layout: layout(calm(), true), Counts: map[readmodel.Filter]int{readmodel.FilterAll: 6}})
	if _, ok := got[readmodel.FilterWaiting]; ok {
		t.Errorf("no component waits, yet the waiting filter is offered: %q", got)
	}
	if _, ok := got[readmodel.FilterSkipped]; ok {
		t.Errorf("no skip hides a release, yet the skipped filter is offered: %q", got)
	}
	got = links(CatalogProps{Layout: layout(calm(), true), Filter: readmodel.FilterWaiting, Counts: map[readmodel.Filter]int{readmodel.FilterAll: 6, readmodel.FilterWaiting: 0}})
	if got[readmodel.FilterWaiting] != "Waiting for a soak (0)" {
		t.Errorf("the chosen waiting filter reads %q", got[readmodel.FilterWaiting])
	}
	if n := filterNoun(readmodel.FilterWaiting, 2); n != "components with a release waiting for its soak" {
		t.Errorf("waiting count words %q", n)
	}

	widget := one(t, doc(t, Dashboard(DashboardProps{Layout: layout(readmodel.Summary{Components: 3, Waiting: 2}, true)})), "widget-waiting")
	if a := widget.Parent; a == nil || a.Data != "a" {
		t.Fatalf("the waiting count is not in a link")
	} else if href, _ := attr(a, "href"); href != CatalogPath(readmodel.FilterWaiting, "", 0) {
		t.Errorf("the waiting count links to %q, want the waiting filter", href)
	}
}
