package views

import (
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// A check that lost the database is recorded connection_lost: the history
// reads "Interrupted" and "lost its connection to the database", the
// dashboard's note on the last check says the same (and app.js gets that
// word from the widget); a lost lock is worded apart, and a run whose end
// was never recorded is not said to have been stopped by the server.
func TestInterruptedRunsInWords(t *testing.T) {
	t.Parallel()
	root := doc(t, History(HistoryProps{Layout: layout(calm(), true), Runs: []readmodel.RunRow{
		{ID: 3, Trigger: "manual", Actor: "ops@example.org", Status: "connection_lost", StartedAt: now.Add(-2 * time.Minute),
			FinishedAt: ago(time.Minute), DurationMS: 61000, Skipped: 2, Error: "update check lease lost: database unreachable"},
		{ID: 2, Trigger: "scheduled", Actor: "cron", Status: "lease_lost", StartedAt: now.Add(-2 * time.Minute), FinishedAt: ago(time.Minute)},
		{ID: 1, Trigger: "scheduled", Actor: "cron", Status: "abandoned", StartedAt: now.Add(-2 * time.Minute)},
	}}))
	want := map[string]string{
		"connection_lost": "Interrupted lost its connection to the database",
		"lease_lost":      "Interrupted it lost its lock before finishing",
		"abandoned":       "Abandoned it stopped before its end was recorded",
	}
	for _, r := range byTestID(root, "history-row") {
		status, _ := attr(r, "data-status")
		if got := strings.Join(strings.Fields(text(r)), " "); !strings.Contains(got, want[status]) {
			t.Errorf("%s row says %q, want %q", status, got, want[status])
		}
		if strings.Contains(text(r), "server") {
			t.Errorf("%s row blames the server: %q", status, text(r))
		}
	}

	s := calm()
	s.LastCheck = &readmodel.LastCheck{Status: "connection_lost", Trigger: "manual", Actor: "ops@example.org", FinishedAt: ago(time.Minute)}
	last := one(t, doc(t, Dashboard(DashboardProps{Layout: layout(s, true), CanManage: true})), "widget-last-check")
	if got := text(last); !strings.Contains(got, "(interrupted: lost its connection to the database, manual check)") {
		t.Errorf("the dashboard's last check says %q", got)
	}
	if v, _ := attr(last, "data-live"); v != "widget-last-check" {
		t.Errorf("app.js would word connection_lost otherwise: the note is not the server's (data-live %q)", v)
	}
}
