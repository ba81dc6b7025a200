package web_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The site switcher in a real browser: closed, it shows the current site;
// opened by a click, it lists the sites, and its links keep the page's
// kind: from the local site's Packages page to acme-shop's, whose switcher
// then names acme-shop, and from a package's page back to the local
// Packages page searched for it. Without JavaScript: plain links in a
// <details>.
func TestBrowserSiteSwitcher(t *testing.T) {
	t.Parallel()
	b := setup(t)
	demoLike(t, b)
	ctx := browser(t)
	signIn(t, ctx, b.server.URL, "admin@example.test")
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	// state is the switcher's words, whether acme-shop's link is shown,
	// and where the page is.
	type state struct {
		Summary  string
		Shown    bool
		Location string
	}
	read := func() state {
		t.Helper()
		st, err := chromedp.Run(ctx, chromedp.Evaluate[state](`({
			Summary: document.querySelector('[data-testid="site-switcher"] summary').textContent.trim(),
			Shown: document.querySelector('[data-testid="site-switch"][data-switch="acme-shop"]').checkVisibility(),
			Location: location.pathname + location.search,
		})`))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	open := func(site string) []chromedp.Action[chromedp.Void] {
		return []chromedp.Action[chromedp.Void]{
			chromedp.Click(chromedp.CSS(`[data-testid="site-switcher"] summary`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="site-switch"][data-switch="` + site + `"]`)),
			chromedp.Click(chromedp.CSS(`[data-testid="site-switch"][data-switch="` + site + `"]`)),
		}
	}

	if err := chromedp.Do(ctx,
		chromedp.Navigate(b.server.URL+"/admin/packages"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="packages-table"]`)),
	); err != nil {
		t.Fatal(err)
	}
	if st := read(); st.Summary != "Site: local" || st.Shown {
		t.Fatalf("closed switcher: %+v", st)
	}
	if err := chromedp.Do(ctx, append(open("acme-shop"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="package-row"][data-name="evil"]`)))...); err != nil {
		t.Fatal(err)
	}
	if st := read(); st.Location != "/sites/acme-shop/packages" || st.Summary != "Site: acme-shop" {
		t.Fatalf("after choosing acme-shop: %+v", st)
	}
	if err := chromedp.Do(ctx, append([]chromedp.Action[chromedp.Void]{
		chromedp.Click(chromedp.CSS(`[data-testid="package-row"][data-name="lodash"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="package-detail"][data-name="lodash"]`)),
	}, append(open("local"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="packages-search"]`)))...)...); err != nil {
		t.Fatal(err)
	}
	if st := read(); st.Location != "/admin/packages?q=lodash" || st.Summary != "Site: local" {
		t.Fatalf("from acme-shop's lodash to the local site: %+v", st)
	}
	screenshot(t, ctx, "site-switcher.png")
}
