package web_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// The demo's first check is the widget's last check: the page and app.js
// word it as the history does ("demo start"), not as a command line check.
// After a refusal refreshes the summary, app.js takes the note as the
// server renders it (data-live): a note changed in the page gives way to
// the server's words.
func TestBrowserLastCheckByTheDemo(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	// A manual check first, so the click below is refused (cooldown) and
	// the demo's check stays the last one that ran.
	if res, err := b.checker.RunLockedUpdateCheck(ctx, lease.Manual, "admin@example.test"); err != nil || !res.Status.RanToEnd() {
		t.Fatalf("manual check: %+v %v", res, err)
	}
	if res, err := b.checker.RunLockedUpdateCheck(ctx, lease.Operator, readmodel.ActorDemo); err != nil || !res.Status.RanToEnd() {
		t.Fatalf("the demo's check: %+v %v", res, err)
	}
	bctx := browser(t)
	signIn(t, bctx, b.server.URL, "admin@example.test")
	if got := text(t, bctx, "widget-last-check"); !strings.HasSuffix(got, "(completed with failures, demo start check)") {
		t.Fatalf("last check = %q, want the demo's words", got)
	}
	if err := chromedp.Do(bctx,
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="widget-last-check"]').textContent = "not yet refreshed"`),
		chromedp.Click(chromedp.CSS(`[data-testid="check-button"]`)),
	); err != nil {
		t.Fatal(err)
	}
	waitText(t, bctx, "check-outcome", regexp.MustCompile(`again in \d+`))
	// The note is the server's again (data-live), in the demo's words.
	waitText(t, bctx, "widget-last-check", regexp.MustCompile(`\(completed with failures, demo start check\)$`))
}
