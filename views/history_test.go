package views

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/upcheck/upcheck/internal/readmodel"
)

func TestHistoryStatusesInWords(t *testing.T) {
	t.Parallel()
	root := doc(t, pages()["history"])
	want := map[string]string{
		"running": "Running", "cooldown": "Cooldown", "completed": "Completed", "skipped": "Skipped",
		"busy": "Busy", "lease_lost": "Interrupted", "cancelled": "Cancelled", "failed": "Failed",
		"abandoned": "Abandoned",
	}
	for _, r := range byTestID(root, "history-row") {
		status, _ := attr(r, "data-status")
		if !strings.Contains(text(r), want[status]) {
			t.Errorf("%s row says %q", status, text(r))
		}
	}
}

// A refused import reads "Refused" in the history; a check cut off counts
// the sources it fetched but did not save apart from those it never
// fetched; the command line is "command line" in the history and the
// audit log alike.
func TestHistoryWordsWhatHappened(t *testing.T) {
	t.Parallel()
	root := doc(t, History(HistoryProps{Layout: layout(calm(), true), Runs: []readmodel.RunRow{
		{ID: 3, Trigger: "import", Actor: readmodel.ActorCLI, Status: "completed_with_failures", StartedAt: now.Add(-time.Hour),
			FinishedAt: ago(time.Hour), Failed: 1},
		{ID: 2, Trigger: "operator", Actor: readmodel.ActorCLI, Status: "cancelled", StartedAt: now.Add(-2 * time.Hour),
			FinishedAt: ago(2 * time.Hour), Fetched: 1, Skipped: 3, Unwritten: 2},
		{ID: 1, Trigger: "operator", Actor: readmodel.ActorCLI, Status: "cancelled", StartedAt: now.Add(-3 * time.Hour),
			FinishedAt: ago(3 * time.Hour), Fetched: 1, Skipped: 1},
	}}))
	rows := byTestID(root, "history-row")
	if got := visibleText(rows[0]); !strings.Contains(got, "Refused") || strings.Contains(got, "Completed with failures") {
		t.Errorf("a refused import: %q", got)
	}
	for i, want := range []string{"", "1 fetched, 0 unchanged, 0 failed, 2 fetched but not saved, 1 not fetched (the check stopped first)",
		"1 fetched, 0 unchanged, 0 failed, 1 not fetched (the check stopped first)"} {
		if got := visibleText(rows[i]); want != "" && !strings.Contains(got, want) {
			t.Errorf("row %d: %q, want %q", i, got, want)
		}
		if got := visibleText(rows[i]); strings.Contains(got, "not started") || strings.Contains(got, "upcheck check") ||
			!strings.Contains(got, "command line") {
			t.Errorf("row %d words the command line or its counts wrongly: %q", i, got)
		}
	}
	audit := visibleText(doc(t, Audit(AuditProps{Layout: auditLayout(), Page: 1, Total: 2, Rows: []readmodel.AuditRow{
		{At: now, Kind: string(readmodel.AuditKindCheck), Action: "check", Actor: readmodel.ActorCLI, Trigger: "operator", Status: "completed"},
		{At: now, Kind: string(readmodel.AuditKindAccount), Action: "user.create", DetailText: "email: a@x"},
	}})))
	if strings.Count(audit, "command line") < 2 || strings.Contains(audit, "cli") || strings.Contains(audit, "the command line") {
		t.Errorf("the audit page words the command line otherwise: %q", audit)
	}
	if got := AuditActorText("", "user.create"); got != readmodel.ActorText(readmodel.ActorCLI) || got != "command line" {
		t.Errorf("an entry without an actor: %q", got)
	}
}

// A run that failed on sources links to the Source health of the page's
// site: the local one's from the check history, a registered site's from
// its History page.
func TestFailedRunsLinkTheirSitesSources(t *testing.T) {
	t.Parallel()
	runs := []readmodel.RunRow{{ID: 1, Trigger: "cron", Status: "completed_with_failures", StartedAt: now.Add(-time.Hour),
		FinishedAt: ago(time.Hour), Fetched: 2, Failed: 1}}
	site := layout(calm(), false)
	site.Site = "acme"
	for name, page := range map[string]struct {
		root *html.Node
		want string
	}{
		"local": {doc(t, History(HistoryProps{Layout: layout(calm(), false), Runs: runs})), PathSources},
		"acme":  {doc(t, SiteHistory(SiteHistoryProps{Layout: site, Page: 1, Runs: runs})), "/sites/acme/sources"},
	} {
		failed := byTestID(page.root, "history-failed-sources")
		if len(failed) != 1 {
			t.Fatalf("%s: %d runs say failed sources", name, len(failed))
		}
		var hrefs []string
		for _, a := range findAll(failed[0], func(n *html.Node) bool { return n.Data == "a" }) {
			href, _ := attr(a, "href")
			hrefs = append(hrefs, href)
		}
		if len(hrefs) != 1 || hrefs[0] != page.want {
			t.Errorf("%s: a failed run links %v, want %s", name, hrefs, page.want)
		}
	}
}

// A registered site whose pushes' audit rows are past the log's retention
// is not said to have pushed nothing.
func TestSiteHistoryWithoutRecordedPushes(t *testing.T) {
	t.Parallel()
	l := layout(calm(), false)
	l.Site = "acme"
	never := visibleText(one(t, doc(t, SiteHistory(SiteHistoryProps{Layout: l, Page: 1})), "site-pushes-empty"))
	old := visibleText(one(t, doc(t, SiteHistory(SiteHistoryProps{Layout: l, Page: 1, PushedAt: ago(400 * 24 * time.Hour)})), "site-pushes-empty"))
	if !strings.Contains(never, "No push has been accepted") {
		t.Errorf("a site that never pushed: %q", never)
	}
	if strings.Contains(old, "No push has been accepted") || !strings.Contains(old, "the audit log no longer keeps them") {
		t.Errorf("a site whose pushes are past the audit log's retention: %q", old)
	}
}
