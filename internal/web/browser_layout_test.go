package web_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/npmreg"
	"github.com/upcheck/upcheck/internal/updatecheck"
	"github.com/upcheck/upcheck/internal/web"
)

// wideTables lists the tables wider than the box that holds them: a
// table's columns must fit its box (long words wrap), at 1280 px and on a
// phone, where tables are cards (docs/accessibility.md "Tables").
func wideTables(t *testing.T, ctx context.Context) []string {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('table')]
		.filter(e => e.getClientRects().length > 0 && e.scrollWidth > e.parentElement.clientWidth + 1)
		.map(e => (e.dataset.testid || e.className) + ': ' + e.scrollWidth + ' px in ' + e.parentElement.clientWidth)`))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// longNpmSite is a site whose @acme/next is installed at 14.1.0 while the
// registry (signing keys published) lists 172 newer releases up to 16.5.0,
// and an advisory affects the installed version: the page of a package
// that moves fast and is two majors behind.
func longNpmSite(t *testing.T) *bundle {
	t.Helper()
	r := npmreg.New(t)
	day := func(n int) time.Time { return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, n) }
	r.Publish("@acme/core", "2.0.0", map[string]npmreg.Version{"2.0.0": {Published: day(0)}})
	versions := map[string]npmreg.Version{}
	for _, line := range []struct {
		major, minor, patches int
	}{{14, 1, 100}, {15, 0, 50}, {16, 0, 22}} {
		for p := range line.patches {
			versions[fmt.Sprintf("%d.%d.%d", line.major, line.minor, p)] = npmreg.Version{Published: day(len(versions) + 1)}
		}
	}
	versions["16.5.0"] = npmreg.Version{Published: day(len(versions) + 1)}
	r.Publish("@acme/next", "16.5.0", versions)
	u, err := npm.ParseRegistryURL(r.URL)
	if err != nil {
		t.Fatal(err)
	}
	f := fetch.New(fetch.Config{AllowPrivate: true}, nil)
	t.Cleanup(f.Close)
	b := setup(t, func(b *bundle, _ *web.Deps) {
		b.checker.UseNpm(&npm.Client{Fetcher: f, Registries: npm.Registries{Default: u}, MaxDocument: 1 << 20})
	})
	ctx := context.Background()
	if _, err := updatecheck.NewSyncer(b.checker).Sync(ctx, &manifest.Manifest{Components: []manifest.Component{
		{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"},
		{Code: "next", Name: "Next", Version: "14.1.0", Source: "npm:@acme/next"},
	}}); err != nil {
		t.Fatal(err)
	}
	if res, err := b.checker.RunLockedUpdateCheck(ctx, lease.Operator, "test"); err != nil || res.Status != updatecheck.Completed {
		t.Fatalf("check: %+v, %v", res, err)
	}
	const advisory = `[{"id": "GHSA-next-ssrf-0001", "severity": "high", "affected": ">=13.4.0 <14.1.1", "fixed_in": "14.1.1",
		"summary": "Server-side request forgery in server actions", "origins": ["osv"]}]`
	b.db.MustExec(t, `INSERT INTO feeds (kind, url, last_success_at, last_attempt_at, records, epoch) VALUES
		('osv', 'http://127.0.0.1:9/npm/all.zip', now(), now(), 1, 1)`)
	b.db.MustExec(t, `UPDATE component_results SET advisories = $1::jsonb,
		evaluation = jsonb_set(coalesce(evaluation, '{}'), '{advisories}', $1::jsonb),
		advisory_ids = '{GHSA-next-ssrf-0001}' WHERE code = 'next'`, advisory)
	return b
}

// A page of an npm package two majors behind (172 releases to go) at
// 1280 px: the advisories come before the offer and the releases, the
// releases in between are folded (<details>, their count said) and not
// repeated by the registry's and the releases' tables, and the page stays
// short.
func TestBrowserLongDetailPage(t *testing.T) {
	t.Parallel()
	b := longNpmSite(t)
	ctx := browser(t)
	signIn(t, ctx, b.server.URL, "admin@example.test")
	if err := chromedp.Do(ctx, viewportWidth(1280)); err != nil {
		t.Fatal(err)
	}
	openPage(t, ctx, b.server.URL, adminPage{name: "detail-long", path: "/admin/plugins/next", ready: `[data-testid="advisories-table"]`})
	screenshot(t, ctx, "detail-long-1280.png")
	type layout struct {
		Height                       int
		Advisories, Update, Releases int
		Between, BetweenOpen         bool
		BetweenSummary               string
		BetweenRows, MostOfOne       int
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[layout](`(() => {
		const top = id => { const e = document.getElementById(id); return e ? Math.round(e.getBoundingClientRect().top + window.scrollY) : -1; };
		const between = document.querySelector('[data-testid="between-details"]');
		const seen = {};
		let most = 0;
		document.querySelectorAll('tr[data-version]').forEach(r => {
			if (!r.checkVisibility()) return;
			seen[r.dataset.version] = (seen[r.dataset.version] || 0) + 1;
			most = Math.max(most, seen[r.dataset.version]);
		});
		return {Height: document.scrollingElement.scrollHeight,
			Advisories: top('advisories'), Update: top('update'), Releases: top('releases'),
			Between: !!between, BetweenOpen: !!(between && between.open),
			BetweenSummary: between ? between.querySelector('summary').textContent.replace(/\s+/g, ' ').trim() : '',
			BetweenRows: between ? between.querySelectorAll('tr[data-version]').length : 0, MostOfOne: most};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("layout at 1280 px: %+v", got)
	if got.Advisories < 0 || got.Update < 0 || got.Releases < 0 || !(got.Advisories < got.Update && got.Update < got.Releases) {
		t.Errorf("sections at %d (advisories), %d (what is offered), %d (releases): want the advisories first, then the offer, then the releases", got.Advisories, got.Update, got.Releases)
	}
	if want := fmt.Sprintf("%d releases in between", got.BetweenRows); !got.Between || got.BetweenOpen || got.BetweenRows < 100 || got.BetweenSummary != want {
		t.Errorf("the releases in between: folded %v, open %v, %d rows, summary %q; want folded, closed, over 100 rows, %q",
			got.Between, got.BetweenOpen, got.BetweenRows, got.BetweenSummary, want)
	}
	if got.MostOfOne > 1 {
		t.Errorf("a version is listed %d times in the rows shown", got.MostOfOne)
	}
	if got.Height > maxDetailHeight {
		t.Errorf("the page is %d px tall at 1280 px, want at most %d", got.Height, maxDetailHeight)
	}
	for _, w := range wideTables(t, ctx) {
		t.Errorf("a table is wider than its box: %s", w)
	}
}

// maxDetailHeight bounds the height of a detail page at 1280 px whatever
// the number of releases: what is folded is not drawn.
const maxDetailHeight = 3000

// Every table fits its box at 1280 and 390 px (docs/accessibility.md
// "Tables"), on pages with what made them overflow: registry key ids in
// Source health's Trust column, a failure's long technical text in the
// catalog's Problems column, a webhook's long URL, the long detail page.
func TestBrowserTablesFit(t *testing.T) {
	t.Parallel()
	b := longNpmSite(t)
	long := "fetch " + b.server.URL + "/npm/@acme%2fnext: read tcp 127.0.0.1:40000->127.0.0.1:9: " +
		"token-abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789"
	b.db.MustExec(t, `UPDATE sources SET last_error = $1, last_error_kind = 'network', last_error_args = '{"address": "127.0.0.1:9"}',
		last_error_at = now(), last_attempt_at = now(), consecutive_failures = 1 WHERE url LIKE '%next'`, long)
	if _, err := b.notify.AddChannel(context.Background(), store.NewChannel{Name: "Ops", Kind: "webhook", Target: addedURL, Events: "all"}); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	signIn(t, ctx, b.server.URL, "admin@example.test")
	for _, p := range []adminPage{
		{name: "fit-catalog", path: "/admin/plugins", ready: `[data-testid="catalog-table"]`},
		{name: "fit-detail", path: "/admin/plugins/next", ready: `[data-testid="advisories-table"]`},
		{name: "fit-sources", path: "/admin/sources", ready: `[data-testid="sources-table"]`},
		{name: "fit-notifications", path: "/admin/notifications", ready: `[data-testid="channels-table"]`},
		{name: "fit-audit", path: "/admin/audit", ready: `[data-testid="audit-table"]`},
	} {
		for _, width := range []int64{1280, 390} {
			if err := chromedp.Do(ctx, viewportWidth(width)); err != nil {
				t.Fatal(err)
			}
			openPage(t, ctx, b.server.URL, p)
			// What is folded is measured open: the technical detail of a
			// failure, the releases in between.
			if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('details').forEach(d => d.open = true)`)); err != nil {
				t.Fatal(err)
			}
			for _, w := range wideTables(t, ctx) {
				t.Errorf("%s at %d px: a table is wider than its box: %s", p.name, width, w)
			}
			if width == 390 {
				for _, s := range sideways(t, ctx) {
					t.Errorf("%s at 390 px: scrolls sideways: %s", p.name, s)
				}
			}
			screenshot(t, ctx, fmt.Sprintf("%s-%d.png", p.name, width))
		}
	}
	// The EPSS field is drawn as the form's other fields are, and empty
	// (no placeholder that reads as a value).
	openPage(t, ctx, b.server.URL, adminPage{name: "epss", path: "/admin/notifications", ready: `[data-testid="channel-min-epss"]`})
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
		const look = e => { const c = getComputedStyle(e); return [c.borderTopWidth, c.borderTopColor, c.borderRadius, c.minHeight, c.paddingLeft, c.fontWeight].join(' '); };
		const epss = document.querySelector('[data-testid="channel-min-epss"]');
		const name = document.querySelector('[data-testid="channel-form"] input[name="name"]');
		return [look(epss), look(name), epss.placeholder];
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != got[1] || got[2] != "" {
		t.Errorf("the EPSS field looks %q, the name field %q; placeholder %q (want the same look, no placeholder)", got[0], got[1], got[2])
	}
}
