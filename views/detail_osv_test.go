package views

import (
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// osvFixture is an advisory's OSV members as the golden detail page shows
// them.
func osvFixture() AdvisoryOSV {
	return AdvisoryOSV{
		Aliases: []string{"CVE-2026-12345", "GHSA-jfh8-c2jp-5v3q", "PYSEC-2026-7"},
		CVSS:    "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", CVSSScore: "9.8", CVSSRating: "critical",
		Modified: "2026-11-21",
		References: []AdvisoryReference{{Type: "ADVISORY", URL: "https://acme.example/adv/7"},
			{Type: "FIX", URL: "https://git.acme.example/blog/commit/1a2b3c"}},
		Links: readmodel.AdvisoryLinks{{Prefix: "CVE-", Template: "https://cve.example/record?id={id}"},
			{Prefix: "GHSA-", Template: "https://ghsa.example/advisories/{id}"}},
	}
}

// The detail page shows an advisory's aliases (those the operator's links
// match link to their public record, without a referrer; others are text), the base score next to the
// vector, the modified date and the references; withdrawn advisories are
// listed apart, saying so.
func TestDetailShowsOSVMembers(t *testing.T) {
	t.Parallel()
	p := DetailProps{Layout: layout(calm(), true), DetailRow: readmodel.DetailRow{Code: "blog", Installed: "2.3.0", Evaluated: true},
		Advisories: []AdvisoryRow{{ID: "ACME-7", Severity: "low", OSV: osvFixture()}}, Withdrawn: []AdvisoryRow{{ID: "ACME-4",
			Summary: "Duplicate", OSV: AdvisoryOSV{Withdrawn: "2026-11-02"}}}}
	root := doc(t, ComponentDetail(p))
	row := one(t, root, "advisory-row")
	aliases := one(t, row, "advisory-aliases")
	if got := text(aliases); !strings.Contains(got, "CVE-2026-12345, GHSA-jfh8-c2jp-5v3q, PYSEC-2026-7") {
		t.Errorf("aliases = %q", got)
	}
	links := findAll(aliases, func(n *html.Node) bool { return n.Data == "a" })
	want := []string{"https://cve.example/record?id=CVE-2026-12345", "https://ghsa.example/advisories/GHSA-jfh8-c2jp-5v3q"}
	if len(links) != len(want) {
		t.Fatalf("%d alias links, want %d (PYSEC is text)", len(links), len(want))
	}
	for i, a := range links {
		href, _ := attr(a, "href")
		rel, _ := attr(a, "rel")
		if href != want[i] || !strings.Contains(rel, "noreferrer") {
			t.Errorf("alias link %d: href %q rel %q; want %q, noreferrer", i, href, rel, want[i])
		}
	}
	// Without links, every alias is text.
	p.Advisories[0].OSV.Links = nil
	if a := findAll(one(t, doc(t, ComponentDetail(p)), "advisory-aliases"), func(n *html.Node) bool { return n.Data == "a" }); len(a) != 0 {
		t.Errorf("%d alias links without UPCHECK_ADVISORY_LINKS, want none", len(a))
	}
	// The publisher's word stays in the badge; the score has its own rating.
	if got := text(one(t, row, "advisory-cvss")); got != "9.8 critical · CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H" {
		t.Errorf("cvss = %q", got)
	}
	if got := text(one(t, row, "advisory-modified")); got != "Modified on 2026-11-21" {
		t.Errorf("modified = %q", got)
	}
	refs := one(t, row, "advisory-references")
	if got := text(refs); !strings.Contains(got, "2 references") || !strings.Contains(got, "Fix: git.acme.example/blog/commit/1a2b3c") {
		t.Errorf("references = %q", got)
	}
	w := one(t, root, "withdrawn-advisory")
	if got := text(w); !strings.Contains(got, "ACME-4") || !strings.Contains(got, "withdrawn on 2026-11-02") {
		t.Errorf("withdrawn = %q", got)
	}
	if got := text(one(t, root, "withdrawn-advisories")); !strings.Contains(got, "no longer count") {
		t.Errorf("withdrawn section = %q", got)
	}

	// Without a vector, no score; without a current evaluation, no list.
	p.Advisories[0].OSV = AdvisoryOSV{}
	p.Evaluated = false
	root = doc(t, ComponentDetail(p))
	if n := len(byTestID(root, "advisory-cvss")) + len(byTestID(root, "advisory-aliases")) + len(byTestID(root, "withdrawn-advisories")); n != 0 {
		t.Errorf("%d OSV parts shown without an evaluation or a vector", n)
	}
}

func TestReferenceText(t *testing.T) {
	t.Parallel()
	for r, want := range map[AdvisoryReference]string{
		{Type: "WEB", URL: "https://example.org/"}:                         "Web page: example.org",
		{Type: "PACKAGE", URL: "https://pkg.example/p?x=1"}:                "Package: pkg.example/p",
		{Type: "ODD", URL: "https://a.example/" + strings.Repeat("x", 80)}: "Link: a.example/" + strings.Repeat("x", 49) + "…",
	} {
		if got := referenceText(r); got != want {
			t.Errorf("referenceText(%v) = %q, want %q", r, got, want)
		}
	}
}
