package web_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// An admin uses the API tokens section as a person would: open it from the
// navigation, create a token for the viewer, read the secret once, revoke
// it through the question, and create a read-only one on a phone.
// Screenshots at desktop and phone widths go to artifacts/.
func TestBrowserTokens(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := browser(t)
	signIn(t, ctx, b.server.URL, "admin@example.test")
	err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`nav a[href="/admin/tokens"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="tokens-empty"]`)),
		chromedp.SendKeys(chromedp.CSS(`#token-name`), "prometheus"),
		chromedp.SetValue(chromedp.CSS(`#token-owner`), "viewer@example.test"),
		chromedp.Click(chromedp.CSS(`[data-testid="token-create"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="token-secret"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "token-secret"); !regexp.MustCompile(`upc_[A-Za-z0-9_-]{43}`).MatchString(got) || !strings.Contains(got, "viewer@example.test") {
		t.Fatalf("secret notice = %q", got)
	}
	// Name, id, owner, scope, sites, created, last used; then the expiry
	// the form preselects (90 days, a date) and the state.
	if got := text(t, ctx, "tokens-table"); !strings.Contains(got, "prometheus1viewer@example.testFullIts owner'sjust nownever") ||
		!regexp.MustCompile(`never\d{1,2} [A-Z][a-z]{2} \d{4}Active`).MatchString(got) {
		t.Fatalf("tokens table = %q", got)
	}
	screenshot(t, ctx, "tokens.png")
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="token-revoke"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="confirm"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "confirm-question"); !strings.Contains(got, "cannot be brought back") {
		t.Fatalf("revoke question = %q", got)
	}
	screenshot(t, ctx, "tokens-revoke-question.png")
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="confirm-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="tokens-notice"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "tokens-table"); !strings.Contains(got, "Revoked") {
		t.Fatalf("after revoking: %q", got)
	}

	// On a phone, a new secret stays on the screen: it wraps.
	err = chromedp.Do(ctx,
		chromedp.EmulateViewport(390, 844),
		chromedp.SendKeys(chromedp.CSS(`#token-name`), "phone"),
		chromedp.Click(chromedp.CSS(`#token-read-only`)),
		chromedp.SetValue(chromedp.CSS(`#token-expires`), "never"),
		chromedp.Click(chromedp.CSS(`[data-testid="token-create"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="token-secret"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "tokens-table"); !strings.Contains(got, "phone2admin@example.testRead-onlyIts owner'sjust nowneverneverActive") {
		t.Fatalf("tokens table after a read-only token without expiry = %q", got)
	}
	width, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "tokens-390.png")
	if width > 390 {
		t.Fatalf("the page is %d px wide on a 390 px screen", width)
	}
}
