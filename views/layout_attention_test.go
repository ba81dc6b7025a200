package views

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/upcheck/upcheck/internal/readmodel"
)

func strp(s string) *string { return &s }

// attentionFixture names the components of attention(): an advisory with
// no fix, a security update, and a security release the core cannot run.
func attentionFixture() []readmodel.AttentionItem {
	return []readmodel.AttentionItem{
		{Code: "gallery", Name: "Gallery", Installed: "3.1.0", Kind: readmodel.KindVulnerableNoFix,
			Advisory:      &readmodel.AdvisoryRef{ID: "ACME-2026-009", Summary: "Image metadata is shown to visitors", Severity: "medium"},
			SecuritySince: ago(2 * time.Hour)},
		{Code: "blog", Name: "Blog", Installed: "2.3.0", UpdateVersion: strp("2.4.0"), Kind: readmodel.KindSecurity,
			SecurityRelease: &readmodel.ReleaseRef{Version: "2.4.0", Severity: "high", Summary: "Fixes stored XSS in comments", Installable: true},
			Advisory:        &readmodel.AdvisoryRef{ID: "ACME-2026-007", Summary: "Stored XSS in comments", Severity: "high", FixedIn: strp("2.4.0")},
			SecuritySince:   ago(72 * time.Hour)},
		{Code: "shop", Name: "Shop", Installed: "1.0.0", Kind: readmodel.KindSecurity,
			SecurityRelease: &readmodel.ReleaseRef{Version: "3.0.0", Severity: "critical", Summary: "SQL injection in checkout"},
			SecuritySince:   ago(30 * time.Minute)},
	}
}

// Each kind of problem is named with what to do about it: the move that
// fixes it, or that nothing does yet.
func TestAttentionWords(t *testing.T) {
	t.Parallel()
	items := attentionFixture()
	for _, c := range []struct {
		item readmodel.AttentionItem
		want string
	}{
		{items[0], "Gallery 3.1.0: ACME-2026-009, no fix yet"},
		{items[1], "Blog 2.3.0 → 2.4.0: stored XSS in comments (high)"},
		{items[2], "Shop 1.0.0: SQL injection in checkout, fixed in 3.0.0, which needs a newer core (critical)"},
		{readmodel.AttentionItem{Code: "wiki", Installed: "1.0.0", UpdateVersion: strp("1.1.0"), Kind: readmodel.KindSecurity,
			SecurityRelease: &readmodel.ReleaseRef{Version: "1.1.0", Installable: true}},
			"wiki 1.0.0 → 1.1.0: security fix"},
		{readmodel.AttentionItem{Code: "chat", Name: "Chat", Installed: "1.0.0", UpdateVersion: strp("1.0.1"), Kind: readmodel.KindVulnerable,
			Advisory: &readmodel.AdvisoryRef{ID: "C-1", Summary: "Open redirect.", Severity: "Medium", FixedIn: strp("1.0.1")}},
			"Chat 1.0.0 → 1.0.1: open redirect, fixed in 1.0.1 (medium)"},
		{readmodel.AttentionItem{Code: "chat", Name: "Chat", Installed: "1.0.0", Kind: readmodel.KindVulnerable,
			Advisory: &readmodel.AdvisoryRef{ID: "C-2", Severity: "low", FixedIn: strp("1.2.0")}},
			"Chat 1.0.0: C-2, fixed in 1.2.0 (low)"},
		{readmodel.AttentionItem{Code: "x", Name: "X", Installed: "1.0.0", UpdateVersion: strp("2.0.0"), Kind: readmodel.KindVulnerableNoFix,
			Advisory: &readmodel.AdvisoryRef{ID: "X-1"}},
			"X 1.0.0: X-1, no fix yet"},
	} {
		if got := attentionSubject(c.item) + ": " + attentionProblem(c.item); got != c.want {
			t.Errorf("%s: %q, want %q", c.item.Code, got, c.want)
		}
	}
}

