package web_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/upcheck/upcheck/internal/dev/demo"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/updatecheck"
	"github.com/upcheck/upcheck/internal/updatedoc"
	"github.com/upcheck/upcheck/views"
)

// A check whose sources partly fail, as a person sees it: the outcome after
// the click is a warning notice in the page's own words (app.js says what
// views says for the same answer), the cooldown reads in minutes and
// seconds as views words it, and the history shows the run as completed
// with failures, with the count and a link to the sources, and the clicks
// refused during the cooldown folded into one line.
func TestBrowserRunWithFailingSources(t *testing.T) {
	t.Parallel()
	b := setup(t) // the demo site: Shop's source answers 503
	ctx := browser(t)
	signIn(t, ctx, b.server.URL, "admin@example.test")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="check-button"]`))); err != nil {
		t.Fatal(err)
	}
	outcome := waitText(t, ctx, "check-outcome", regexp.MustCompile(`^Check completed`))
	var fetched, notModified, failed int
	b.db.QueryRow(t, `SELECT sources_fetched, sources_not_modified, sources_failed FROM check_runs
	                  WHERE status = 'completed_with_failures' ORDER BY id DESC LIMIT 1`).Scan(&fetched, &notModified, &failed)
	want := views.CheckOutcomeMessage(views.CheckOutcome{Status: "completed_with_failures", Fetched: fetched, NotModified: notModified, Failed: failed})
	if failed != 1 || outcome != want {
		t.Fatalf("outcome after the click = %q, want views' words %q", outcome, want)
	}
	if tone := attrOf(t, ctx, "check-outcome", "data-tone"); tone != "warn" {
		t.Errorf("the outcome's tone is %q, want warn", tone)
	}
	screenshot(t, ctx, "check-with-failures.png")

	// Again, at once: the cooldown, worded as views words it.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="check-button"]`))); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, "check-outcome", regexp.MustCompile(`again in \d+ min \d+ s\.`))
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[struct {
		Seconds string `json:"seconds"`
		Text    string `json:"text"`
	}](`(() => { const c = document.querySelector('[data-testid="check-countdown"]');
		return {seconds: c.getAttribute("data-seconds"), text: c.parentElement.textContent}; })()`))
	if err != nil {
		t.Fatal(err)
	}
	n := secondsIn(shown.Text)
	wantWait := views.CheckOutcomeMessage(views.CheckOutcome{Status: "cooldown", RetryAfter: n})
	if shown.Seconds == "" || !strings.HasSuffix(wantWait, shown.Text) || !strings.Contains(shown.Text, " min ") {
		t.Fatalf("countdown %q (%s s): views words the same wait %q", shown.Text, shown.Seconds, wantWait)
	}
	if tone := attrOf(t, ctx, "check-outcome", "data-tone"); tone != "info" {
		t.Errorf("the cooldown's tone is %q, want info", tone)
	}
	// Two more refused clicks, as an impatient operator's.
	for range 2 {
		status, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch("/api/admin/plugins/updates/check", {method: "POST", credentials: "same-origin",
			headers: {"X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content}}).then(r => r.status)`,
			chromedp.EvalAwaitPromise))
		if err != nil || status != 429 {
			t.Fatalf("a click during the cooldown: %d %v", status, err)
		}
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(b.server.URL+"/admin/history"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="history-table"]`))); err != nil {
		t.Fatal(err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]struct {
		Status  string `json:"status"`
		Repeats string `json:"repeats"`
		Text    string `json:"text"`
		Link    string `json:"link"`
	}](`[...document.querySelectorAll('[data-testid="history-row"]')].map(r => ({
		status: r.dataset.status, repeats: r.dataset.repeats, text: r.innerText.replace(/\s+/g, " "),
		link: (r.querySelector('[data-testid="history-failed-sources"] a') || {}).pathname || ""}))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("history rows = %+v, want the refused clicks folded into one and the run", rows)
	}
	if r := rows[0]; r.Status != "cooldown" || r.Repeats != "3" || !strings.Contains(r.Text, "Cooldown ×3") {
		t.Errorf("first row = %+v, want the three refused clicks as one line", r)
	}
	if r := rows[1]; r.Status != "completed_with_failures" || !strings.Contains(r.Text, "Completed with failures") ||
		!strings.Contains(r.Text, "1 of 4 sources failed") || r.Link != "/admin/sources" {
		t.Errorf("second row = %+v, want the run completed with failures, its count and a link to the sources", r)
	}
	screenshot(t, ctx, "history-with-failures.png")

	// The Sources page says each source's trust in words: the signed one
	// by its key's short form, the others as unsigned.
	var pinned string
	b.db.QueryRow(t, `SELECT pinned_key FROM components WHERE code = 'newsletter'`).Scan(&pinned)
	key, err := updatedoc.ParsePublicKey(pinned)
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(b.server.URL+"/admin/sources"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="sources-table"]`))); err != nil {
		t.Fatal(err)
	}
	trust, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`Object.fromEntries([...document.querySelectorAll('[data-testid="source-row"]')].map(r =>
		[new URL(r.dataset.url).pathname, r.querySelector('[data-testid="source-trust"]').innerText]))`))
	if err != nil {
		t.Fatal(err)
	}
	signed := regexp.MustCompile(`^verified by key ` + regexp.QuoteMeta(updatedoc.Fingerprint(key)) + ` \(of 1 trusted\), sequence \d+, expires in (29|30) days$`)
	if !signed.MatchString(trust["/signed.json"]) || !strings.HasPrefix(trust["/acme.json"], "unsigned (no key pinned), sequence ") {
		t.Errorf("trust lines = %q", trust)
	}
	screenshot(t, ctx, "sources-trust.png")
}

// The restart case of `make run`: the demo publisher comes back on a new
// port, so every source changes. Shop's new source has never been read,
// and its page says so, with the publisher's answer in words; it never
// reads "no known advisory" or "no releases".
func TestBrowserRestartLeavesShopUnknown(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if res, err := b.checker.RunLockedUpdateCheck(context.Background(), lease.Operator, "test"); err != nil || res.Failed != 1 {
		t.Fatalf("first start's check: %+v %v", res, err)
	}
	// The second start: a new publisher, a new port, the same manifest.
	p, err := demo.NewPublisher(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	again := publisher.New(t, publisher.Fallback(p))
	if _, err := updatecheck.NewSyncer(b.checker).Sync(context.Background(), p.Manifest(again.URL)); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	signIn(t, ctx, b.server.URL, "admin@example.test")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="check-button"]`))); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, "check-outcome", regexp.MustCompile(`^Check completed with failures`))
	waitText(t, ctx, "widget-failing", regexp.MustCompile(`^1`))

	if err := chromedp.Do(ctx, chromedp.Navigate(b.server.URL+"/admin/plugins?status=failing"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="catalog-table"]`))); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "catalog-table"); !strings.Contains(got, "Shop") || !strings.Contains(got, "answered 503 Service Unavailable") {
		t.Errorf("failing checks = %q, want Shop and its publisher's answer in words", got)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(b.server.URL+"/admin/plugins/shop"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="component-detail"]`))); err != nil {
		t.Fatal(err)
	}
	page, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("main").innerText`))
	if err != nil {
		t.Fatal(err)
	}
	for _, never := range []string{"No known advisory", "lists no releases", "Not checked yet", "unexpected http status"} {
		if strings.Contains(page, never) {
			t.Errorf("Shop's page says %q:\n%s", never, page)
		}
	}
	for _, want := range []string{"never been read successfully", "The publisher’s server answered 503 Service Unavailable."} {
		if !strings.Contains(page, want) {
			t.Errorf("Shop's page does not say %q:\n%s", want, page)
		}
	}
	screenshot(t, ctx, "detail-shop-after-restart.png")
}

// attrOf is an attribute of the element with data-testid id.
func attrOf(t *testing.T, ctx context.Context, id, name string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(`[data-testid="`+id+`"]`), name))
	if err != nil {
		t.Fatalf("%s of %s: %v", name, id, err)
	}
	return v.Value
}
