package updatecheck

import (
	"context"
	"testing"

	"github.com/upcheck/upcheck/internal/dev/osvgen"
	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/feedserver"
	"github.com/upcheck/upcheck/internal/testing/npmreg"
)

// fleetComponents is site's components as the Fleet page counts them
// (fleet_site_components), after checking that they are its summary's.
func (b *bundle) fleetComponents(site store.Site) readmodel.FleetComponentCounts {
	b.t.Helper()
	ctx := context.Background()
	rows, err := b.store.FleetPage(ctx, store.FleetFilter{Scope: store.FleetScope{Limited: true, IDs: []int64{site.ID}},
		Sort: readmodel.FleetByName, DevMode: readmodel.DevSeparate, StaleAfter: readmodel.DefaultSiteStaleAfter, Limit: 1})
	if err != nil || len(rows) != 1 {
		b.t.Fatalf("%s's row of the fleet: %v, %v", site.Name, rows, err)
	}
	c := rows[0].Components
	sum, err := b.store.Summary(ctx, site.ID, readmodel.DevSeparate)
	if err != nil {
		b.t.Fatal(err)
	}
	if c.Checked && (c.Components != sum.Components || c.UpdatesAvailable != sum.UpdatesAvailable ||
		c.SecurityUpdates != sum.SecurityUpdates || c.Vulnerable != sum.Vulnerable || (sum.Malicious != nil && *c.Malicious != *sum.Malicious) ||
		(sum.KnownExploited != nil && *c.KnownExploited != *sum.KnownExploited) || c.TrustSignals > sum.TrustDowngrades+sum.Brings ||
		c.TrustSignals < max(sum.TrustDowngrades, sum.Brings)) {
		b.t.Errorf("%s: the fleet counts %+v, its summary %d components, %d updates, %d security, %d vulnerable, %v malicious, "+
			"%v exploited, %d trust downgrades, %d brings", site.Name, c, sum.Components, sum.UpdatesAvailable, sum.SecurityUpdates,
			sum.Vulnerable, sum.Malicious, sum.KnownExploited, sum.TrustDowngrades, sum.Brings)
	}
	return c
}

// The fleet's counts of a site's components follow what changes them,
// once each is done: a site never pushed, and a site whose components
// were pushed but never read, is not checked (never "0 updates"); a check
// counts every site's; a push evaluated from the documents stored counts
// the pushing site's; a skip and a site's policy count their site's.
func TestFleetComponentCountsFollowChecksPushesSkipsAndPolicies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	r := npmreg.New(t)
	r.Publish("left-pad", "1.3.1", map[string]npmreg.Version{"1.3.0": {Published: day(1)}, "1.3.1": {Published: day(2)}})
	r.Publish("is-odd", "3.0.1", map[string]npmreg.Version{"3.0.0": {Published: day(1)}, "3.0.1": {Published: day(3)}})
	b.useRegistry(r)
	fs := feedserver.New(t)
	fs.SetRecords(records(osvgen.Record("GHSA-isod-d000-0001", "is-odd", osvgen.KindVuln, "", "3.0.1")))
	b.checker.UseFeeds(NewFeeds(b.checker, []feed.Feed{{Kind: readmodel.FeedOSV, URL: fs.ArchiveURL()}}, t.TempDir()))

	shop, blog := b.addSite("shop"), b.addSite("blog")
	if c := b.fleetComponents(shop); c.Checked || c.Components != 0 {
		t.Errorf("shop before its push: %+v, want not checked", c)
	}
	if _, err := b.checker.Push(ctx, shop, "package-lock.json", pushLock("left-pad@1.3.0", "is-odd@3.0.0")); err != nil {
		t.Fatal(err)
	}
	if c := b.fleetComponents(shop); c.Checked || c.Components != 2 {
		t.Errorf("shop pushed, its packages never read: %+v, want 2 components, not checked", c)
	}
	if got, want := readmodel.FleetComponentsText(b.fleetComponents(shop)), "2 components (not all checked)"; got != want {
		t.Errorf("shop's components before a check: %q, want %q", got, want)
	}

	if res := b.run(lease.Operator); res.Status != Completed {
		t.Fatalf("check: %+v", res)
	}
	c := b.fleetComponents(shop)
	if !c.Checked || c.Components != 2 || c.UpdatesAvailable != 2 || c.SecurityUpdates != 1 || c.Vulnerable != 1 {
		t.Errorf("shop after the check: %+v, want 2 components, 2 updates, 1 security update, 1 vulnerable", c)
	}

	// blog installs what the check read: evaluated at its push, counted.
	if _, err := b.checker.Push(ctx, blog, "package-lock.json", pushLock("left-pad@1.3.0")); err != nil {
		t.Fatal(err)
	}
	if c := b.fleetComponents(blog); !c.Checked || c.Components != 1 || c.UpdatesAvailable != 1 || c.SecurityUpdates != 0 {
		t.Errorf("blog after its push: %+v, want 1 component, 1 update", c)
	}

	if _, err := NewSkips(b.checker).Skip(ctx, SkipRequest{Site: shop.ID, Code: "left-pad", Version: "1.3.1", Reason: "breaks the theme",
		By: "ops@example.org"}); err != nil {
		t.Fatal(err)
	}
	if c := b.fleetComponents(shop); c.UpdatesAvailable != 1 || c.SecurityUpdates != 1 {
		t.Errorf("shop after its skip of left-pad 1.3.1: %+v, want 1 update (the security one)", c)
	}
	if c := b.fleetComponents(blog); c.UpdatesAvailable != 1 {
		t.Errorf("blog after shop's skip: %+v, want its update still", c)
	}

	// blog's policy offers security releases only: its plain update is
	// offered no more.
	if _, err := b.checker.SetSitePolicy(ctx, SitePolicyRequest{Site: blog, Body: []byte(`{"offer":"security"}`)}); err != nil {
		t.Fatal(err)
	}
	if c := b.fleetComponents(blog); !c.Checked || c.Components != 1 || c.UpdatesAvailable != 0 {
		t.Errorf("blog under a policy of security releases: %+v, want no update", c)
	}
}
