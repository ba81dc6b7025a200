package views

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// A dismissed advisory does not leave a plain green "Up to date": the
// catalog row and the detail headline say how many are dismissed and
// until when, with plurals and without an end.
func TestDismissedAdvisoryIsNotPlainUpToDate(t *testing.T) {
	t.Parallel()
	dec20 := time.Date(2026, 12, 20, 23, 59, 59, 0, time.UTC)
	jan5 := time.Date(2027, 1, 5, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		n     int
		until *time.Time
		want  string
	}{
		{1, &dec20, "Up to date · 1 advisory dismissed until 20 Dec"},
		{1, nil, "Up to date · 1 advisory dismissed with no end"},
		{2, nil, "Up to date · 2 advisories dismissed with no end"},
		{3, &jan5, "Up to date · 3 advisories dismissed, the first until 5 Jan 2027"},
	} {
		row := CatalogRow{Code: "core", Name: "Core", Installed: "1.9.0", Latest: "1.9.0", Evaluated: true,
			SourceURL: "https://updates.example.org/core.json", LastSuccessAt: ago(time.Hour),
			Dismissed: tc.n, DismissedUntil: tc.until}
		root := doc(t, Catalog(CatalogProps{Layout: layout(calm(), true), Rows: []CatalogRow{row}, Page: 1, Total: 1}))
		if got := text(one(t, root, "catalog-status")); got != tc.want {
			t.Errorf("catalog row with %d dismissed: %q, want %q", tc.n, got, tc.want)
		}
		var as []AdvisoryRow
		for i := range tc.n {
			a := AdvisoryRow{ID: "A-" + string(rune('1'+i)), Severity: "low", FixedIn: "2.0.0", Dismissed: true,
				Dismissal: &AdvisoryDismissal{By: "ada@example.org", At: now.Add(-time.Hour), Reason: "r"}}
			if i == tc.n-1 { // the soonest end is found wherever it is listed
				a.Dismissal.ExpiresAt = tc.until
			}
			as = append(as, a)
		}
		p := DetailProps{Layout: layout(calm(), true), Code: "core", Name: "Core", Installed: "1.9.0",
			SourceURL: row.SourceURL, LastSuccessAt: row.LastSuccessAt, Evaluated: true, Advisories: as}
		if got := text(one(t, doc(t, ComponentDetail(p)), "detail-headline")); got != tc.want {
			t.Errorf("detail with %d dismissed: %q, want %q", tc.n, got, tc.want)
		}
	}
	// Beside other news, the dismissal is said too.
	row := CatalogRow{Code: "blog", Installed: "1.0", UpdateAvailable: true, UpdateVersion: "1.1", Evaluated: true,
		SourceURL: "https://p.example/u.json", LastSuccessAt: ago(time.Hour), Dismissed: 1}
	got := rowBadges(row, now)
	if len(got) != 2 || got[0].Text != "Update to 1.1" || got[1].Text != "1 advisory dismissed with no end" {
		t.Errorf("update and a dismissal: %+v", got)
	}
}

// The catalog page offers every filter the store and the API know, the
// dismissed and stale ones included, each with its count line and its
// empty page in words of its own.
func TestCatalogOffersEveryFilter(t *testing.T) {
	t.Parallel()
	var offered []string
	for _, f := range filterOptions {
		offered = append(offered, f.Value)
	}
	if !slices.Equal(offered, readmodel.CatalogFilters) {
		t.Fatalf("the page offers %q, the read model defines %q", offered, readmodel.CatalogFilters)
	}
	general := filterNoun("", 2)
	for _, f := range readmodel.CatalogFilters[1:] {
		if filterNoun(f, 2) == general {
			t.Errorf("filter %q has no count words of its own", f)
		}
		if catalogEmptyText(CatalogProps{Filter: f}) == catalogEmptyText(CatalogProps{}) {
			t.Errorf("filter %q has no empty page of its own", f)
		}
	}
	if got := filterNoun(FilterDismissed, 1); got != "component with a dismissed advisory" {
		t.Errorf("dismissed count words %q", got)
	}
}

// Beside the untrusted count, the dashboard and Source health say how many
// sources have no key pinned, from the summary, in the right plural.
func TestUnsignedSourcesAreSaid(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{1: "1 unsigned source (no key pinned)", 3: "3 unsigned sources (no key pinned)"} {
		s := calm()
		s.UnsignedSources = n
		dash := doc(t, Dashboard(DashboardProps{Layout: layout(s, true)}))
		stat := one(t, dash, "widget-unsigned")
		if got := text(stat.Parent); got != want {
			t.Errorf("dashboard with %d unsigned: %q, want %q", n, got, want)
		}
		src := doc(t, SourceHealth(SourceHealthProps{Layout: layout(s, true), Sources: []SourceRow{
			{URL: "https://p.example/u.json", Components: 1, LastSuccessAt: ago(time.Hour)}}}))
		if got := text(one(t, src, "sources-trust-summary")); got != "0 untrusted sources · "+want {
			t.Errorf("source health with %d unsigned: %q", n, got)
		}
	}
}

