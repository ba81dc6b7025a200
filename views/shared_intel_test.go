package views

import (
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
	"golang.org/x/net/html"
)

func intelDetail(canManage bool) DetailProps {
	src := "https://acme.example/u.json"
	return DetailProps{Layout: layout(attention(), canManage), DetailRow: readmodel.DetailRow{Code: "forms", Name: "Forms",
		Installed: "1.0.0", SourceURL: src, Evaluated: true, Vulnerable: true, VulnerableNoFix: true, Malicious: true, KnownExploited: true,
		SecuritySince: ago(50 * time.Hour), LastSuccessAt: ago(time.Hour)}, CanManage: canManage, Advisories: []AdvisoryRow{
		{ID: "MAL-2026-4242", Severity: "critical", Summary: "Malicious <script>alert(1)</script>", NoFix: true,
			AdvisoryIntel: AdvisoryIntel{Origins: []string{"osv"}, Malicious: true}},
		{ID: "ACME-2026-011", Severity: "medium", Summary: "Metadata shown", NoFix: true,
			AdvisoryIntel: AdvisoryIntel{Origins: []string{"publisher", "osv"}, KnownExploited: true,
				KEV:  &AdvisoryKEV{CVE: "CVE-2026-99011", DateAdded: "2026-11-03", DueDate: "2026-11-24", RequiredAction: "Apply <b>mitigations</b>.", Ransomware: "Known"},
				EPSS: &AdvisoryEPSS{Score: 0.943, Percentile: 0.991}}},
	}}
}

