package store_test

import (
	"context"
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