// A component with no update source says so once; nothing on its page
// says its source "has not been read yet".
func TestNoSourcePageSaysItOnce(t *testing.T) {
	t.Parallel()
	shown := visibleText(doc(t, ComponentDetail(DetailProps{Layout: layout(calm(), true), Code: "local",
		Name: "Local tweaks", Installed: "0.1.0"})))
	if strings.Contains(shown, "not been read yet") || strings.Contains(shown, "next check will fetch") {
		t.Errorf("the page of a component without a source speaks of reading it:\n%s", shown)
	}
	if n := strings.Count(shown, "nobody publishes updates"); n != 1 {
		t.Errorf("the page says %d times that nobody publishes updates:\n%s", n, shown)
	}
}

// On the page of a component never read successfully, why nothing is
// known is said once, in the headline; a component installed a moment
// ago is not called stale.
func TestUnknownSentenceOnce(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]DetailProps{
		"never read, failing": {SourceURL: "https://shop.example/u.json", LastError: "fetch: 503",
			LastErrorKind: string(readmodel.ErrorHTTPStatus), LastErrorArg: "503"},
		"never read, stale": {SourceURL: "https://shop.example/u.json", LastError: "fetch: 503", Stale: true,
			LastErrorKind: string(readmodel.ErrorHTTPStatus), LastErrorArg: "503"},
		"not evaluated": {SourceURL: "https://shop.example/u.json", LastSuccessAt: ago(time.Hour), Evaluated: true,
			LastError: `no package "shop"`, LastErrorKind: string(readmodel.ErrorEvaluation)},
	} {
		p.Layout, p.Code, p.Name, p.Installed = layout(calm(), true), "shop", "Shop", "0.9.1"
		shown := visibleText(doc(t, ComponentDetail(p)))
		if n := strings.Count(shown, "nothing is known"); n != 1 {
			t.Errorf("%s: “nothing is known” said %d times:\n%s", name, n, shown)
		}
		if !p.Stale && strings.Contains(shown, "48 hours") {
			t.Errorf("%s: a component that is not stale is said to be 48 hours old:\n%s", name, shown)
		}
	}
	row := CatalogRow{Code: "shop", Installed: "1.0", SourceURL: "https://shop.example/u.json", LastError: "fetch: 503",
		LastErrorKind: string(readmodel.ErrorHTTPStatus), LastErrorArg: "503"}
	var words []string
	for _, b := range rowBadges(row, now) {
		words = append(words, b.Text)
	}
	if got := strings.Join(words, ", "); got != "Check failing, Never read successfully" {
		t.Errorf("a new component whose source failed: %q", got)
	}
}

// An error page says its title once: a message that only repeats it (echo's
// bare "Not Found", "Forbidden") gives way to the status's sentence.
func TestErrorPageSaysItsTitleOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status        int
		message, want string
	}{
		{404, "Not Found", "There is nothing at this address."},
		{404, "Not found.", "There is nothing at this address."},
		{403, "Forbidden", "Your account is not allowed to do this."},
		{403, "Only administrators can dismiss advisories.", "Only administrators can dismiss advisories."},
	} {
		title, _ := errorText(tc.status)
		for name, c := range map[string]func(ErrorProps) string{
			"bare": func(p ErrorProps) string { return visibleText(one(t, doc(t, ErrorPage(p)), "error-page")) },
			"layout": func(p ErrorProps) string {
				return visibleText(one(t, doc(t, ErrorInLayout(layout(calm(), true), p)), "error-page"))
			},
		} {
			shown := c(ErrorProps{Status: tc.status, Message: tc.message, Asset: testAsset})
			if !strings.Contains(shown, tc.want) {
				t.Errorf("%s %d %q: %q, want %q", name, tc.status, tc.message, shown, tc.want)
			}
			if rest := strings.Replace(shown, title, "", 1); strings.Contains(strings.ToLower(rest), strings.ToLower(strings.TrimSuffix(tc.message, "."))) &&
				tc.message != tc.want {
				t.Errorf("%s %d: the card says its title again as %q: %q", name, tc.status, tc.message, shown)
			}
		}
	}
}

