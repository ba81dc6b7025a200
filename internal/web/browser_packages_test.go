package web_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// The Packages page as a viewer uses it, in the browser: the filter links,
// the next page after 50 packages, and a package's page with the path
// that brings it in.
func TestBrowserPackages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tree := blogTree()
	for i := range 60 { // more than a page of 50
		name := fmt.Sprintf("pkg-%02d", i)
		tree = append(tree, "node_modules/"+name+" 1.0.0 by=blog")
	}
	writeTree(t, b, tree...)
	ctx := browser(t)
	signIn(t, ctx, b.server.URL, "viewer@example.test")
	err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`nav.main-nav a[href="/admin/packages"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="packages-table"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="packages-filters"] a[data-filter="scripts"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="packages-filters"] a[data-filter="scripts"][aria-current="page"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "packages-count"); got != "1 package" {
		t.Errorf("install scripts: %q", got)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="packages-filters"] a[data-filter=""]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="packages-next"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "packages-count"); got != "Showing 50 of 65 packages" {
		t.Errorf("the first page: %q", got)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="packages-next"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-name="send"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "packages-count"); got != "Showing 15 more of 65 packages" {
		t.Errorf("the next page: %q", got)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`tr[data-name="send"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="package-instances"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "package-via"); got != "blog → send" {
		t.Errorf("send's path: %q", got)
	}
}
