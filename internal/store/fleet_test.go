package store_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/treekit"
)

// fleetCounts is the local site's row of the fleet under mode, read as
// the Fleet page reads it.
func fleetCounts(t *testing.T, st *store.Store, mode readmodel.DevMode) readmodel.FleetRow {
	t.Helper()
	rows, err := st.FleetPage(context.Background(), store.FleetFilter{Sort: readmodel.FleetByName, DevMode: mode,
		StaleAfter: readmodel.DefaultSiteStaleAfter, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Local {
			return r
		}
	}
	t.Fatalf("no local site among %+v", rows)
	return readmodel.FleetRow{}
}

// sameCounts compares the fleet's counts with the summary's (whose
// malicious and exploited counts are nil before their feeds were read).
func sameCounts(fleet, sum readmodel.TreeCounts) bool {
	return (sum.Malicious == nil || *fleet.Malicious == *sum.Malicious) &&
		(sum.KnownExploited == nil || *fleet.KnownExploited == *sum.KnownExploited) &&
		fleet.Exposed == sum.Exposed && fleet.VulnerableNoFix == sum.VulnerableNoFix && fleet.Vulnerable == sum.Vulnerable &&
		fleet.Total == sum.Total
}

// The fleet's counts of a site (fleet_site_counts, kept by triggers) are
// the summary's (upcheck_tree_attention, the one definition) under every
// setting, and follow the writes that change them when they commit: a
// tree synced, the findings evaluated, a dismissal made and ended.
func TestFleetCountsFollowWrites(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	if r := fleetCounts(t, b.st, readmodel.DevSeparate); r.Checked || r.Packages != 0 || r.Counts.Total != 0 {
		t.Fatalf("no tree read: %+v", r)
	}
	check := func(when string) {
		t.Helper()
		for _, mode := range readmodel.DevModes {
			sum, err := b.st.Summary(ctx, store.LocalSite, mode)
			if err != nil {
				t.Fatal(err)
			}
			r := fleetCounts(t, b.st, mode)
			if sum.TreeCounts == nil || !r.Checked || !sameCounts(r.Counts, *sum.TreeCounts) || r.Packages != *sum.TreePackages {
				t.Errorf("%s, %s: fleet %+v (%d packages), summary %+v", when, mode, r.Counts, r.Packages, sum.TreeCounts)
			}
		}
	}
	countedSite(t, b)
	check("evaluated")
	if r := fleetCounts(t, b.st, readmodel.DevInclude); r.Counts.Total != 5 || *r.Counts.Malicious != 1 || r.Counts.Exposed != 1 {
		t.Errorf("include: %+v", r.Counts)
	}

	if _, err := b.st.DismissTreeAdvisory(ctx, store.NewTreeDismissal{AdvisoryID: "GHSA-qs01", Reason: "not reachable"}); err != nil {
		t.Fatal(err)
	}
	check("dismissed")
	if r := fleetCounts(t, b.st, readmodel.DevSeparate); *r.Counts.KnownExploited != 0 || r.Counts.Total != 3 {
		t.Errorf("dismissed: %+v", r.Counts)
	}

	treekit.Write(t, b.st, "/site/package-lock.json", treekit.Tree(t, "node_modules/express 4.17.1"), map[string]string{"express": "express"})
	check("synced again")
	if r := fleetCounts(t, b.st, readmodel.DevSeparate); r.Packages != 1 {
		t.Errorf("synced again: %+v", r)
	}
}

// Writes that move one site's counts, racing (dismissals of two
// advisories made over and over, each replacing the one before, and the
// tree synced with and without a vulnerable package): each transaction
// refreshes the site when it commits, counting after it locked the
// site's counts, so the counts stored at the end are the one
// definition's, and no two writers deadlock.
func TestFleetCountsUnderRacingWrites(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	countedSite(t, b)
	with := treekit.Tree(t, "node_modules/express 4.17.1", "node_modules/express/node_modules/qs 6.0.0")
	without := treekit.Tree(t, "node_modules/express 4.17.1")
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				if g == 0 {
					tr := with
					if i%2 == 1 {
						tr = without
					}
					state, _, err := b.st.TreeState(ctx, store.LocalSite)
					if err != nil {
						errs <- err
						return
					}
					w := &store.TreeWrite{Site: store.LocalSite, Path: "/site/package-lock.json", FileHash: [32]byte{byte(i)}, Tree: tr,
						Components: map[string]string{"express": "express"}, Epoch: state.Epoch}
					if err := b.st.WithTx(ctx, func(tx *store.Tx) error { _, err := tx.TreeWrite(ctx, w); return err }); err != nil &&
						!errors.Is(err, store.ErrTreeMoved) {
						errs <- err
					}
					continue
				}
				// Each its own advisory: two dismissals of one race on its
				// standing row, a unique index, before any count.
				adv := []string{"", "GHSA-qs01", "GHSA-dbg1"}[g]
				if _, err := b.st.DismissTreeAdvisory(ctx, store.NewTreeDismissal{AdvisoryID: adv, Reason: "racing"}); err != nil &&
					!errors.Is(err, store.ErrNotFound) {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, mode := range readmodel.DevModes {
		sum, err := b.st.Summary(ctx, store.LocalSite, mode)
		if err != nil {
			t.Fatal(err)
		}
		if r := fleetCounts(t, b.st, mode); sum.TreeCounts == nil || !sameCounts(r.Counts, *sum.TreeCounts) || r.Packages != *sum.TreePackages {
			t.Errorf("%s: fleet %+v (%d packages), summary %+v", mode, r.Counts, r.Packages, sum.TreeCounts)
		}
	}
}

// A tree's dismissal is its site's: dismissing an advisory on one site
// (wherever it is in that tree, or a component's dismissal of it there)
// leaves it counted on another site that installs the same version, in
// the site's summary and in the fleet's counts, either way round.
func TestTreeDismissalIsItsSites(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	h := sha256.Sum256([]byte("shop"))
	shop, err := b.st.SiteCreate(ctx, "shop", "", h[:])
	if err != nil {
		t.Fatal(err)
	}
	treekit.Write(t, b.st, "/site/package-lock.json", treekit.Tree(t, "node_modules/a 1.0.0"), nil)
	treekit.WriteSite(t, b.st, shop.ID, "package-lock.json", treekit.Tree(t, "node_modules/a 1.0.0"), nil)
	treekit.WriteFindings(t, b.st, []store.TreeFinding{finding(t, "a", "1.0.0", "GHSA-aaaa", "1.0.1", false, false)}, nil)
	totals := func(when string, local, other int) {
		t.Helper()
		for site, want := range map[int64]int{store.LocalSite: local, shop.ID: other} {
			sum, err := b.st.Summary(ctx, site, readmodel.DevSeparate)
			if err != nil {
				t.Fatal(err)
			}
			if sum.TreeCounts == nil || sum.TreeCounts.Total != want {
				t.Errorf("%s: site %d's summary counts %+v, want total %d", when, site, sum.TreeCounts, want)
			}
		}
		rows, err := b.st.FleetPage(ctx, store.FleetFilter{Sort: readmodel.FleetByName, DevMode: readmodel.DevSeparate,
			StaleAfter: readmodel.DefaultSiteStaleAfter, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if want := map[bool]int{true: local, false: other}[r.Local]; r.Counts.Total != want {
				t.Errorf("%s: the fleet counts %s's total %d, want %d", when, r.Site, r.Counts.Total, want)
			}
		}
	}
	totals("not dismissed", 1, 1)
	// The local site's counts are not refreshed by shop's dismissal.
	b.exec(t, `UPDATE fleet_site_counts SET refreshed_at = '2000-01-01' WHERE site_id = 1`)
	if _, err := b.st.DismissTreeAdvisory(ctx, store.NewTreeDismissal{Site: shop.ID, AdvisoryID: "GHSA-aaaa", Reason: "not reachable"}); err != nil {
		t.Fatal(err)
	}
	totals("dismissed on shop", 1, 0)
	if n := b.count(t, `SELECT count(*) FROM fleet_site_counts WHERE site_id = 1 AND refreshed_at > '2000-01-01'`); n != 0 {
		t.Errorf("shop's dismissal refreshed the local site's counts (%d rows)", n)
	}
	if err := b.st.UndismissTreeAdvisory(ctx, shop.ID, "", "GHSA-aaaa", 0); err != nil {
		t.Fatal(err)
	}
	totals("undone on shop", 1, 1)
	if _, err := b.st.DismissTreeAdvisory(ctx, store.NewTreeDismissal{Package: "a", AdvisoryID: "GHSA-aaaa", Reason: "not reachable"}); err != nil {
		t.Fatal(err)
	}
	totals("dismissed on the local site", 0, 1)
	if err := b.st.UndismissTreeAdvisory(ctx, store.LocalSite, "a", "GHSA-aaaa", 0); err != nil {
		t.Fatal(err)
	}
	// A component's dismissal of the advisory covers its own site's tree
	// alone.
	b.exec(t, `INSERT INTO advisory_dismissals (site_id, component_code, advisory_id, reason, severity, affected, fixed_in)
		SELECT id, 'blog', 'GHSA-aaaa', 'accepted', 'medium', '*', '1.0.1' FROM sites WHERE name = 'shop'`)
	totals("a component's dismissal on shop", 1, 0)
}