// A malicious advisory's page says so first, with the state above every
// other; an exploited one shows KEV's dates, action and ransomware use with
// the note that the dates are a US federal reference, the EPSS score beside
// the severity, and where each advisory comes from; the headline shows
// KEV's due date; feed text stays text.
func TestDetailShowsTheFeedsFacts(t *testing.T) {
	t.Parallel()
	root := doc(t, ComponentDetail(intelDetail(true)))
	if got := text(one(t, root, "detail-headline")); !strings.HasPrefix(got, "Known malicious package: remove it: ") ||
		!strings.Contains(got, "KEV due date 2026-11-24 ("+KEVNote+")") {
		t.Errorf("headline %q", got)
	}
	rows := byTestID(root, "advisory-row")
	if len(rows) != 2 {
		t.Fatalf("%d advisory rows", len(rows))
	}
	if got := text(one(t, rows[0], "advisory-malicious")); got != "Known malicious package: remove it" {
		t.Errorf("malicious badge %q", got)
	}
	if got := text(one(t, rows[0], "dismiss-malicious")); !strings.Contains(got, "needs an admin and a reason") {
		t.Errorf("the malicious advisory's dismiss form: %q", got)
	}
	reason := one(t, rows[0], "dismiss-reason")
	if _, ok := attr(reason, "required"); !ok {
		t.Error("the malicious advisory's reason is not required")
	}
	if got := text(one(t, rows[0], "advisory-origins")); got != "From OSV" {
		t.Errorf("origins %q", got)
	}
	if len(byTestID(rows[0], "advisory-kev")) != 0 || len(byTestID(rows[0], "advisory-epss")) != 0 {
		t.Error("a malicious record without KEV or EPSS shows them")
	}
	for id, want := range map[string]string{
		"advisory-exploited": "Exploited in the wild", "advisory-origins": "From the publisher and OSV",
		"advisory-epss": "EPSS 94.3 % · 99th percentile", "kev-date-added": "2026-11-03", "kev-due-date": "2026-11-24",
		"kev-action": "Apply <b>mitigations</b>.", "kev-ransomware": "Known to be used in ransomware campaigns", "kev-note": KEVNote,
	} {
		if got := text(one(t, rows[1], id)); got != want {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	out := render(t, ComponentDetail(intelDetail(true)))
	if strings.Contains(out, "<script>alert") || strings.Contains(out, "<b>mitigations") {
		t.Error("feed text reached the page as markup")
	}
	p := intelDetail(false)
	p.Malicious = false
	p.Advisories = p.Advisories[1:]
	if got := text(one(t, doc(t, ComponentDetail(p)), "detail-headline")); !strings.HasPrefix(got, "Exploited in the wild: attackers are using it") {
		t.Errorf("exploited headline %q", got)
	}
}

// The banner names a malicious package first, then an exploited advisory,
// before the other problems; the catalog marks the rows and offers the
// two filters only while a component is so.
func TestBannerAndCatalogPutMalwareFirst(t *testing.T) {
	t.Parallel()
	s := attention()
	malicious, exploited := 1, 2
	s.Malicious, s.KnownExploited = &malicious, &exploited
	due := "2026-11-24"
	s.Attention = append([]readmodel.AttentionItem{
		{Code: "forms", Name: "Forms", Installed: "1.0.0", Kind: readmodel.KindMalicious, Advisory: &readmodel.AdvisoryRef{ID: "MAL-2026-4242", Malicious: true}},
		{Code: "gallery", Name: "Gallery", Installed: "3.0.0", Kind: readmodel.KindKnownExploited, Advisory: &readmodel.AdvisoryRef{ID: "ACME-2026-011", KnownExploited: true, KEVDue: &due}},
	}, s.Attention...)
	s.AttentionTotal = len(s.Attention)
	root := doc(t, Catalog(CatalogProps{Layout: layout(s, true)}))
	if got := text(one(t, root, "security-alert-text")); !strings.HasPrefix(got,
		"1 known malicious package: remove it. 2 components have an advisory exploited in the wild. 2 security updates") {
		t.Errorf("banner %q", got)
	}
	items := byTestID(one(t, root, "attention-banner-items"), "attention-item")
	if len(items) < 2 || text(items[0]) != "Forms 1.0.0: known malicious package: remove it (MAL-2026-4242)" ||
		!strings.HasPrefix(text(items[1]), "Gallery 3.0.0: ACME-2026-011 is exploited in the wild (KEV due date 2026-11-24, a US federal reference)") {
		t.Errorf("banner items %q, %q", text(items[0]), text(items[1]))
	}
	// A malicious version with a clean successor names the way out, not
	// "remove it".
	clean := "4.4.3"
	s.Attention[0] = readmodel.AttentionItem{Code: "dbg", Name: "Debug", Installed: "4.4.2", Kind: readmodel.KindMalicious,
		Advisory: &readmodel.AdvisoryRef{ID: "MAL-2025-46974", Malicious: true, ClearedBy: &clean}}
	items = byTestID(one(t, doc(t, Catalog(CatalogProps{Layout: layout(s, true)})), "attention-banner-items"), "attention-item")
	if got := text(items[0]); got != "Debug 4.4.2: known malicious package (MAL-2025-46974): 4.4.3 is not affected: update to it" {
		t.Errorf("banner item of a malicious version with a clean successor %q", got)
	}
	rows := catalogRows()
	rows[0].Malicious, rows[0].KnownExploited = true, true
	props := CatalogProps{Layout: layout(s, true), Rows: rows, Page: 1, Total: len(rows),
		Counts: map[readmodel.Filter]int{readmodel.FilterAll: len(rows), readmodel.FilterMalicious: 1, readmodel.FilterKnownExploited: 0}}
	cat := doc(t, Catalog(props))
	var chips []string
	for _, a := range findAll(one(t, cat, "catalog-filters"), func(n *html.Node) bool { return n.Data == "a" }) {
		chips = append(chips, text(a))
	}
	if got := strings.Join(chips, " | "); !strings.HasPrefix(got, "All (6) | Needs attention | Malicious (1) | Updates") {
		t.Errorf("filters %q: want Malicious offered, Exploited not (none is)", got)
	}
	if got := text(byTestID(cat, "catalog-row")[0]); !strings.Contains(got, "Known malicious package: remove it") ||
		!strings.Contains(got, "Exploited in the wild") {
		t.Errorf("first row %q lacks the badges", got)
	}
}
