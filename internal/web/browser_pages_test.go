package web_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/treekit"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// Shared helpers of the browser tests that walk every page: the pages
// themselves, the viewport and the colour scheme.

// adminPage is one page of the AdminCP as a browser test visits it.
type adminPage struct {
	// name names the page in messages and screenshots (<name>-<width>.png).
	name string
	// path is the URL path and query.
	path string
	// ready is a CSS selector that is visible once the page is there.
	ready string
	// signedIn: the page is visited signed in (all but the login page).
	signedIn bool
	// then, when set, is done once the page is there (a form filled in and
	// posted), and the page audited as it is after: shown selector is
	// visible then.
	then  []chromedp.Action[chromedp.Void]
	shown string
}

// everyPage lists the AdminCP's pages, the login page first (it is seen
// signed out). The detail page is Gallery's: it has advisories, one with no
// fix.
var everyPage = []adminPage{
	{"login", "/login", `[data-testid="login-form"]`, false, nil, ""},
	{"dashboard", "/admin", `[data-testid="updates-widget"]`, true, nil, ""},
	{"catalog", "/admin/plugins?status=security", `[data-testid="catalog-table"]`, true, nil, ""},
	{"catalog-all", "/admin/plugins", `[data-testid="catalog-table"]`, true, nil, ""},
	{"detail", "/admin/plugins/gallery", `[data-testid="advisories-table"]`, true, nil, ""},
	{"packages", "/admin/packages", `[data-testid="packages-table"]`, true, nil, ""},
	{"package", "/admin/packages/debug", `[data-testid="package-instances"]`, true, nil, ""},
	{"fleet", "/admin/fleet", `[data-testid="fleet-table"]`, true, nil, ""},
	{"fleet-impact", "/admin/fleet/impact?package=debug", `[data-testid="impact-now"]`, true, nil, ""},
	{"history", "/admin/history", `[data-testid="history-table"]`, true, nil, ""},
	{"sources", "/admin/sources", `[data-testid="sources-table"]`, true, nil, ""},
	{"notifications", "/admin/notifications", `[data-testid="channels-table"]`, true, nil, ""},
	{"channel-added", "/admin/notifications", `[data-testid="channel-form"]`, true, []chromedp.Action[chromedp.Void]{
		chromedp.SendKeys(chromedp.CSS(`[data-testid="channel-form"] input[name="url"]`), addedURL),
		chromedp.Click(chromedp.CSS(`[data-testid="channel-add"]`)),
	}, `[data-testid="notify-secret"]`},
	{"tokens", "/admin/tokens", `[data-testid="tokens-table"]`, true, nil, ""},
	{"token-created", "/admin/tokens", `[data-testid="token-form"]`, true, []chromedp.Action[chromedp.Void]{
		chromedp.SendKeys(chromedp.CSS(`#token-name`), "backup script"),
		chromedp.Click(chromedp.CSS(`[data-testid="token-create"]`)),
	}, `[data-testid="token-secret"]`},
	{"site", "/sites/acme-shop", `[data-testid="site-overview"]`, true, nil, ""},
	{"site-packages", "/sites/acme-shop/packages", `[data-testid="packages-table"]`, true, nil, ""},
	{"site-package", "/sites/acme-shop/packages/evil", `[data-testid="package-instances"]`, true, nil, ""},
	{"site-sources", "/sites/acme-shop/sources", `[data-testid="feeds"]`, true, nil, ""},
	{"site-history", "/sites/acme-shop/history", `[data-testid="site-pushes-table"]`, true, nil, ""},
	{"sites", "/admin/sites", `[data-testid="sites-table"]`, true, nil, ""},
	{"users", "/admin/users", `[data-testid="users-table"]`, true, nil, ""},
	{"user-sites-set", "/admin/users/viewer@example.test/sites", `[data-testid="user-sites-form"]`, true, []chromedp.Action[chromedp.Void]{
		chromedp.Click(chromedp.CSS(`[data-testid="user-sites-some"]`)),
		// Checked whatever the visit before left (a click would toggle
		// it): the attribute checks a box the user has not touched.
		chromedp.SetAttributeValue(chromedp.CSS(`[data-testid="user-site-choice"][value="acme-shop"]`), "checked", "checked"),
		chromedp.Click(chromedp.CSS(`[data-testid="user-sites-save"]`)),
	}, `[data-testid="users-notice"]`},
	{"audit", "/admin/audit", `[data-testid="audit-table"]`, true, nil, ""},
	{"not-found", "/admin/plugins/nope", `[data-testid="error-page"]`, true, nil, ""},
}

