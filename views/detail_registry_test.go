package views

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
	"golang.org/x/net/html"
)

// npmDetail is an npm component's page: installed 2.3.0 deprecated, with
// provenance; 2.5.0 offered without it and needing a newer core; 2.4.0
// refused.
func npmDetail() DetailProps {
	pub := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	return DetailProps{Layout: layout(calm(), true), DetailRow: readmodel.DetailRow{Code: "acme-blog", Name: "Blog", Installed: "2.3.0",
		Latest: "2.5.0", SourceURL: "npm:@acme/blog", Dependencies: ptr(184), Evaluated: true, LastSuccessAt: ago(time.Hour), UpdateAvailable: true,
		UpdateVersion: "2.5.0", UpdateCommand: "npm install @acme/blog@2.5.0", Deprecated: "use <script>alert(1)</script> @acme/journal",
		ProvenanceLost: "2.5.0", Registry: &readmodel.RegistryFacts{Package: "@acme/blog", Registry: "http://127.0.0.1:4873/",
			Deprecated: "use <script>alert(1)</script> @acme/journal", KeysPublished: true, ProvenanceLost: "2.5.0",
			Versions: []readmodel.RegistryVersion{
				{Version: "2.5.0", Published: pub.Add(48 * time.Hour), SignedBy: "SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA", RequiresCore: "^2.0.0"},
				{Version: "2.3.0", Published: pub, Installed: true, Provenance: true, SignedBy: "SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA"}},
			Refused: []readmodel.RefusedVersion{{Version: "2.4.0", Reason: "its signature does not verify"}}}}, Releases: []ReleaseRow{{Version: "2.5.0", Released: "2026-11-03", RequiresCore: "^2.0.0", Installable: true},
		{Version: "2.3.0", Released: "2026-11-01", Installable: true}}}
}

// The detail page words the registry's facts as documents are worded:
// each version's publish date, provenance, the key that verified it and
// the core it needs; the deprecation (escaped), the trust downgrade, the
// refused version and why, and the update command in a field that can be
// selected without JavaScript.
func TestDetailWordsRegistryFacts(t *testing.T) {
	t.Parallel()
	p := npmDetail()
	page := render(t, ComponentDetail(p))
	root := doc(t, ComponentDetail(p))
	rows := byTestID(root, "release-row")
	if len(rows) != 2 {
		t.Fatalf("%d releases, want 2", len(rows))
	}
	for i, want := range []string{
		"2.5.0 | 2026-11-03 | Regular | 2.0.0 or a later 2.x release | no provenance | signature verified by key SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA | —none",
		"2.3.0 Installed | 2026-11-01 | Regular | any | published with provenance | signature verified by key SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA | —none",
	} {
		if got := cells(rows[i]); got != want {
			t.Errorf("version row %d: %q, want %q", i, got, want)
		}
	}
	if got := text(one(t, root, "detail-deprecated")); got != "!The installed version 2.3.0 is deprecated by its publisher: use <script>alert(1)</script> @acme/journal" {
		t.Errorf("deprecation: %q", got)
	}
	if strings.Contains(page, "<script>alert") {
		t.Error("the publisher's message reaches the page unescaped")
	}
	if got := text(one(t, root, "detail-provenance-lost")); !strings.Contains(got, "2.5.0 was published without the provenance that 2.3.0 had") {
		t.Errorf("trust downgrade: %q", got)
	}
	if got := text(one(t, root, "registry-refused")); got != "2.4.0: its signature does not verify" {
		t.Errorf("refused: %q", got)
	}
	in := one(t, root, "update-command-text")
	if v, _ := attr(in, "value"); v != "npm install @acme/blog@2.5.0" {
		t.Errorf("update command = %q", v)
	}
	if _, ro := attr(in, "readonly"); !ro {
		t.Error("the update command's field is not read-only")
	}
	if got := text(one(t, root, "detail-source")); got != "@acme/blog (npm package)" {
		t.Errorf("source: %q", got)
	}
	if h := detailHeadline(p); h.Title+h.rest() != "Trust downgrade: 2.5.0 was published without the provenance that 2.3.0 had; check who published it before you install it" {
		t.Errorf("headline: %q", h.Title+h.rest())
	}
	p.ProvenanceLost = ""
	if h := detailHeadline(p); h.Title+h.rest() != "Deprecated by its publisher: update to 2.5.0" {
		t.Errorf("headline when deprecated: %q", h.Title+h.rest())
	}
}

