package web_test

import (
	"context"
	"fmt"
	"html"
	"regexp"
	"slices"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// setComponentCounts stores a site's counts of its components as a
// refresh would (fleet_site_components): what the Fleet page reads.
func (b *fleetBundle) setComponentCounts(t *testing.T, site int64, c readmodel.FleetComponentCounts, malicious int) {
	t.Helper()
	if _, err := b.db.Pool.Exec(context.Background(), `UPDATE fleet_site_components
	    SET checked = $2, components = $3, updates = $4, security = $5, vulnerable = $6, trust = $7, malicious = $8
	    WHERE site_id = $1`, site, c.Checked, c.Components, c.UpdatesAvailable, c.SecurityUpdates, c.Vulnerable, c.TrustSignals,
		malicious); err != nil {
		t.Fatal(err)
	}
}

// fleetPageSites are the sites of a Fleet page, in its order.
func fleetPageSites(body string) []string {
	out := []string{}
	for _, m := range regexp.MustCompile(`data-testid="fleet-row" data-site="([^"]+)"`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// The Fleet page and GET /api/admin/fleet sort and filter the sites by
// their components' counts (security updates, updates, vulnerable
// components, trust signals, components); a site with a malicious
// component is a malicious site; a site whose components were never all
// read says "not checked", not 0; the totals add the components'.
func TestFleetSortsAndFiltersByComponents(t *testing.T) {
	t.Parallel()
	b := setupFleet(t)
	viewer := b.login("viewer@example.test")
	// acme: 5 components, 3 updates, none a security one. globex: 2
	// components, 1 update, a security one, vulnerable, a trust signal,
	// one malicious. local: its components never read.
	b.setComponentCounts(t, b.acme.ID, readmodel.FleetComponentCounts{Checked: true, Components: 5, UpdatesAvailable: 3}, 0)
	b.setComponentCounts(t, b.globex.ID, readmodel.FleetComponentCounts{Checked: true, Components: 2, UpdatesAvailable: 1,
		SecurityUpdates: 1, Vulnerable: 1, TrustSignals: 1}, 1)

	for _, c := range []struct {
		query string
		want  []string
	}{
		{"sort=security", []string{"globex-blog", "acme-shop", "local"}},
		{"sort=updates", []string{"acme-shop", "globex-blog", "local"}},
		{"sort=components_vulnerable", []string{"globex-blog", "acme-shop", "local"}},
		{"sort=trust", []string{"globex-blog", "acme-shop", "local"}},
		{"sort=components", []string{"local", "acme-shop", "globex-blog"}}, // local: its manifest's 7
		// The tree's malicious first (acme), then the components' (globex).
		{"sort=malicious", []string{"acme-shop", "globex-blog", "local"}},
		{"filter=security", []string{"globex-blog"}},
		{"filter=updates&sort=name", []string{"acme-shop", "globex-blog"}},
		{"filter=trust", []string{"globex-blog"}},
		{"filter=malicious&sort=name", []string{"acme-shop", "globex-blog"}},
	} {
		if got := fleetSites(viewer.fleet(t, c.query)); !slices.Equal(got, c.want) {
			t.Errorf("api %s: %v, want %v", c.query, got, c.want)
		}
		page := viewer.do("GET", "/admin/fleet?"+c.query, "", "", nil)
		wantStatus(t, "fleet page "+c.query, page, 200)
		if got := fleetPageSites(page.body); !slices.Equal(got, c.want) {
			t.Errorf("page %s: %v, want %v", c.query, got, c.want)
		}
	}

	all := viewer.fleet(t, "sort=name")
	if g := all.Sites[1].Components; !g.Checked || g.SecurityUpdates != 1 || g.UpdatesAvailable != 1 || *g.Malicious != 1 {
		t.Errorf("globex's components: %+v", g)
	}
	if l := all.Sites[2].Components; l.Checked || l.UpdatesAvailable != 0 {
		t.Errorf("local's components, never read: %+v", l)
	}
	page := viewer.do("GET", "/admin/fleet?sort=name", "", "", nil)
	for site, want := range map[string]string{
		"local":       fmt.Sprintf("%d components (not all checked)", all.Sites[2].Components.Components),
		"globex-blog": "2 components · 1 update · 1 security update · 1 vulnerable · 1 malicious · 1 trust signal",
	} {
		cell := regexp.MustCompile(`data-site="` + site + `"[\s\S]*?data-testid="fleet-components">([^<]*)<`).FindStringSubmatch(page.body)
		if cell == nil || html.UnescapeString(cell[1]) != want {
			t.Errorf("%s's components on the page: %q, want %q", site, cell, want)
		}
	}
	// The local site's components (the bundle's manifest), synced and
	// counted, never read.
	local := all.Sites[2].Components.Components
	if local == 0 {
		t.Errorf("the local site's components were not counted at its sync")
	}
	var sum readmodel.FleetSummary
	viewer.fleetJSON(t, "/api/admin/fleet/summary", &sum)
	if sum.Components.Components != 7+local || sum.Components.UpdatesAvailable != 4 || sum.Components.SecurityUpdates != 1 ||
		sum.SitesUpdates != 2 || sum.SitesSecurity != 1 || sum.ComponentsChecked != 2 || sum.Components.Checked ||
		sum.SitesMalicious != 2 {
		t.Errorf("summary: %+v (components %+v)", sum, sum.Components)
	}
	// A registered site that never pushed: not checked, never 0.
	b.setComponentCounts(t, b.acme.ID, readmodel.FleetComponentCounts{}, 0)
	b.reads.Changed()
	page = viewer.do("GET", "/admin/fleet?sort=name", "", "", nil)
	cell := regexp.MustCompile(`data-site="acme-shop"[\s\S]*?data-testid="fleet-components">([^<]*)<`).FindStringSubmatch(page.body)
	if cell == nil || cell[1] != readmodel.FleetNotCheckedText {
		t.Errorf("acme's components, never pushed: %q, want %q", cell, readmodel.FleetNotCheckedText)
	}
}
