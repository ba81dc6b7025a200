package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/upcheck/upcheck/internal/lease"
)

// What the feeds add, in a real browser, as an admin reads it: the banner
// names the malicious package first, then the exploited advisory; the
// catalog's first rows carry their badges and its filters find them; the
// malicious package's page heads with "Known malicious package: remove
// it" and its dismiss form says a reason is required; the exploited
// advisory shows KEV's facts and note and EPSS beside its severity;
// Source health lists the feeds with the interruption, and the history
// the interrupted sync. Feed text is shown as text (no script runs).
func TestBrowserFeedsFacts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, err := b.checker.RunLockedUpdateCheck(context.Background(), lease.Operator, "test"); err != nil {
		t.Fatal(err)
	}
	b.intelFacts()
	b.feedRows()
	ctx := browser(t)
	signIn(t, ctx, b.server.URL, "admin@example.test")
	// The banner of a page other than the dashboard (whose "Needs
	// attention" names them instead).
	if err := chromedp.Do(within(t, ctx), chromedp.Navigate(b.server.URL+"/admin/history"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="security-alert-text"]`))); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "security-alert-text"); !strings.HasPrefix(got, "1 known malicious package: remove it. 1 component has an advisory exploited in the wild.") {
		t.Errorf("banner %q", got)
	}
	first, second := textAt(t, ctx, `[data-testid="attention-banner-items"] li:nth-child(1)`), textAt(t, ctx, `[data-testid="attention-banner-items"] li:nth-child(2)`)
	if !strings.Contains(first, "known malicious package: remove it (MAL-2026-4242)") || !strings.Contains(second, "ACME-2026-011 is exploited in the wild (KEV due date 2026-11-24, a US federal reference)") {
		t.Errorf("banner items %q, %q", first, second)
	}
	screenshot(t, ctx, "feeds-dashboard.png")

	if err := chromedp.Do(within(t, ctx), chromedp.Navigate(b.server.URL+"/admin/plugins?status=malicious"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="catalog-row"]`))); err != nil {
		t.Fatal(err)
	}
	rows := textAt(t, ctx, `tbody`)
	if !strings.Contains(rows, "Forms") || strings.Contains(rows, "Gallery") || !strings.Contains(rows, "Known malicious package: remove it") {
		t.Errorf("malicious filter rows %q", rows)
	}

	row := `[data-testid="advisory-row"][data-id="MAL-2026-4242"]`
	if err := chromedp.Do(within(t, ctx), chromedp.Navigate(b.server.URL+"/admin/plugins/forms"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="detail-headline"]`)),
		chromedp.Click(chromedp.CSS(row+` [data-testid="advisory-dismiss"] summary`)),
		chromedp.WaitVisible(chromedp.CSS(row+` [data-testid="dismiss-malicious"]`))); err != nil {
		t.Fatal(err)
	}
	reasonRequired, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('`+row+` [data-testid="dismiss-reason"]').required`))
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "detail-headline"); !strings.HasPrefix(got, "Known malicious package: remove it: ") {
		t.Errorf("headline %q", got)
	}
	if !reasonRequired {
		t.Error("the malicious advisory's reason is not required")
	}
	summary := textAt(t, ctx, row+` td[data-label="Summary"]`)
	xss, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelectorAll('td script').length > 0`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(summary, "<script>alert(1)</script>") || xss {
		t.Errorf("the record's summary is not shown as text: %q (script element: %v)", summary, xss)
	}
	screenshot(t, ctx, "feeds-malicious.png")

	if err := chromedp.Do(within(t, ctx), chromedp.Navigate(b.server.URL+"/admin/plugins/gallery"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="advisory-kev"]`))); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]*regexp.Regexp{
		"advisory-epss":    regexp.MustCompile(`^EPSS 94\.3 % · 99th percentile$`),
		"advisory-origins": regexp.MustCompile(`^From the publisher and OSV$`),
		"kev-due-date":     regexp.MustCompile(`^2026-11-24$`),
		"kev-action":       regexp.MustCompile(`^Apply mitigations per vendor <b>instructions</b> or discontinue use\.$`),
		"kev-ransomware":   regexp.MustCompile(`^Known to be used in ransomware campaigns$`),
		"kev-note":         regexp.MustCompile(`set for US federal agencies: a reference, not a deadline for every site`),
		"kev-due":          regexp.MustCompile(`^KEV due date 2026-11-24`),
		"detail-headline":  regexp.MustCompile(`^Exploited in the wild: attackers are using it`),
	} {
		if got := text(t, ctx, id); !want.MatchString(got) {
			t.Errorf("%s = %q, want %s", id, got, want)
		}
	}
	screenshot(t, ctx, "feeds-exploited.png")

	if err := chromedp.Do(within(t, ctx), chromedp.Navigate(b.server.URL+"/admin/sources"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="feeds-table"]`))); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "feed-interrupted"); !strings.HasPrefix(got, "The sync started 2026-12-01 03:00 UTC was interrupted before it finished.") {
		t.Errorf("feed interrupted %q", got)
	}
	if got := text(t, ctx, "feed-problem"); !strings.Contains(got, "not of this feed's kind (the column percentile is missing)") {
		t.Errorf("feed problem %q", got)
	}
	screenshot(t, ctx, "feeds-sources.png")
	if err := chromedp.Do(within(t, ctx), chromedp.Navigate(b.server.URL+"/admin/history"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="feed-syncs-table"]`))); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "feed-sync-interrupted"); got != "The sync started 2026-12-01 03:00 UTC was interrupted before it finished." {
		t.Errorf("history %q", got)
	}
}

// A malicious package's advisory is never dismissed without a reason:
// the server refuses an empty one as for any advisory, and it still
// counts; with a reason an admin dismisses it.
func TestMaliciousDismissNeedsAReason(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	b.intelFacts()
	const path = "/admin/plugins/forms/advisories/MAL-2026-4242/dismiss"
	r := admin.postForm(path, url.Values{"reason": {"   "}})
	wantStatus(t, "no reason", r, http.StatusUnprocessableEntity)
	if !strings.Contains(r.body, "Give a reason") || !strings.Contains(r.body, `data-testid="dismiss-malicious"`) {
		t.Errorf("the refused form does not ask for a reason: %s", r.body)
	}
	if got := decodeJSON[struct {
		Malicious int `json:"malicious"`
	}](t, admin.do("GET", "/api/admin/plugins/updates/summary", "", "", nil)); got.Malicious != 1 {
		t.Errorf("malicious %d after a refused dismissal, want 1", got.Malicious)
	}
	viewer := b.login("viewer@example.test")
	wantStatus(t, "a viewer", viewer.postForm(path, url.Values{"reason": {"removed"}}), http.StatusForbidden)
	wantStatus(t, "with a reason", admin.postForm(path, url.Values{"reason": {"uninstalled; the manifest lags"}}), http.StatusSeeOther)
	if got := decodeJSON[struct {
		Malicious int `json:"malicious"`
	}](t, admin.do("GET", "/api/admin/plugins/updates/summary", "", "", nil)); got.Malicious != 0 {
		t.Errorf("malicious %d after the dismissal, want 0", got.Malicious)
	}
}

// textAt is the text of the first element sel finds.
func textAt(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector(`+strconv.Quote(sel)+`) || {}).textContent || ""`))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(v), " ")
}
