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
// summary names, with how long each has been known.
func TestBannerNamesAFew(t *testing.T) {
	t.Parallel()
	s := attention()
	s.Attention = append(s.Attention, attentionFixture()[1:]...)
	for i := range s.Attention[3:] {
		s.Attention[3+i].Code = fmt.Sprintf("more-%d", i)
	}
	s.AttentionMore = 4
	root := doc(t, Dashboard(DashboardProps{Layout: layout(s, true)}))

	banner := one(t, root, "attention-banner-items")
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

// The dashboard names the component never read successfully and links to
// it, and says when the next check runs.
func TestDashboardNeverAndNextCheck(t *testing.T) {
	t.Parallel()
	s := readmodel.Summary{Components: 2, NeverSucceeded: &readmodel.ComponentRef{Code: "shop", Name: "Shop"}}
	root := doc(t, Dashboard(DashboardProps{Layout: layout(s, true)}))
	if got := text(one(t, root, "widget-oldest-success")); got != "never (Shop has never been read successfully)" {
		t.Errorf("oldest success %q", got)
	}
	if h, _ := attr(one(t, root, "widget-never-succeeded"), "href"); h != "/admin/plugins/shop" {
		t.Errorf("never links to %q", h)
	}
	if got := text(one(t, root, "widget-next-check")); got != "not scheduled" {
		t.Errorf("next check without a schedule %q", got)
	}
	s.NextCheckAt = in(4*time.Hour + 17*time.Minute)
	root = doc(t, Dashboard(DashboardProps{Layout: layout(s, true)}))
	if got := text(one(t, root, "widget-next-check")); got != "today at 16:17 UTC" {
		t.Errorf("next check %q", got)
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
		if got := spanText(d); got != want {
			t.Errorf("spanText(%s) = %q, want %q", d, got, want)
		}
	}
}

// The detail page opens with the state and the next step, the most urgent
// first, and never claims "up to date" without a current evaluation of a
// source read recently.
func TestDetailHeadline(t *testing.T) {
	t.Parallel()
	src := "https://acme.example/u.json"
	sec := &ReleaseRow{Version: "2.4.0", Security: true, Severity: "high", RequiresCore: ">=1.8.0"}
	blocked := &ReleaseRow{Version: "5.1.0", RequiresCore: ">=2.0.0"}
	for _, c := range []struct {
		name string
		p    DetailProps
		want string
	}{
		{"security", DetailProps{Name: "Blog", SourceURL: src, Evaluated: true, Security: true, SecurityRelease: sec,
			SecurityInstallable: true, UpdateAvailable: true, UpdateVersion: "2.4.0", Vulnerable: true},
			"Security update: update to 2.4.0 (high)"},
		{"security needs a newer core", DetailProps{Name: "Blog", SourceURL: src, Evaluated: true, Security: true,
			SecurityRelease: &ReleaseRow{Version: "3.0.0", Severity: "critical", RequiresCore: ">=2.0.0"}, CoreInstalled: "1.9.0",
			UpdateAvailable: true, UpdateVersion: "2.4.1"},
			"Security update: the fix in 3.0.0 (critical) needs core 2.0.0 or newer (installed 1.9.0): update the core first; 2.4.1 can be installed meanwhile"},
		{"no fix", DetailProps{Name: "Gallery", SourceURL: src, Evaluated: true, Vulnerable: true, VulnerableNoFix: true, Security: true,
			SecurityRelease: sec, SecurityInstallable: true, UpdateVersion: "2.4.0", UpdateAvailable: true},
			"Vulnerable, no fix yet: consider disabling Gallery until a fix is published"},
		{"vulnerable with an update", DetailProps{Name: "Chat", SourceURL: src, Evaluated: true, Vulnerable: true,
			UpdateAvailable: true, UpdateVersion: "1.0.1"},
			"Vulnerable: update to 1.0.1"},
		{"vulnerable, fix not released", DetailProps{Name: "Chat", SourceURL: src, Evaluated: true, Vulnerable: true,
			Advisories: []AdvisoryRow{{ID: "A", FixedIn: "1.0.0", Dismissed: true}, {ID: "B", FixedIn: "1.0.2"}}},
			"Vulnerable: the fix is announced for 1.0.2, which is not an installable release yet"},
		{"update", DetailProps{Name: "Core", SourceURL: src, Evaluated: true, UpdateAvailable: true, UpdateVersion: "1.10.0"},
			"Update available: update to 1.10.0"},
		{"update and a blocked one", DetailProps{Name: "News", SourceURL: src, Evaluated: true, UpdateAvailable: true, UpdateVersion: "5.0.1",
			NeedsNewerCore: true, BlockedRelease: blocked, CoreInstalled: "1.9.0"},
			"Update available: update to 5.0.1; update to 5.1.0 needs core 2.0.0 or newer (installed 1.9.0)"},
		{"blocked", DetailProps{Name: "News", SourceURL: src, Evaluated: true, NeedsNewerCore: true, BlockedRelease: blocked, CoreInstalled: "1.9.0"},
			"Update to 5.1.0 needs core 2.0.0 or newer (installed 1.9.0)"},
		{"up to date", DetailProps{Name: "Forms", SourceURL: src, Evaluated: true, LastSuccessAt: ago(time.Hour)}, "Up to date"},
		{"stale", DetailProps{Name: "Forms", SourceURL: src, Evaluated: true, Stale: true},
			"No update known: but the update source has not been read successfully for over 48 hours, so a newer release or advisory may be missing"},
		{"never read", DetailProps{Name: "Shop", SourceURL: src, LastError: "HTTP 503"},
			"Unknown: the update source has never been read successfully, so nothing is known about releases or advisories for this version."},
		{"offline, never imported", DetailProps{Name: "Mirrored", SourceURL: "offline:acme", Offline: true},
			"Unknown: the offline update source is waiting for its first import, so nothing is known about releases or advisories for this version. An admin imports its document from Source health."},
		{"offline, document expired", DetailProps{Name: "Mirrored", SourceURL: "offline:acme", Offline: true, Evaluated: true,
			LastSuccessAt: ago(time.Hour), Stale: true},
			"No update known: but the imported document has expired, so a newer release or advisory may be missing: import a newer one"},
		// Flags without a current evaluation are not trusted.
		{"not evaluated", DetailProps{Name: "Shop", SourceURL: src, LastSuccessAt: ago(time.Hour), UpdateAvailable: true, UpdateVersion: "2.0.0"},
			"Unknown: the installed version (or the core's) changed, or the pinned key did, since the source was last read; the next check evaluates it."},
		{"no source", DetailProps{Name: "Theme"},
			"Not tracked: nobody publishes updates for this component, so upcheck cannot tell whether it is up to date"},
	} {
		h := detailHeadline(c.p)
		if got := h.Title + h.rest(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}

	// On the page, with the exposure clock.
	p := DetailProps{Layout: layout(calm(), true), Code: "blog", Name: "Blog", SourceURL: src, Evaluated: true,
		Security: true, SecurityRelease: sec, SecurityInstallable: true, UpdateAvailable: true, UpdateVersion: "2.4.0",
		SecuritySince: ago(72 * time.Hour)}
	if got := text(one(t, doc(t, ComponentDetail(p)), "detail-headline")); got != "Security update: update to 2.4.0 (high) Security fix available for 3 days" {
		t.Errorf("headline on the page %q", got)
	}
}

// The catalog's filters say how many components each shows, and a row
// with a security problem says how long it has been known.
func TestCatalogCountsAndExposure(t *testing.T) {
	t.Parallel()
	root := doc(t, Catalog(CatalogProps{Layout: layout(attention(), true), Rows: catalogRows(), Page: 1, Total: 6,
		Counts: map[string]int{FilterAll: 6, FilterAttention: 2, FilterUpdates: 1, FilterSecurity: 2, FilterVulnerable: 2, FilterFailing: 1, FilterStale: 1, FilterDismissed: 1}}))
	var chips []string
	for _, a := range findAll(one(t, root, "catalog-filters"), func(n *html.Node) bool { return n.Data == "a" }) {
		chips = append(chips, text(a))
	}
	if got := strings.Join(chips, " | "); got != "All (6) | Needs attention (2) | Updates (1) | Security (2) | Vulnerable (2) | Failing checks (1) | Stale (1) | Dismissed advisories (1)" {
		t.Errorf("filters %q", got)
	}
	rows := byTestID(root, "catalog-row")
	if got := text(one(t, rows[0], "exposure")); got != "Security fix available for 3 days" {
		t.Errorf("blog's exposure %q", got)
	}
	if got := text(one(t, rows[1], "exposure")); got != "Vulnerable for 2 hours" {
		t.Errorf("gallery's exposure (no fix) %q", got)
	}
	if n := len(byTestID(rows[3], "exposure")); n != 0 {
		t.Errorf("core, up to date, shows %d exposure clocks", n)
	}
}
