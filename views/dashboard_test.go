package views

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The dashboard names the component never read successfully and links to
// it, and says when the next check runs.
func TestDashboardNeverAndNextCheck(t *testing.T) {
	t.Parallel()
	s := readmodel.Summary{Components: 2, NeverSucceeded: &readmodel.ComponentRef{Code: "shop", Name: "Shop"}}
	root := doc(t, Dashboard(DashboardProps{Layout: layout(s, true)}))
	if got := text(one(t, root, "widget-oldest-success")); got != "never (Shop has never been read successfully)" {
		t.Errorf("oldest success %q", got)
	}
	if h, _ := attr(one(t, root, "widget-never-succeeded"), "href"); h != "/admin/plugins/shop" {
		t.Errorf("never links to %q", h)
	}
	if got := text(one(t, root, "widget-next-check")); got != "not scheduled" {
		t.Errorf("next check without a schedule %q", got)
	}
	s.NextCheckAt = in(4*time.Hour + 17*time.Minute)
	root = doc(t, Dashboard(DashboardProps{Layout: layout(s, true)}))
	if got := text(one(t, root, "widget-next-check")); got != "today at 16:17 UTC" {
		t.Errorf("next check %q", got)
	}
}

func TestCheckButton(t *testing.T) {
	t.Parallel()
	manager := doc(t, Dashboard(DashboardProps{Layout: layout(calm(), true), CanManage: true}))
	form := one(t, manager, "check-form")
	if m, _ := attr(form, "method"); m != "post" {
		t.Errorf("check form method %q", m)
	}
	if a, _ := attr(form, "action"); a != PathCheck {
		t.Errorf("check form action %q", a)
	}
	if b := one(t, form, "check-button"); text(b) != "Check for updates" {
		t.Errorf("button says %q", text(b))
	}
	outcome := one(t, manager, "check-outcome")
	if v, _ := attr(outcome, "aria-live"); v != "polite" {
		t.Errorf("outcome aria-live = %q", v)
	}

	viewer := doc(t, Dashboard(DashboardProps{Layout: layout(calm(), false), CanManage: false}))
	if n := len(byTestID(viewer, "check-button")) + len(byTestID(viewer, "check-form")); n != 0 {
		t.Errorf("viewer sees the check button")
	}
}

