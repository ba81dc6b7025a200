package views

import (
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// auditLayout is an admin's layout: the navigation has the Audit log.
func auditLayout() LayoutProps {
	l := layout(calm(), true)
	l.User.CanAudit = true
	return l
}

// Each change of an advisory since its dismissal is worded precisely.
func TestChangeText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c    AdvisoryChange
		want string
	}{
		{AdvisoryChange{ChangeSeverity, "medium", "high"}, "severity raised from medium to high"},
		{AdvisoryChange{ChangeSeverity, "critical", "low"}, "severity lowered from critical to low"},
		{AdvisoryChange{ChangeSeverity, "moderate", "urgent"}, "severity changed from moderate to urgent"},
		{AdvisoryChange{ChangeSeverity, "", "high"}, "a severity was given: high"},
		{AdvisoryChange{ChangeSeverity, "high", ""}, "the severity was withdrawn (it was high)"},
		{AdvisoryChange{ChangeAffected, "<2.4.0", "<2.5.0"}, "the advisory now affects versions before 2.5.0 (it said it affects versions before 2.4.0)"},
		{AdvisoryChange{ChangeFixedIn, "", "2.4.1"}, "a fix was published: 2.4.1"},
		{AdvisoryChange{ChangeFixedIn, "2.4.1", ""}, "the fix was withdrawn (it was 2.4.1)"},
		{AdvisoryChange{ChangeFixedIn, "2.4.1", "2.4.2"}, "the fixed version changed from 2.4.1 to 2.4.2"},
	} {
		if got := changeText(tc.c); got != tc.want {
			t.Errorf("changeText(%+v) = %q, want %q", tc.c, got, tc.want)
		}
	}
}

// Why an advisory counts again, and until when a dismissal holds.
func TestReopenedAndUntilText(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)
	midnight := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	d := AdvisoryDismissal{By: "ada@example.org", At: at, Expired: true, ExpiresAt: &midnight}
	if got, want := reopenedText(d), "Counts again: the dismissal by ada@example.org on 2 Nov 2026 expired on the end of 31 Dec 2026 (UTC)."; got != want {
		t.Errorf("expired: %q, want %q", got, want)
	}
	d = AdvisoryDismissal{At: at, Changes: []AdvisoryChange{{ChangeSeverity, "medium", "high"}, {ChangeFixedIn, "", "2.4.1"}}}
	if got, want := reopenedText(d), "Counts again: the advisory changed since a script (no user) dismissed it on 2 Nov 2026: severity raised from medium to high; a fix was published: 2.4.1."; got != want {
		t.Errorf("changed: %q, want %q", got, want)
	}
	odd := time.Date(2027, 1, 1, 15, 4, 0, 0, time.UTC)
	for _, tc := range []struct {
		t    *time.Time
		want string
	}{
		{nil, "No expiry: until someone restores it or the advisory changes"},
		{&midnight, "the end of 31 Dec 2026 (UTC)"},
		{&odd, "2027-01-01 15:04 UTC"},
	} {
		if got := untilText(tc.t); got != tc.want {
			t.Errorf("untilText(%v) = %q, want %q", tc.t, got, tc.want)
		}
	}
}

// The refused form is open, refilled and says why; the other rows' forms
// are closed and empty; the facts of a dismissal in force are shown.
func TestDismissFormRefilled(t *testing.T) {
	t.Parallel()
	p := DetailProps{Layout: layout(calm(), true), DetailRow: readmodel.DetailRow{Code: "blog", Installed: "1.0.0", Evaluated: true},
		CanManage: true, Advisories: []AdvisoryRow{{ID: "A-1", Severity: "high"}, {ID: "A-2", Severity: "low"},
			{ID: "A-3", Dismissed: true, Dismissal: &AdvisoryDismissal{By: "ada@example.org", At: now.Add(-time.Hour), Reason: "WAF"}}}, DismissForm: DismissForm{AdvisoryID: "A-2", Reason: "because <b>", Expires: "2026-01-01", Error: "The expiry date has passed."}}
	html := render(t, ComponentDetail(p))
	if n := strings.Count(html, `data-testid="advisory-dismiss" open`); n != 1 {
		t.Fatalf("%d open dismiss forms, want the refused one", n)
	}
	for _, want := range []string{`>because &lt;b&gt;</textarea>`, `value="2026-01-01"`, `data-testid="dismiss-error">The expiry date has passed.<`,
		`aria-invalid="true"`, `data-testid="dismissal-reason">WAF<`, `min="2026-11-29"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}