// Without the registry's keys, nothing claims a verification; the
// registry's no longer listing the installed version is said; and an npm
// component never reads as free of advisories, which are not read for it.
func TestDetailClaimsNothingUnverified(t *testing.T) {
	t.Parallel()
	p := npmDetail()
	p.Registry.KeysPublished = false
	p.Registry.Unlisted, p.Registry.Refused = true, nil
	p.Deprecated, p.ProvenanceLost = "", ""
	for i := range p.Registry.Versions {
		p.Registry.Versions[i].SignedBy = ""
	}
	p.Registry.Versions = p.Registry.Versions[:1]
	root := doc(t, ComponentDetail(p))
	reg, releases := text(one(t, root, "detail-registry")), text(one(t, root, "releases-table"))
	if strings.Contains(strings.ToLower(strings.ReplaceAll(reg+releases, "not verified", "")), "verified by") {
		t.Errorf("the registry section or the releases claim a verification without keys: %q %q", reg, releases)
	}
	if !strings.Contains(reg, "Package @acme/blog, registry http://127.0.0.1:4873/") {
		t.Errorf("the registry section: %q", reg)
	}
	if !strings.Contains(releases, "signature not verified: the registry publishes no signing keys") ||
		text(one(t, root, "registry-no-keys")) != noKeysText {
		t.Errorf("the registry section does not say plainly that nothing was verified: %q", reg)
	}
	if got := text(one(t, root, "detail-unlisted")); !strings.Contains(got, "The registry no longer lists the installed version 2.3.0") {
		t.Errorf("unlisted: %q", got)
	}
	if got := text(one(t, root, "advisories-npm")); got != npmAdvisoriesText {
		t.Errorf("advisories: %q", got)
	}
	page := strings.ToLower(render(t, ComponentDetail(p)))
	if strings.Contains(page, "no known advisory") {
		t.Error("an npm component's page says no known advisory affects it")
	}
	if len(byTestID(root, "advisories-empty")) != 0 || len(byTestID(root, "detail-deprecated")) != 0 {
		t.Error("the page says what its facts do not")
	}
}

// cells is a table row's cells' text, " | " between them.
func cells(tr *html.Node) string {
	var out []string
	for c := tr.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && (c.Data == "td" || c.Data == "th") {
			out = append(out, text(c))
		}
	}
	return strings.Join(out, " | ")
}

// Once an OSV feed was read, an npm package's page may say that no known
// advisory affects it, and says when the advisories were read; before,
// it says they were not (TestDetailClaimsNothingUnverified).
func TestDetailSaysWhenNpmAdvisoriesWereRead(t *testing.T) {
	t.Parallel()
	p := npmDetail()
	p.Advisories = nil
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	p.OSVReadAt = &at
	root := doc(t, ComponentDetail(p))
	if len(byTestID(root, "advisories-npm")) != 0 {
		t.Error("the page says the advisories were not read although the OSV feed was")
	}
	if got, want := text(one(t, root, "advisories-empty")), "No known advisory affects the installed version "+p.Installed+
		" (OSV advisories last read 2026-12-01 09:30 UTC)."; got != want {
		t.Errorf("advisories: %q, want %q", got, want)
	}
}

// An npm package's page lists the withdrawn advisories whose range holds
// the installed version once an OSV feed was read (docs/feeds.md), as any
// other component's page does; before, it lists none (nothing was read).
func TestDetailListsWithdrawnAdvisoriesOfNpmPackages(t *testing.T) {
	t.Parallel()
	p := npmDetail()
	p.Withdrawn = []AdvisoryRow{{ID: "GHSA-wd00-xxxx-yyyy", Summary: "Duplicate of GHSA-real", OSV: AdvisoryOSV{Withdrawn: "2026-11-02"}}}
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	p.OSVReadAt = &at
	root := doc(t, ComponentDetail(p))
	if got := text(one(t, root, "withdrawn-advisory")); !strings.Contains(got, "GHSA-wd00-xxxx-yyyy") || !strings.Contains(got, "withdrawn on 2026-11-02") {
		t.Errorf("the npm page's withdrawn advisory reads %q", got)
	}
	p.OSVReadAt = nil
	if n := len(byTestID(doc(t, ComponentDetail(p)), "withdrawn-advisories")); n != 0 {
		t.Errorf("%d withdrawn lists before any OSV feed was read", n)
	}
}

// A package of 100,000 signed versions, 99,000 of them refused, makes a
// page of bounded size: each list shows its newest maxListed versions and
// says how many it leaves out.
func TestDetailBoundsTheVersionsListed(t *testing.T) {
	t.Parallel()
	p := npmDetail()
	for i := range 100_000 {
		v := fmt.Sprintf("3.%d.%d", 99_999-i, 0)
		p.Releases = append(p.Releases, ReleaseRow{Version: v, Released: "2026-11-03", Installable: true})
		p.Registry.Versions = append(p.Registry.Versions, readmodel.RegistryVersion{Version: v, SignedBy: "SHA256:k"})
		if i < 99_000 {
			p.Registry.Refused = append(p.Registry.Refused, readmodel.RefusedVersion{Version: v, Reason: "its signature does not verify"})
		}
	}
	p.Between = p.Releases
	page := render(t, ComponentDetail(p))
	if len(page) > 1<<20 {
		t.Errorf("the page is %d bytes, want at most 1 MiB", len(page))
	}
	root := doc(t, ComponentDetail(p))
	if n := len(byTestID(root, "release-row")); n != maxListed {
		t.Errorf("%d release rows, want %d", n, maxListed)
	}
	if n := len(byTestID(root, "between-row")); n != maxListed {
		t.Errorf("%d rows in between, want %d", n, maxListed)
	}
	for id, want := range map[string]string{
		"releases-not-listed": "Only the newest 200 are listed here; the 99,802 older ones are not.",
		"between-not-listed":  "Only the newest 200 are listed here; the 99,802 older ones are not.",
		"refused-not-listed":  "Only the newest 200 are listed here; the 98,801 older ones are not.",
	} {
		if got := text(one(t, root, id)); got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
}