func TestWidget(t *testing.T) {
	t.Parallel()
	root := doc(t, Dashboard(DashboardProps{Layout: layout(attention(), true), CanManage: true}))
	for id, want := range map[string]string{
		"widget-updates":        "3",
		"widget-security":       "2",
		"widget-vulnerable":     "1",
		"widget-failing":        "1",
		"widget-last-check":     "3 hours ago (completed, manual check)",
		"widget-oldest-success": "3 days ago",
		"widget-stale":          "2 components have not been checked successfully for over 48 hours.",
	} {
		if got := text(one(t, root, id)); !strings.Contains(got, want) {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	if hidden(one(t, root, "widget-stale")) {
		t.Error("stale warning hidden with 2 stale components")
	}
	if !hidden(one(t, root, "widget-check-running")) {
		t.Error("running indicator shown while no check runs")
	}

	never := doc(t, Dashboard(DashboardProps{Layout: layout(readmodel.Summary{Components: 2, CheckRunning: true}, true)}))
	for _, id := range []string{"widget-last-check", "widget-oldest-success"} {
		if got := text(one(t, never, id)); !strings.HasPrefix(got, "never") {
			t.Errorf("never checked: %s = %q", id, got)
		}
	}
	if !hidden(one(t, never, "widget-stale")) {
		t.Error("stale warning shown with no stale components")
	}
	if hidden(one(t, never, "widget-check-running")) {
		t.Error("running indicator hidden while a check runs")
	}
}

// The demo's first check (the operator trigger, actor "demo") is worded in
// the widget's note as the history words it: "Demo start", not "command
// line"; `upcheck check` keeps "command line".
func TestLastCheckNoteNamesTheDemo(t *testing.T) {
	t.Parallel()
	for actor, want := range map[string]string{
		readmodel.ActorDemo: "3 hours ago (completed with failures, demo start check)",
		readmodel.ActorCLI:  "3 hours ago (completed with failures, command line check)",
	} {
		sum := attention()
		sum.LastCheck = &readmodel.LastCheck{Status: "completed_with_failures", Trigger: "operator", Actor: actor, FinishedAt: ago(3 * time.Hour)}
		root := doc(t, Dashboard(DashboardProps{Layout: layout(sum, true), CanManage: true}))
		if got := text(one(t, root, "widget-last-check")); got != want {
			t.Errorf("%s: the widget says %q, want %q", actor, got, want)
		}
		history := doc(t, History(HistoryProps{Layout: layout(sum, true), Runs: []readmodel.RunRow{{ID: 1, Trigger: "operator", Actor: actor,
			Status: "completed_with_failures", StartedAt: now.Add(-3 * time.Hour), FinishedAt: ago(3 * time.Hour)}}}))
		if origin := strings.ToLower(originLabel("operator", actor)); !strings.Contains(want, origin+" check") ||
			!strings.Contains(strings.ToLower(text(history)), origin) {
			t.Errorf("%s: the history words it %q, the widget %q", actor, origin, want)
		}
	}
}

func TestCheckOutcomeMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o    CheckOutcome
		want string
	}{
		{CheckOutcome{Status: "completed", Fetched: 3, NotModified: 1, Failed: 0}, "Check completed: 3 sources fetched, 1 unchanged, 0 failed."},
		{CheckOutcome{Status: "completed", Fetched: 1}, "Check completed: 1 source fetched, 0 unchanged, 0 failed."},
		{CheckOutcome{Status: "busy"}, "A check is already running. Try again in a few minutes."},
		{CheckOutcome{Status: "lease_lost"}, "The check was interrupted (it lost its lock or its connection to the database) and will be retried."},
		{CheckOutcome{Status: "interrupted"}, "The check was interrupted (it lost its lock or its connection to the database) and will be retried."},
		{CheckOutcome{Status: "cooldown", RetryAfter: 87}, "Checks are limited to one every 2 minutes. You can check again in 1 min 27 s."},
		{CheckOutcome{Status: "cooldown", RetryAfter: 113}, "Checks are limited to one every 2 minutes. You can check again in 1 min 53 s."},
		{CheckOutcome{Status: "cooldown", RetryAfter: 45}, "Checks are limited to one every 2 minutes. You can check again in 45 s."},
		{CheckOutcome{Status: "completed_with_failures", Fetched: 3, Failed: 1},
			"Check completed with failures: 3 sources fetched, 0 unchanged, 1 failed. Source health says why."},
		{CheckOutcome{Status: "failed"}, "The check could not run. Try again later."},
	} {
		if got := CheckOutcomeMessage(tc.o); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.o, got, tc.want)
		}
	}
}

