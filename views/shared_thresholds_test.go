package views

import (
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The cooldown is worded from the value in force (test timings shorten
// it), on the page, in the no-JavaScript outcome and in what app.js reads
// (data-cooldown-text, data-cooldown-seconds); the stale age from
// readmodel.StaleAge. No page types its own number.
func TestThresholdWordsFollowTheValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cooldown       time.Duration
		limit, seconds string
	}{
		{0, "one every 2 minutes", "120"}, // the production value, readmodel.ManualCooldown
		{readmodel.ManualCooldown, "one every 2 minutes", "120"},
		{time.Minute, "one every minute", "60"},
		{2 * time.Second, "one every 2 seconds", "2"},
	} {
		root := doc(t, Dashboard(DashboardProps{Layout: layout(readmodel.Summary{Stale: 1}, true), CanManage: true, Cooldown: tc.cooldown}))
		if page := render(t, Dashboard(DashboardProps{Layout: layout(calm(), true), CanManage: true, Cooldown: tc.cooldown})); !strings.Contains(page, "checks are limited to "+tc.limit+".") {
			t.Errorf("cooldown %v: the check panel does not say %q", tc.cooldown, tc.limit)
		}
		outcome := one(t, root, "check-outcome")
		want := "Checks are limited to " + tc.limit + "."
		if got, _ := attr(outcome, "data-cooldown-text"); got != want {
			t.Errorf("cooldown %v: data-cooldown-text %q, want %q", tc.cooldown, got, want)
		}
		if got, _ := attr(outcome, "data-cooldown-seconds"); got != tc.seconds {
			t.Errorf("cooldown %v: data-cooldown-seconds %q, want %q", tc.cooldown, got, tc.seconds)
		}
		msg := CheckOutcomeMessage(CheckOutcome{Status: "cooldown", RetryAfter: 1, Cooldown: tc.cooldown})
		if msg != want+" You can check again in 1 s." {
			t.Errorf("cooldown %v: outcome %q", tc.cooldown, msg)
		}
		if got := staleText(2); !strings.HasSuffix(got, " for over "+readmodel.DurationText(readmodel.StaleAge)+".") || !strings.Contains(got, "48 hours") {
			t.Errorf("stale warning %q", got)
		}
	}
}
