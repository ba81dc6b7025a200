package updatecheck

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/publisher"
)

const (
	// pkgBlogOSV has an advisory with OSV's members, affecting blog 2.3.0.
	pkgBlogOSV = `{"releases": [{"version": "2.3.0"}], "advisories": [{"id": "ACME-9", "affected": "<2.4.0",
	  "aliases": ["CVE-2021-44228", "GHSA-jfh8-c2jp-5v3q"],
	  "cvss": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H"%s}]}`
	withdrawn = `, "withdrawn": "2026-11-30T00:00:00Z"`
)

func blogOSV(extra string) string {
	return fmt.Sprintf(pkgBlogOSV, extra)
}

// catalogCodes is what the catalog finds for search q (and how many
// components it counts).
func (b *bundle) catalogCodes(q string) ([]string, int) {
	b.t.Helper()
	entries, counts, err := catalog.ReadPage(context.Background(), b.store, store.CatalogFilter{Search: q, Limit: 50})
	if err != nil {
		b.t.Fatal(err)
	}
	var codes []string
	for _, e := range entries {
		codes = append(codes, e.Code)
	}
	return codes, counts.All
}

// A withdrawn advisory no longer counts: the component is not vulnerable,
// the advisory is not open, queues no notification, cannot be dismissed
// and is not found by its aliases, but the detail page lists it as
// withdrawn. A standing dismissal is kept and holds again when the
// withdrawal is taken back.
func TestWithdrawnAdvisoryDoesNotCount(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	b.db.MustExec(t, `INSERT INTO notification_channels (name, kind, target, events) VALUES ('ops', 'slack', 'https://hooks.example/x', 'security')`)
	p.Set("/core.json", doc(1, map[string]string{"core": pkgCore}))
	p.Set("/acme.json", doc(1, map[string]string{"blog": blogOSV("")}))
	b.sync(
		manifest.Component{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/core.json"},
		manifest.Component{Code: "blog", Name: "Blog", Version: "2.3.0", Source: p.URL + "/acme.json"},
	)
	b.run(lease.Operator)
	if !b.results()["blog"].Vulnerable {
		t.Fatal("blog is not vulnerable before the withdrawal")
	}
	for _, q := range []string{"CVE-2021-44228", "cve-2021-44228 ", "GHSA-JFH8-C2JP-5V3Q", "acme-9"} {
		if codes, n := b.catalogCodes(q); !slices.Equal(codes, []string{"blog"}) || n != 1 {
			t.Errorf("catalog search %q = %v (%d), want blog", q, codes, n)
		}
	}
	if codes, _ := b.catalogCodes("CVE-2021-4422"); codes != nil {
		t.Errorf("a part of a CVE id finds %v, want nothing", codes)
	}
	b.dismissBlog()

	p.Set("/acme.json", doc(2, map[string]string{"blog": blogOSV(withdrawn)}))
	b.run(lease.Operator)
	if r := b.results()["blog"]; r.Vulnerable || !r.Evaluated {
		t.Errorf("blog = %+v, want evaluated and not vulnerable", r)
	}
	var open string
	b.db.QueryRow(t, `SELECT open_advisories::text FROM component_state WHERE code = 'blog'`).Scan(&open)
	if open != "[]" {
		t.Errorf("open advisories = %s, want []", open)
	}
	var events int
	b.db.QueryRow(t, `SELECT count(*) FROM notification_events WHERE type = 'advisory.unfixed'`).Scan(&events)
	if events != 0 {
		t.Errorf("%d advisory.unfixed events, want none", events)
	}
	if codes, _ := b.catalogCodes("CVE-2021-44228"); codes != nil {
		t.Errorf("a withdrawn advisory's alias finds %v, want nothing", codes)
	}
	d, err := b.reads.Detail(context.Background(), "blog")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Advisories) != 0 || len(d.Withdrawn) != 1 || d.Withdrawn[0].ID != "ACME-9" || d.Withdrawn[0].Withdrawn.IsZero() {
		t.Errorf("detail advisories %+v, withdrawn %+v; want ACME-9 withdrawn only", d.Advisories, d.Withdrawn)
	}
	if _, err := b.dismissals.Dismiss(context.Background(), store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-9", Reason: "r"}); !errors.Is(err, catalog.ErrNoSuchAdvisory) {
		t.Errorf("dismissing a withdrawn advisory: %v, want catalog.ErrNoSuchAdvisory", err)
	}

	// Taken back: it counts again, and the standing dismissal holds again.
	p.Set("/acme.json", doc(3, map[string]string{"blog": blogOSV("")}))
	b.run(lease.Operator)
	if b.results()["blog"].Vulnerable {
		t.Error("blog is vulnerable although its dismissal stands")
	}
	b.db.QueryRow(t, `SELECT count(*) FROM advisory_dismissals_in_force WHERE component_code = 'blog'`).Scan(&events)
	if events != 1 {
		t.Errorf("%d dismissals in force, want the standing one", events)
	}
}

func (b *bundle) dismissBlog() {
	b.t.Helper()
	if _, err := b.dismissals.Dismiss(context.Background(), store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-9",
		Reason: "the logger is not reachable"}); err != nil {
		b.t.Fatal(err)
	}
}

// The catalog search by alias reads the current result only: once the
// installed version leaves the range, the CVE no longer finds it.
func TestCatalogSearchByAliasFollowsTheInstalledVersion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	p.Set("/core.json", doc(1, map[string]string{"core": pkgCore}))
	p.Set("/acme.json", doc(1, map[string]string{"blog": blogOSV(""), "shop": blogOSV("")}))
	comps := []manifest.Component{
		{Code: "core", Name: "Core", Version: "1.9.0", Source: p.URL + "/core.json"},
		{Code: "blog", Name: "Blog", Version: "2.3.0", Source: p.URL + "/acme.json"},
		{Code: "shop", Name: "Shop", Version: "2.3.0", Source: p.URL + "/acme.json"},
	}
	b.sync(comps...)
	b.run(lease.Operator)
	if codes, _ := b.catalogCodes("CVE-2021-44228"); !slices.Equal(codes, []string{"blog", "shop"}) {
		t.Fatalf("search = %v, want blog and shop", codes)
	}
	comps[2].Version = "2.4.0"
	b.sync(comps...)
	if codes, n := b.catalogCodes("CVE-2021-44228"); !slices.Equal(codes, []string{"blog"}) || n != 1 {
		t.Errorf("search after shop's update = %v (%d), want blog", codes, n)
	}
}