// The widget gives the count of known malicious packages only once an OSV
// feed was read (0 then is a fact), and until then says that none was
// read, never "0 known malicious packages"; the catalog's empty malicious
// page says the same.
func TestWidgetSaysMalwareWasNotChecked(t *testing.T) {
	t.Parallel()
	unread := readmodel.Summary{Components: 3, Attention: []readmodel.AttentionItem{}}
	root := doc(t, Dashboard(DashboardProps{Layout: layout(unread, true)}))
	count, words := one(t, root, "widget-malicious"), one(t, root, "widget-malware-unread")
	if item := count.Parent.Parent; !hidden(item) {
		t.Errorf("no OSV feed was read, yet the widget shows %q", text(item))
	}
	if hidden(words) || text(words) != "Malicious packages not checked: no OSV advisory feed has been read" {
		t.Errorf("no OSV feed was read: the widget says %q (hidden %v)", text(words), hidden(words))
	}
	if got := catalogEmptyText(CatalogProps{Layout: layout(unread, true), Filter: readmodel.FilterMalicious, MalwareRead: false}); !strings.Contains(got, "No OSV advisory feed has been read") {
		t.Errorf("the empty malicious filter, nothing read, says %q", got)
	}

	read := unread
	read.Malicious, read.MalwareReadAt = new(int), ago(time.Hour)
	root = doc(t, Dashboard(DashboardProps{Layout: layout(read, true)}))
	count, words = one(t, root, "widget-malicious"), one(t, root, "widget-malware-unread")
	if item := count.Parent.Parent; hidden(item) || text(item) != "0 known malicious packages" {
		t.Errorf("an OSV feed was read: the widget shows %q (hidden %v)", text(item), hidden(item))
	}
	if !hidden(words) {
		t.Errorf("an OSV feed was read, yet the widget says %q", text(words))
	}
	if got := catalogEmptyText(CatalogProps{Layout: layout(read, true), Filter: readmodel.FilterMalicious, MalwareRead: true}); got != "No installed package is matched by an advisory saying it is malicious." {
		t.Errorf("the empty malicious filter, OSV read, says %q", got)
	}
}

// Likewise the count of components exploited in the wild is given only
// once the KEV catalogue was read, and until then the widget says it was
// not, linking to the feeds; the catalog's empty exploited page says the
// same. An OSV feed read alone changes nothing (it names no exploited
// advisory).
func TestWidgetSaysExploitedWasNotChecked(t *testing.T) {
	t.Parallel()
	unread := readmodel.Summary{Components: 3, Attention: []readmodel.AttentionItem{}, Malicious: new(int), MalwareReadAt: ago(time.Hour)}
	root := doc(t, Dashboard(DashboardProps{Layout: layout(unread, true)}))
	count, words := one(t, root, "widget-exploited"), one(t, root, "widget-exploited-unread")
	if item := count.Parent.Parent; !hidden(item) {
		t.Errorf("the KEV catalogue was not read, yet the widget shows %q", text(item))
	}
	if hidden(words) || text(words) != "Exploited advisories not checked: the KEV catalogue has not been read" {
		t.Errorf("the KEV catalogue was not read: the widget says %q (hidden %v)", text(words), hidden(words))
	}
	var href string
	for c := words.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == "a" {
			href, _ = attr(c, "href")
		}
	}
	if href != PathSources+"#feeds-title" {
		t.Errorf("the unread words link to %q, want the feeds on Source health", href)
	}
	if got := catalogEmptyText(CatalogProps{Layout: layout(unread, true), Filter: readmodel.FilterKnownExploited, MalwareRead: true}); !strings.Contains(got, "The KEV catalogue has not been read") {
		t.Errorf("the empty exploited filter, KEV not read, says %q", got)
	}

	read := unread
	read.KnownExploited, read.ExploitedReadAt = new(int), ago(time.Hour)
	root = doc(t, Dashboard(DashboardProps{Layout: layout(read, true)}))
	count, words = one(t, root, "widget-exploited"), one(t, root, "widget-exploited-unread")
	if item := count.Parent.Parent; hidden(item) || text(item) != "0 exploited in the wild" {
		t.Errorf("the KEV catalogue was read: the widget shows %q (hidden %v)", text(item), hidden(item))
	}
	if !hidden(words) {
		t.Errorf("the KEV catalogue was read, yet the widget says %q", text(words))
	}
	if got := catalogEmptyText(CatalogProps{Layout: layout(read, true), Filter: readmodel.FilterKnownExploited, MalwareRead: true, ExploitedRead: true}); got != "No open advisory of an installed version is in the KEV catalogue of vulnerabilities exploited in the wild." {
		t.Errorf("the empty exploited filter, KEV read, says %q", got)
	}
}
