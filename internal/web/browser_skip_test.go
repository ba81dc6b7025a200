package web_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/upcheck/upcheck/internal/lease"
)

// Skipping in a browser: open the skip of core's offered 1.10.0, send it
// without a reason (the server's refusal, not the browser's check, is what
// comes back: the form open, the error beside it), then with one; the page
// says it is skipped, by whom, and ends it with one button. Each state
// passes the accessibility audit (a11y_test.go).
func TestBrowserSkip(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, err := b.checker.RunLockedUpdateCheck(context.Background(), lease.Operator, "test"); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	signIn(t, ctx, b.server.URL, "admin@example.test")
	// Each step has its own deadline; the audits take what they take.
	do := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatal(err)
		}
	}
	audit := func(state string) {
		t.Helper()
		for _, v := range a11yAudit(t, ctx) {
			t.Errorf("%s: %s", state, v)
		}
	}
	// Each state is audited last, before the next state's page is opened
	// again.
	page := b.server.URL + "/admin/plugins/core"
	openForm := []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(page),
		chromedp.Click(chromedp.CSS(`[data-testid="skip"] summary`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="skip-reason"]`)),
	}
	do(openForm...)
	audit("the form open")

	// The browser would refuse an empty required field: remove the
	// attribute, as a script or an old browser would send it.
	do(openForm...)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('[data-testid="skip-reason"]').removeAttribute('required'); true`)); err != nil {
		t.Fatal(err)
	}
	do(
		chromedp.Click(chromedp.CSS(`[data-testid="skip-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="skip-error"]`)),
	)
	waitText(t, ctx, "skip-error", regexp.MustCompile(`^Give a reason`))
	audit("the refused form")

	do(openForm...)
	do(
		chromedp.SendKeys(chromedp.CSS(`[data-testid="skip-reason"]`), "waits for the theme"),
		chromedp.Click(chromedp.CSS(`[data-testid="skip-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="skip-standing"]`)),
	)
	waitText(t, ctx, "skip-notice", regexp.MustCompile(`^Skipped 1\.10\.0\.$`))
	waitText(t, ctx, "skip-by", regexp.MustCompile(`^admin@example\.test$`))
	screenshot(t, ctx, "detail-skip-standing.png")
	audit("the skip standing")

	do(
		chromedp.Navigate(page),
		chromedp.Click(chromedp.CSS(`[data-testid="skip-undo"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="skip-notice"]`)),
	)
	waitText(t, ctx, "skip-notice", regexp.MustCompile(`^1\.10\.0 is no longer skipped`))
}
