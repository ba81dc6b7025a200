package web_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// Accountable risk acceptance as an admin does it: open a vulnerable
// component, open the dismiss form, give a reason and an expiry date,
// submit, and read who dismissed it, when, why and until when; the
// advisory no longer counts in the alert; the Audit log lists the
// dismissal.
func TestBrowserDismissWithReasonAndExpiry(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if res, err := b.checker.RunLockedUpdateCheck(context.Background(), lease.Operator, "test"); err != nil || res.Status != updatecheck.CompletedWithFailures { // the broken source fails
		t.Fatalf("first check: %+v %v", res, err)
	}
	ctx := browser(t)
	signIn(t, ctx, b.server.URL, "admin@example.test")
	alertBefore := text(t, ctx, "security-alert-text")
	if !strings.Contains(alertBefore, "vulnerable") {
		t.Fatalf("alert before = %q", alertBefore)
	}

	row := `[data-testid="advisory-row"][data-id="ACME-2026-011"]`
	err := chromedp.Do(within(t, ctx),
		chromedp.Navigate(b.server.URL+"/admin/plugins/gallery"),
		chromedp.WaitVisible(chromedp.CSS(row)),
		chromedp.Click(chromedp.CSS(row+` [data-testid="advisory-dismiss"] summary`)),
		chromedp.WaitVisible(chromedp.CSS(row+` [data-testid="dismiss-reason"]`)),
		chromedp.SendKeys(chromedp.CSS(row+` [data-testid="dismiss-reason"]`), "Metadata is stripped by the CDN"),
		// A date input's typed form follows the locale; its value is ISO.
		chromedp.SetValue(chromedp.CSS(row+` [data-testid="dismiss-expires"]`), "2099-12-31"),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "detail-dismiss-form.png")
	if err := chromedp.Do(within(t, ctx),
		chromedp.Click(chromedp.CSS(row+` [data-testid="dismiss-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(row+` [data-testid="dismissal-info"]`)),
	); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]*regexp.Regexp{
		"dismissal-by":     regexp.MustCompile(`^admin@example\.test$`),
		"dismissal-at":     regexp.MustCompile(`^just now \(\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\)$`),
		"dismissal-reason": regexp.MustCompile(`^Metadata is stripped by the CDN$`),
		"dismissal-until":  regexp.MustCompile(`^the end of 31 Dec 2099 \(UTC\)$`),
	} {
		if got := text(t, ctx, id); !want.MatchString(got) {
			t.Errorf("%s = %q, want %s", id, got, want)
		}
	}
	if got := text(t, ctx, "security-alert-text"); got == alertBefore {
		t.Errorf("the alert still says %q after the dismissal", got)
	}
	screenshot(t, ctx, "detail-dismissed.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "detail-dismissed-390.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}

	if err := chromedp.Do(within(t, ctx),
		chromedp.Click(chromedp.CSS(`.main-nav a[href="/admin/audit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="audit-table"]`)),
	); err != nil {
		t.Fatal(err)
	}
	first := text(t, ctx, "audit-row")
	if !strings.Contains(first, "Dismissed ACME-2026-011 for gallery") || !strings.Contains(first, "Metadata is stripped by the CDN") {
		t.Fatalf("newest audit entry = %q", first)
	}
	screenshot(t, ctx, "audit.png")
}

// within bounds the steps run on it: a page that never shows what a step
// waits for fails the test in 30 s instead of hanging it. The browser
// stays bound to ctx.
func within(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	t.Cleanup(cancel)
	return c
}