// addedURL is the long webhook URL the channel-added page adds: shown
// whole this once, it must wrap inside a phone's screen.
const addedURL = "https://hooks.example.org/services/T00000000/B00000000/a-very-long-webhook-path-that-would-overflow?token=abcdefghijklmnopqrstuvwxyz0123456789&channel=added"

// demoLike fills b's site the way `serve --demo` looks after a while: a
// check ran (history, sources, one failing), a webhook channel with a long
// URL has a delivery, the viewer has an API token (the token's and the
// accounts' creation are in the audit log), and a lockfile's tree was
// read. longURL is that channel's target.
func demoLike(t *testing.T, b *bundle) (longURL string) {
	t.Helper()
	ctx := context.Background()
	if res, err := b.checker.RunLockedUpdateCheck(ctx, lease.Operator, "test"); err != nil || res.Status != updatecheck.CompletedWithFailures { // the broken source fails
		t.Fatalf("check: %+v %v", res, err)
	}
	longURL = "https://hooks.example.org/services/T00000000/B00000000/a-very-long-webhook-path-that-would-overflow?token=abcdefghijklmnopqrstuvwxyz0123456789&channel=security-alerts"
	if _, err := b.notify.AddChannel(ctx, store.NewChannel{Name: "Ops", Kind: "webhook", Target: longURL, Events: "all"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.auth.CreateToken(ctx, "viewer@example.test", "prometheus"); err != nil {
		t.Fatal(err)
	}
	writeTree(t, b, blogTree()...)
	// A registered site that pushed its tree: the switcher is on every
	// page, and the site's own pages are among them.
	_, acme, err := b.auth.AddSite(ctx, "acme-shop", "Acme Ltd")
	if err != nil {
		t.Fatal(err)
	}
	treekit.WriteSite(t, b.store, acme.ID, "package-lock.json", treekit.Tree(t, "node_modules/lodash 4.17.20", "node_modules/evil 1.0.0"), nil)
	// Its history: a push accepted, then one refused, which stands.
	if err := b.store.WithTx(ctx, func(tx *store.Tx) error {
		_, err := tx.SitePushed(ctx, acme.ID, store.SitePush{Site: "acme-shop", File: "package-lock.json",
			Written: store.TreeWritten{Added: 2, Opened: 2}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := b.store.PushRefused(ctx, acme.ID, acme.PushedAt, "package-lock.json", "invalid lockfile: package-lock.json: unexpected end of JSON input"); err != nil {
		t.Fatal(err)
	}
	return longURL
}

// viewportWidth sets the page's width (height 900); below 600 px it is a phone
// (a mobile viewport, as Chromium's device mode has it).
func viewportWidth(width int64) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: width, Height: 900, DeviceScaleFactor: 1, Mobile: width < 600,
		})
		return err
	})
}

// colorScheme makes the page see prefers-color-scheme: scheme ("light" or
// "dark").
func colorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return err
	})
}

// openPage opens the page and waits until it is there.
func openPage(t *testing.T, ctx context.Context, base string, p adminPage) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(base+p.path), chromedp.WaitVisible(chromedp.CSS(p.ready))); err != nil {
		t.Fatalf("%s (%s): %v", p.name, p.path, err)
	}
	if p.then == nil {
		return
	}
	if err := chromedp.Do(ctx, append(slices.Clip(p.then), chromedp.WaitVisible(chromedp.CSS(p.shown)))...); err != nil {
		t.Fatalf("%s (%s): %v", p.name, p.path, err)
	}
}

// pageOverflow is how far the page is wider than its viewport (0: not at all).
func pageOverflow(t *testing.T, ctx context.Context) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.scrollingElement.scrollWidth - window.innerWidth`))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// boldFields names the form fields whose text is bold: a field's text is
// what the user typed or chose, never a label.
func boldFields(t *testing.T, ctx context.Context) []string {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('input:not([type="hidden"]), select, textarea')]
		.filter(e => e.getClientRects().length > 0 && parseInt(getComputedStyle(e).fontWeight, 10) >= 600)
		.map(e => e.name || e.id || e.outerHTML)`))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// navBox is one entry of the main navigation: its words (without the
// update count) and where it is drawn.
type navBox struct {
	Text       string
	X, Y, W, H int
}

