package views

import (
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// treeSummary is a summary in which one component needs attention (a
// security update) and the installed tree has a malicious package, a
// look-back finding and a vulnerable dependency.
func treeSummary() readmodel.Summary {
	s := calm()
	items := attentionFixture()
	s.SecurityUpdates, s.Attention, s.AttentionTotal = 1, items[1:2], 1
	s.Malicious, s.MalwareReadAt = new(int), ago(time.Hour)
	s.TreePackages, s.TreeReadAt = ptr(212), ago(time.Hour)
	s.TreeCounts = &readmodel.TreeCounts{Malicious: ptr(1), Exposed: 1, Vulnerable: 1, Total: 3}
	s.TreeAttention = readmodel.TreeAttentionItems{
		{Name: "evil", Version: "1.0.0", AdvisoryID: "MAL-2026-1", Kind: readmodel.KindMalicious, Malicious: true},
		{Name: "debug", Version: "4.4.2", AdvisoryID: "MAL-2026-2", Kind: readmodel.KindExposed, Malicious: true,
			InstalledAt: ago(50 * time.Hour), RemovedAt: ago(48 * time.Hour)},
		{Name: "ws", Version: "8.11.0", AdvisoryID: "GHSA-3h5v-q93c-6h6q", Kind: readmodel.KindVulnerable},
	}
	return s
}

// The banner counts the tree's items beside the components' in readmodel's
// words, in the danger tone, and names a malicious package and a
// look-back finding of the tree before a component's security update;
// the badge beside Packages counts them; the dashboard links each kind's
// count to the Packages page's filter.
func TestBannerBadgeAndDashboardCountTheTree(t *testing.T) {
	t.Parallel()
	s := treeSummary()
	root := doc(t, Catalog(CatalogProps{Layout: layout(s, true)}))
	alert := one(t, root, "security-alert")
	if class, _ := attr(alert, "class"); !strings.Contains(class, "alert-danger") {
		t.Errorf("alert class %q, want alert-danger", class)
	}
	want := "1 security update needs attention. 1 malicious package in the dependencies, 1 past exposure in the dependencies and 1 vulnerable dependency need attention."
	if got := text(one(t, root, "security-alert-text")); got != want {
		t.Errorf("alert %q, want %q", got, want)
	}
	var order []string
	list := one(t, root, "attention-banner-items")
	walk(list, func(n *html.Node) {
		if id, _ := attr(n, "data-testid"); id == "attention-item" || id == "tree-attention-item" {
			order = append(order, text(n))
		}
	})
	if len(order) != 3 || !strings.HasPrefix(order[0], "evil 1.0.0: in the dependencies, known malicious package: remove it (MAL-2026-1)") ||
		!strings.HasPrefix(order[1], "debug 4.4.2 (malicious) was installed from") || !strings.HasPrefix(order[2], "Blog 2.3.0") {
		t.Errorf("banner names %q", order)
	}
	if got := text(one(t, list, "tree-attention-more")); got != "and 1 more in the dependencies" {
		t.Errorf("more: %q", got)
	}
	badge := one(t, root, "nav-tree-badge")
	if n, _ := attr(badge, "data-count"); n != "3" || hidden(badge) || text(badge) != "3 3 dependencies need attention" {
		t.Errorf("Packages badge %s %q (hidden %v)", n, text(badge), hidden(badge))
	}
	if n, _ := attr(one(t, root, "nav-attention-badge"), "data-count"); n != "1" {
		t.Errorf("Plugins badge %s, want the components' 1", n)
	}

	dash := doc(t, Dashboard(DashboardProps{Layout: layout(s, true)}))
	var counts []string
	for _, n := range byTestID(dash, "dashboard-tree-count") {
		href, _ := attr(n, "href")
		counts = append(counts, text(n)+" → "+href)
	}
	wantCounts := []string{"1 malicious package in the dependencies → /admin/packages?filter=malicious",
		"1 past exposure in the dependencies → /admin/packages", "1 vulnerable dependency → /admin/packages?filter=vulnerable"}
	if !slices.Equal(counts, wantCounts) {
		t.Errorf("dashboard counts %q, want %q", counts, wantCounts)
	}
	if got := len(byTestID(one(t, dash, "widget-attention-items"), "tree-attention-item")); got != 3 {
		t.Errorf("the dashboard names %d tree items, want 3", got)
	}
}

// With no component needing attention, the tree's items alone show the
// banner; with no tree read, there is no tree badge and no count.
func TestBannerShowsForTheTreeAlone(t *testing.T) {
	t.Parallel()
	s := treeSummary()
	s.SecurityUpdates, s.Attention, s.AttentionTotal = 0, []readmodel.AttentionItem{}, 0
	root := doc(t, Dashboard(DashboardProps{Layout: layout(s, true)}))
	if got := text(one(t, root, "security-alert-text")); !strings.HasPrefix(got, "1 malicious package in the dependencies") {
		t.Errorf("alert %q", got)
	}
	s = calm()
	root = doc(t, Dashboard(DashboardProps{Layout: layout(s, true)}))
	if len(byTestID(root, "security-alert")) != 0 || !hidden(one(t, root, "nav-tree-badge")) || len(byTestID(root, "dashboard-tree-count")) != 0 {
		t.Error("a summary with no tree shows the tree's attention")
	}
}

// A component up to date whose dependencies need attention never reads as
// a plain green "Up to date"; one with its own problems names them too.
func TestRowSaysItsDependencies(t *testing.T) {
	t.Parallel()
	r := readmodel.CatalogRow{Code: "forms", Name: "Forms", Installed: "1.0.0", SourceURL: "https://acme.example/u.json",
		Evaluated: true, LastSuccessAt: ago(time.Hour), TreeCounted: 3, TreeMalicious: 1}
	bs := rowBadges(r, time.Now())
	if len(bs) != 1 || bs[0].Text != "Up to date · 1 malicious package in its dependencies · 2 vulnerable dependencies" || bs[0].Tone != toneDanger {
		t.Errorf("badges %+v", bs)
	}
	r.TreeMalicious, r.Vulnerable = 0, true
	bs = rowBadges(r, time.Now())
	if len(bs) != 2 || bs[0].Text != "Vulnerable" || bs[1].Text != "3 vulnerable dependencies" || bs[1].Tone != toneWarn {
		t.Errorf("badges %+v", bs)
	}
}
