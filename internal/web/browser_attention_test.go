package web_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// bannerLayout is where the banner's links start and how tall it is, as
// Chromium lays it out.
type bannerLayout struct {
	Lefts  []float64 `json:"lefts"`
	Height float64   `json:"height"`
	Width  float64   `json:"width"`
}

const measureBanner = `(() => {
	const banner = document.querySelector('[data-testid="security-alert"]');
	const links = [...banner.querySelectorAll('[data-testid="attention-banner-items"] li > a')];
	const box = banner.getBoundingClientRect();
	return {lefts: links.map(a => a.getBoundingClientRect().left), height: box.height, width: box.width};
})()`

// The attention banner in a real browser names the components, most
// urgent first, each linking to its page, with their links on one left
// edge and the banner compact at desktop (1280 px) and phone (390 px)
// widths; on the dashboard it says the count alone and the dashboard's
// "Needs attention" names them, once. A check started from the dashboard
// names what it found without a reload (app.js takes the named parts from
// the page the server renders). The detail page opens with the
// component's state and next step.
func TestBrowserAttention(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if res, err := b.checker.RunLockedUpdateCheck(context.Background(), lease.Operator, "test"); err != nil || res.Status != updatecheck.CompletedWithFailures { // the broken source fails
		t.Fatalf("first check: %+v %v", res, err)
	}
	// Blog's security update is "forgotten" until the next check finds it
	// again, so the banner must change after the click.
	b.db.MustExec(t, `UPDATE component_results SET update_available = false, security = false, advisories = '[]', advisory_ids = '{}'
		WHERE code = 'blog'`)

	ctx := browser(t)
	signIn(t, ctx, b.server.URL, "admin@example.test")
	// The dashboard names them once, in its "Needs attention" (with their
	// exposure clocks); its banner says the count alone.
	if got := text(t, ctx, "widget-attention-items"); !strings.HasPrefix(got, "Gallery 3.1.0: ACME-2026-011, no fix yet Vulnerable for") ||
		strings.Contains(got, "Blog") {
		t.Fatalf("dashboard before the check names %q", got)
	}
	if bannerList(t, ctx) {
		t.Error("the dashboard's banner names the components its Needs attention names")
	}
	if err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`window.__noReload = true`),
		chromedp.Click(chromedp.CSS(`[data-testid="check-button"]`)),
	); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, "check-outcome", regexp.MustCompile(`Check completed`))
	named := waitText(t, ctx, "widget-attention-items", regexp.MustCompile(`Blog`))
	if !regexp.MustCompile(`^Gallery 3\.1\.0: ACME-2026-011, no fix yet Vulnerable for .*Blog 2\.3\.0 → 2\.4\.0: stored XSS in comments \(high\) Security fix available for`).MatchString(named) {
		t.Fatalf("dashboard after the check names %q", named)
	}
	if got := text(t, ctx, "security-alert-text"); got != "1 security update and 2 vulnerable components need attention." {
		t.Errorf("banner says %q", got)
	}
	if bannerList(t, ctx) {
		t.Error("after the check, the dashboard's banner names the components its Needs attention names")
	}
	if marker, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__noReload === true`)); err != nil || !marker {
		t.Fatalf("the page reloaded (marker %v, %v)", marker, err)
	}
	if got := text(t, ctx, "widget-oldest-success"); got != "never (Shop has never been read successfully)" {
		t.Errorf("oldest success %q", got)
	}

	for _, w := range []struct {
		width, height int64
		maxHeight     float64
	}{{1280, 900, 120}, {390, 844, 240}} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(w.width, w.height), chromedp.Reload(),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="security-alert"]`))); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, fmt.Sprintf("attention-dashboard-%d.png", w.width))
		// Every other page's banner names them: the catalog's.
		if err := chromedp.Do(ctx, chromedp.Navigate(b.server.URL+"/admin/plugins"),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="attention-banner-items"]`))); err != nil {
			t.Fatal(err)
		}
		if got := text(t, ctx, "attention-banner-items"); got != "Gallery 3.1.0: ACME-2026-011, no fix yet Blog 2.3.0 → 2.4.0: stored XSS in comments (high)" {
			t.Errorf("%d px: the catalog's banner names %q", w.width, got)
		}
		l, err := chromedp.Run(ctx, chromedp.Evaluate[bannerLayout](measureBanner))
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Lefts) != 2 || l.Lefts[0] != l.Lefts[1] {
			t.Errorf("%d px: the banner's links start at %v, want one left edge", w.width, l.Lefts)
		}
		if l.Height > w.maxHeight || l.Width > float64(w.width) {
			t.Errorf("%d px: banner %.0f×%.0f px, want at most %.0f px high within the page", w.width, l.Width, l.Height, w.maxHeight)
		}
		screenshot(t, ctx, fmt.Sprintf("attention-catalog-%d.png", w.width))

		if err := chromedp.Do(ctx, chromedp.Navigate(b.server.URL+"/admin/plugins/blog"),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="detail-headline"]`))); err != nil {
			t.Fatal(err)
		}
		if got := text(t, ctx, "detail-headline"); !strings.HasPrefix(got, "Security update: update to 2.4.0 (high) Security fix available for") {
			t.Errorf("%d px: blog's headline %q", w.width, got)
		}
		screenshot(t, ctx, fmt.Sprintf("attention-detail-%d.png", w.width))
		if err := chromedp.Do(ctx, chromedp.Navigate(b.server.URL+"/admin/plugins/gallery"),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="detail-headline"]`))); err != nil {
			t.Fatal(err)
		}
		if got := text(t, ctx, "detail-headline"); !strings.HasPrefix(got, "Vulnerable, no fix yet: consider disabling Gallery until a fix is published") {
			t.Errorf("%d px: gallery's headline %q", w.width, got)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(b.server.URL+"/admin")); err != nil {
			t.Fatal(err)
		}
	}
}

// bannerList reports whether the page's attention banner names components.
func bannerList(t *testing.T, ctx context.Context) bool {
	t.Helper()
	found, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('[data-testid="security-alert"] [data-testid="attention-banner-items"]') !== null`))
	if err != nil {
		t.Fatal(err)
	}
	return found
}
