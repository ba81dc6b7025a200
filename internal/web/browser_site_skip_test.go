package web_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A registered site's catalog and a skip from its component's page in a
// browser: the skip form posts to globex's route and the page it comes
// back to is globex's, saying what was skipped, while acme is still
// offered the release. globex's catalog (with the site's own navigation)
// and the page with its skip pass the accessibility audit (a11y_test.go).
func TestBrowserSiteSkip(t *testing.T) {
	t.Parallel()
	b := siteCatalogBundle(t)
	ctx := browser(t)
	signIn(t, ctx, b.server.URL, "admin@example.test")
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
	// Each state is audited last, before the next page is opened.
	do(chromedp.Navigate(b.server.URL + "/sites/globex/plugins"))
	audit("globex's catalog")
	do(chromedp.Navigate(b.server.URL + "/sites/globex/plugins/xpress"))
	do(
		chromedp.Click(chromedp.CSS(`[data-testid="skip"] summary`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="skip-reason"]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="skip-reason"]`), "waits for globex's theme"),
		chromedp.Click(chromedp.CSS(`[data-testid="skip-form"] button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="skip-standing"]`)),
	)
	waitText(t, ctx, "skip-notice", regexp.MustCompile(`^Skipped 1\.1\.0\.$`))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if loc != b.server.URL+"/sites/globex/plugins/xpress" {
		t.Errorf("the skip came back to %s, want globex's xpress", loc)
	}
	audit("globex's skip standing")
	if o := offer(t, b.login("viewer@example.test"), "acme"); o != "1.1.0" {
		t.Errorf("acme's xpress is offered %q after globex's skip, want 1.1.0", o)
	}
}