// The banner names a few components, each linking to its page, then "and
// N more" linking to the filtered catalog; the dashboard names all the
// summary names, with how long each has been known, and its banner none
// (one list on the page).
func TestBannerNamesAFew(t *testing.T) {
	t.Parallel()
	s := attention()
	s.Attention = append(s.Attention, attentionFixture()[1:]...)
	for i := range s.Attention[3:] {
		s.Attention[3+i].Code = fmt.Sprintf("more-%d", i)
	}
	s.AttentionMore = 4
	s.AttentionTotal = len(s.Attention) + s.AttentionMore
	root := doc(t, Dashboard(DashboardProps{Layout: layout(s, true)}))

	// The dashboard names them once: in its "Needs attention", not in the
	// banner as well; every other page's banner names a few.
	if lists := byTestID(root, "attention-banner-items"); len(lists) != 0 {
		t.Errorf("the dashboard's banner names components too: %q", text(lists[0]))
	}
	banner := one(t, doc(t, Catalog(CatalogProps{Layout: layout(s, true)})), "attention-banner-items")
	var links []string
	for _, a := range findAll(banner, func(n *html.Node) bool { return n.Data == "a" }) {
		h, _ := attr(a, "href")
		links = append(links, h+" "+text(a))
	}
	want := "[/admin/plugins/gallery Gallery 3.1.0 /admin/plugins/blog Blog 2.3.0 → 2.4.0 /admin/plugins/shop Shop 1.0.0 " +
		"/admin/plugins?status=attention and 6 more components]"
	if fmt.Sprint(links) != want {
		t.Errorf("banner links %v, want %s", links, want)
	}

	widget := one(t, root, "widget-attention-items")
	items := byTestID(widget, "attention-item")
	if len(items) != 5 {
		t.Fatalf("the dashboard names %d components, want 5", len(items))
	}
	if got := text(items[1]); got != "Blog 2.3.0 → 2.4.0: stored XSS in comments (high) Security fix available for 3 days" {
		t.Errorf("dashboard item %q", got)
	}
	if got := text(items[0]); !strings.HasSuffix(got, "no fix yet Vulnerable for 2 hours") {
		t.Errorf("dashboard item %q", got)
	}
	if got := text(one(t, widget, "attention-more")); got != "and 4 more components" {
		t.Errorf("dashboard's more link %q", got)
	}

	// Nothing to name: no list, no heading.
	calmRoot := doc(t, Dashboard(DashboardProps{Layout: layout(calm(), true)}))
	if got := text(one(t, calmRoot, "widget-attention")); got != "" {
		t.Errorf("calm dashboard names %q", got)
	}
}

func TestNextCheckAndSpanWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		next time.Duration
		want string
	}{
		{time.Minute, "today at 12:01 UTC"},
		{11*time.Hour + 59*time.Minute, "today at 23:59 UTC"},
		{12 * time.Hour, "tomorrow at 00:00 UTC"},
		{16*time.Hour + 17*time.Minute, "tomorrow at 04:17 UTC"},
		{36 * time.Hour, "on Tue 1 Dec at 00:00 UTC"},
		{400 * 24 * time.Hour, "on 3 Jan 2028 at 12:00 UTC"},
	} {
		next := now.Add(c.next).In(time.FixedZone("elsewhere", 5*3600))
		if got := nextCheckText(now, &next); got != c.want {
			t.Errorf("next check in %s: %q, want %q", c.next, got, c.want)
		}
	}
	for d, want := range map[time.Duration]string{
		30 * time.Second: "under a minute", time.Minute: "1 minute", 59 * time.Minute: "59 minutes",
		time.Hour: "1 hour", 47 * time.Hour: "1 day", 72 * time.Hour: "3 days", 400 * 24 * time.Hour: "400 days",
	} {
		if got := readmodel.SpanText(d); got != want {
			t.Errorf("readmodel.SpanText(%s) = %q, want %q", d, got, want)
		}
	}
}

// TestUntrustedText: publisher-supplied text and URLs are escaped, and a
// javascript: URL never becomes a link.
func TestUntrustedText(t *testing.T) {
	t.Parallel()
	out := render(t, ComponentDetail(DetailProps{Layout: layout(calm(), true), DetailRow: readmodel.DetailRow{Code: "x", Name: `<img src=x onerror=alert(1)>`,
		Installed: "1", SourceURL: "javascript:alert(1)"}, Releases: []ReleaseRow{{Version: "2", URL: "javascript:alert(2)",
		Summary: `<script>alert(3)</script>`}}}))
	if strings.Contains(out, "<img src=x") || strings.Contains(out, "<script>alert") || strings.Contains(out, `href="javascript:`) {
		t.Errorf("untrusted text not escaped:\n%s", out)
	}
}