// navBoxes reads the main navigation's visible entries in order.
func navBoxes(t *testing.T, ctx context.Context) []navBox {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]navBox](`[...document.querySelectorAll('nav[aria-label="Main"] a')]
		.filter(a => a.getClientRects().length > 0)
		.map(a => {
			const c = a.cloneNode(true);
			c.querySelectorAll('.nav-badge').forEach(b => b.remove());
			const r = a.getBoundingClientRect();
			return {Text: c.textContent.replace(/\s+/g, " ").trim(), X: Math.round(r.x), Y: Math.round(r.y), W: Math.round(r.width), H: Math.round(r.height)};
		})`))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// sideways lists the elements that scroll sideways (overflow-x auto or
// scroll, content wider than the box): on a phone nothing should have to.
func sideways(t *testing.T, ctx context.Context) []string {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('body *')]
		.filter(e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX) && e.scrollWidth > e.clientWidth + 1)
		.map(e => e.tagName.toLowerCase() + (e.className ? '.' + e.className.split(' ').join('.') : '') + ': ' + e.scrollWidth + ' > ' + e.clientWidth)`))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// Every page of the AdminCP, on a desktop (1280 px) and a phone (390 px):
// no violation of the accessibility audit (a11y_test.go) in either colour
// scheme; on the phone, the same navigation on every signed-in page (same
// entries, same order, drawn in the same places), nothing wider than the
// screen and nothing that scrolls sideways. A screenshot of each page at
// each width goes to artifacts/ (<page>-<width>.png).
func TestBrowserEveryPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	demoLike(t, b)
	ctx := browser(t)
	var firstNav []navBox
	firstNavPage := ""
	signedIn := false
	for _, p := range everyPage {
		if p.signedIn && !signedIn {
			signIn(t, ctx, b.server.URL, "admin@example.test")
			signedIn = true
		}
		for _, width := range []int64{1280, 390} {
			if err := chromedp.Do(ctx, viewportWidth(width)); err != nil {
				t.Fatal(err)
			}
			openPage(t, ctx, b.server.URL, p)
			for _, v := range a11yAudit(t, ctx) {
				t.Errorf("%s at %d px: %s", p.name, width, v)
			}
			for _, f := range boldFields(t, ctx) {
				t.Errorf("%s at %d px: the form field %s is bold (it inherits its label's weight)", p.name, width, f)
			}
			for _, w := range wideTables(t, ctx) {
				t.Errorf("%s at %d px: a table is wider than its box: %s", p.name, width, w)
			}
			if n := pageOverflow(t, ctx); n > 0 {
				t.Errorf("%s at %d px: the page is %d px wider than the screen", p.name, width, n)
			}
			screenshot(t, ctx, fmt.Sprintf("%s-%d.png", p.name, width))
			if width != 390 {
				continue
			}
			for _, s := range sideways(t, ctx) {
				t.Errorf("%s at 390 px: scrolls sideways: %s", p.name, s)
			}
			if p.name == "channel-added" { // the full URL is shown once, at creation; the table masks it
				wrapsInside(t, ctx, addedURL)
			}
			nav := navBoxes(t, ctx)
			switch {
			case !p.signedIn:
				if len(nav) != 0 {
					t.Errorf("%s: a navigation for nobody: %v", p.name, nav)
				}
			case firstNav == nil:
				firstNav, firstNavPage = nav, p.name
				if len(nav) < 5 {
					t.Fatalf("%s: navigation %v, want every entry", p.name, nav)
				}
			case !slices.Equal(nav, firstNav):
				t.Errorf("phone navigation differs:\n%s: %v\n%s: %v", firstNavPage, firstNav, p.name, nav)
			}
		}
	}
}

// wrapsInside checks that the URL u is on the page as URL text, on more
// than one line and inside the screen.
func wrapsInside(t *testing.T, ctx context.Context, u string) {
	t.Helper()
	type box struct {
		Found        bool
		Lines, Right int
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[box](`(() => {
		const e = [...document.querySelectorAll('.url')].find(e => e.textContent.trim() === `+strconv.Quote(u)+`);
		if (!e) return {Found: false};
		const r = e.getBoundingClientRect(), line = parseFloat(getComputedStyle(e).lineHeight);
		return {Found: true, Lines: Math.round(r.height / line), Right: Math.ceil(r.right)};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Found || got.Lines < 2 || got.Right > 390 {
		t.Errorf("the URL %s at 390 px: %+v, want it found, on several lines, inside the screen", u, got)
	}
}