// A refused import reads "Refused" in the history; a check cut off counts
// the sources it fetched but did not save apart from those it never
// fetched; the command line is "command line" in the history and the
// audit log alike.
func TestHistoryWordsWhatHappened(t *testing.T) {
	t.Parallel()
	root := doc(t, History(HistoryProps{Layout: layout(calm(), true), Runs: []RunRow{
		{ID: 3, Trigger: "import", Actor: readmodel.ActorCLI, Status: "completed_with_failures", StartedAt: now.Add(-time.Hour),
			FinishedAt: ago(time.Hour), Failed: 1},
		{ID: 2, Trigger: "operator", Actor: readmodel.ActorCLI, Status: "cancelled", StartedAt: now.Add(-2 * time.Hour),
			FinishedAt: ago(2 * time.Hour), Fetched: 1, Skipped: 3, Unwritten: 2},
		{ID: 1, Trigger: "operator", Actor: readmodel.ActorCLI, Status: "cancelled", StartedAt: now.Add(-3 * time.Hour),
			FinishedAt: ago(3 * time.Hour), Fetched: 1, Skipped: 1},
	}}))
	rows := byTestID(root, "history-row")
	if got := visibleText(rows[0]); !strings.Contains(got, "Refused") || strings.Contains(got, "Completed with failures") {
		t.Errorf("a refused import: %q", got)
	}
	for i, want := range []string{"", "1 fetched, 0 unchanged, 0 failed, 2 fetched but not saved, 1 not fetched (the check stopped first)",
		"1 fetched, 0 unchanged, 0 failed, 1 not fetched (the check stopped first)"} {
		if got := visibleText(rows[i]); want != "" && !strings.Contains(got, want) {
			t.Errorf("row %d: %q, want %q", i, got, want)
		}
		if got := visibleText(rows[i]); strings.Contains(got, "not started") || strings.Contains(got, "upcheck check") ||
			!strings.Contains(got, "command line") {
			t.Errorf("row %d words the command line or its counts wrongly: %q", i, got)
		}
	}
	audit := visibleText(doc(t, Audit(AuditProps{Layout: auditLayout(), Page: 1, Total: 2, Rows: []AuditRow{
		{At: now, Kind: string(readmodel.AuditKindCheck), Action: "check", Actor: readmodel.ActorCLI, Trigger: "operator", Status: "completed"},
		{At: now, Kind: string(readmodel.AuditKindAccount), Action: "user.create", Detail: "email: a@x"},
	}})))
	if strings.Count(audit, "command line") < 2 || strings.Contains(audit, "cli") || strings.Contains(audit, "the command line") {
		t.Errorf("the audit page words the command line otherwise: %q", audit)
	}
	if got := AuditActorText("", "user.create"); got != readmodel.ActorText(readmodel.ActorCLI) || got != "command line" {
		t.Errorf("an entry without an actor: %q", got)
	}
}

// A failure of no known kind is said once: the detail page's "The last
// check of this component failed." and the badges say it, and the
// problem below them points to the technical text instead of repeating
// the general sentence.
func TestUnknownFailureSaidOnce(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]DetailProps{
		"never read": {SourceURL: "https://s.example/u.json", LastError: "boom"},
		"read once":  {SourceURL: "https://s.example/u.json", LastError: "boom", LastSuccessAt: ago(time.Hour), Evaluated: true},
	} {
		p.Layout, p.Code, p.Name, p.Installed = layout(calm(), true), "shop", "Shop", "1.0"
		shown := visibleText(doc(t, ComponentDetail(p)))
		if n := strings.Count(shown, "The last check of this"); n != 1 {
			t.Errorf("%s: the failure is said %d times:\n%s", name, n, shown)
		}
	}
	shown := visibleText(doc(t, Catalog(CatalogProps{Layout: layout(calm(), true), Page: 1, Total: 1, Rows: []CatalogRow{
		{Code: "shop", Name: "Shop", Installed: "1", SourceURL: "https://s.example/u.json", LastError: "boom"}}})))
	if strings.Contains(shown, "The last check of this source failed") || !strings.Contains(shown, "Check failing") {
		t.Errorf("the catalog row says the failure twice:\n%s", shown)
	}
}

// A source never read is stale only 48 hours after its installation; then
// its badge says so instead of "Waiting for its first import".
func TestSourceNeverReadBadges(t *testing.T) {
	t.Parallel()
	words := func(s SourceRow) string {
		var w []string
		for _, b := range sourceBadges(s) {
			w = append(w, b.Text)
		}
		return strings.Join(w, ", ")
	}
	if got := words(SourceRow{URL: "offline:x", Offline: true}); got != "Waiting for its first import" {
		t.Errorf("offline, new: %q", got)
	}
	if got := words(SourceRow{URL: "offline:x", Offline: true, Stale: true}); got !=
		"Stale: nothing read in the 48 hours since it was installed, Offline: imported, never fetched" {
		t.Errorf("offline, waiting for 48 hours: %q", got)
	}
	if got := words(SourceRow{URL: "https://p.example/u.json", Failing: true, ConsecutiveFailures: 1}); got !=
		"Failing, 1 time in a row, Never fetched successfully" {
		t.Errorf("new and failing: %q", got)
	}
}

// Counts in views take the right plural.
func TestPluralsInViews(t *testing.T) {
	t.Parallel()
	for got, want := range map[string]string{
		bytesText(1):                      "1 byte",
		bytesText(100):                    "100 bytes",
		attentionMoreText(1):              "and 1 more component",
		trustCountsText(calm()):           "0 untrusted sources · 0 unsigned sources (no key pinned)",
		runCountsText(RunRow{Skipped: 1}): "0 fetched, 0 unchanged, 0 failed, 1 not fetched (the check stopped first)",
		dismissedText(1, nil, now):        "1 advisory dismissed with no end",
	} {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}
