package views

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// Beside the untrusted count, the dashboard (from the summary) and Source
// health (from the sources it lists, by the read model's flags) say how
// many sources have no key pinned, in the right plural.
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
		sources := []readmodel.SourceRow{{URL: "https://p.example/signed.json", Components: 1, LastSuccessAt: ago(time.Hour), Pin: "k"}}
		for i := range n {
			sources = append(sources, readmodel.SourceRow{URL: fmt.Sprintf("https://p.example/u%d.json", i), Components: 1,
				LastSuccessAt: ago(time.Hour), Unsigned: true})
		}
		src := doc(t, SourceHealth(SourceHealthProps{Layout: layout(calm(), true), Sources: sources}))
		if got := text(one(t, src, "sources-trust-summary")); got != "0 untrusted sources · "+want {
			t.Errorf("source health with %d unsigned: %q", n, got)
		}
	}
}

// A failure of no known kind is said once: the detail page's "The last
// check of this component failed." and the badges say it, and the
// problem below them points to the technical text instead of repeating
// the general sentence.
func TestUnknownFailureSaidOnce(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]DetailProps{
		"never read": {DetailRow: readmodel.DetailRow{SourceURL: "https://s.example/u.json", LastError: "boom"}},
		"read once": {DetailRow: readmodel.DetailRow{SourceURL: "https://s.example/u.json", LastError: "boom", LastSuccessAt: ago(time.Hour),
			Evaluated: true}},
	} {
		p.Layout, p.Code, p.Name, p.Installed = layout(calm(), true), "shop", "Shop", "1.0"
		shown := visibleText(doc(t, ComponentDetail(p)))
		if n := strings.Count(shown, "The last check of this"); n != 1 {
			t.Errorf("%s: the failure is said %d times:\n%s", name, n, shown)
		}
	}
	shown := visibleText(doc(t, Catalog(CatalogProps{Layout: layout(calm(), true), Page: 1, Total: 1, Rows: []readmodel.CatalogRow{
		{Code: "shop", Name: "Shop", Installed: "1", SourceURL: "https://s.example/u.json", LastError: "boom"}}})))
	if strings.Contains(shown, "The last check of this source failed") || !strings.Contains(shown, "Check failing") {
		t.Errorf("the catalog row says the failure twice:\n%s", shown)
	}
}

// Counts in views take the right plural.
func TestPluralsInViews(t *testing.T) {
	t.Parallel()
	for got, want := range map[string]string{
		bytesText(1):         "1 byte",
		bytesText(100):       "100 bytes",
		attentionMoreText(1): "and 1 more component",
		trustCountsText(nil): "0 untrusted sources · 0 unsigned sources (no key pinned)",
		trustCountsText([]readmodel.SourceRow{{Untrusted: true, Unsigned: true}}): "1 untrusted source · 1 unsigned source (no key pinned)",
		runCountsText(readmodel.RunRow{Skipped: 1}):                               "0 fetched, 0 unchanged, 0 failed, 1 not fetched (the check stopped first)",
		dismissedText(1, nil, now):                                                "1 advisory dismissed with no end",
	} {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}
