package store_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// siteComponents is site's row of the fleet's component counts, read as
// the Fleet page reads it.
func siteComponents(t *testing.T, st *store.Store, site string) readmodel.FleetComponentCounts {
	t.Helper()
	rows, err := st.FleetPage(context.Background(), store.FleetFilter{Sort: readmodel.FleetByName, DevMode: readmodel.DevSeparate,
		StaleAfter: readmodel.DefaultSiteStaleAfter, Search: site, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Site == site {
			return r.Components
		}
	}
	t.Fatalf("no site %s among %+v", site, rows)
	return readmodel.FleetComponentCounts{}
}

// tokenHash is a push token's hash for a site made by a test.
func tokenHash(name string) []byte {
	h := sha256.Sum256([]byte("ups_" + name))
	return h[:]
}

// A site made is not checked and counts nothing; a refresh counts its
// components as its summary counts them.
func TestFleetComponentCountsOfASite(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	site, err := b.st.SiteCreate(ctx, "shop", "", tokenHash("shop"))
	if err != nil {
		t.Fatal(err)
	}
	if c := siteComponents(t, b.st, "shop"); c.Checked || c.Components != 0 {
		t.Fatalf("a site never pushed: %+v, want not checked", c)
	}
	if got := readmodel.FleetComponentsText(siteComponents(t, b.st, "shop")); got != readmodel.FleetNotCheckedText {
		t.Errorf("a site never pushed says %q of its components", got)
	}
	for i := range 3 {
		b.exec(t, fmt.Sprintf(`INSERT INTO components (site_id, code, name, installed_version) VALUES (%d, 'c%d', 'c%d', '1.0.0')`, site.ID, i, i))
	}
	// One with a source never read: not all checked.
	b.exec(t, fmt.Sprintf(`INSERT INTO components (site_id, code, name, installed_version, source_url, package)
	                        VALUES (%d, 'left-pad', 'left-pad', '1.3.0', 'npm:left-pad', 'left-pad')`, site.ID))
	if c := siteComponents(t, b.st, "shop"); c.Components != 0 {
		t.Errorf("counted before a refresh: %+v (no write counts them)", c)
	}
	if err := b.st.RefreshSiteComponentCounts(ctx, []int64{site.ID, site.ID}); err != nil {
		t.Fatal(err)
	}
	c := siteComponents(t, b.st, "shop")
	sum, err := b.st.Summary(ctx, site.ID, readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	if c.Checked || c.Components != 4 || c.Components != sum.Components || c.UpdatesAvailable != sum.UpdatesAvailable {
		t.Errorf("refreshed: %+v, want 4 components, not all checked (summary: %d components, never read %v)", c,
			sum.Components, sum.NeverSucceeded)
	}
	if got, want := readmodel.FleetComponentsText(c), "4 components ("+readmodel.FleetNotAllCheckedText+")"; got != want {
		t.Errorf("a site with a component never read says %q of its components, want %q", got, want)
	}
	b.exec(t, fmt.Sprintf(`DELETE FROM components WHERE site_id = %d AND code = 'left-pad'`, site.ID))
	if err := b.st.RefreshSiteComponentCounts(ctx, []int64{site.ID}); err != nil {
		t.Fatal(err)
	}
	if c := siteComponents(t, b.st, "shop"); !c.Checked || c.Components != 3 {
		t.Errorf("every component read: %+v, want 3, checked", c)
	}
}

// The count stored is the last refresh's, and the last refresh counts
// what committed before it: a refresh that waits for another one of the
// same site (here a transaction that writes a component and refreshes,
// not committed yet) counts after the lock, so it counts that write once
// it commits, not the inventory its statement began with.
func TestFleetComponentCountsARefreshWaitsThenCounts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	site, err := b.st.SiteCreate(ctx, "shop", "", tokenHash("shop"))
	if err != nil {
		t.Fatal(err)
	}
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `INSERT INTO components (site_id, code, name, installed_version) VALUES ($1, 'a', 'a', '1.0.0')`,
		site.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT upcheck_fleet_components_refresh($1)`, []int64{site.ID}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- b.st.RefreshSiteComponentCounts(ctx, []int64{site.ID}) }()
	wait.For(t, "the second refresh waits for the first's lock", 10*time.Second, func() (bool, error) {
		var n int
		err := b.db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		                                WHERE wait_event_type = 'Lock' AND query LIKE '%upcheck_fleet_components_refresh%'`).Scan(&n)
		return n == 1, err
	})
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c := siteComponents(t, b.st, "shop"); c.Components != 1 || !c.Checked {
		t.Errorf("after both refreshes: %+v, want the component the first committed", c)
	}
}

// Writers and refreshes of one site racing (each writer adds or removes a
// component and refreshes after its commit, others refresh meanwhile):
// the counts stored at the end are the site's, and no two deadlock.
func TestFleetComponentCountsUnderRacingRefreshes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var sites []int64
	for _, name := range []string{"shop", "blog"} {
		s, err := b.st.SiteCreate(ctx, name, "", tokenHash(name))
		if err != nil {
			t.Fatal(err)
		}
		sites = append(sites, s.ID)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 4 {
		wg.Go(func() {
			for i := range 15 {
				if g == 3 { // a refresher of both sites, in one batch
					if err := b.st.RefreshSiteComponentCounts(ctx, sites); err != nil {
						errs <- err
						return
					}
					continue
				}
				site := sites[i%2]
				code := fmt.Sprintf("g%d-%d", g, i/2)
				err := pgx.BeginFunc(ctx, b.db.Pool, func(tx pgx.Tx) error {
					if i%4 < 2 {
						_, err := tx.Exec(ctx, `INSERT INTO components (site_id, code, name, installed_version)
						                        VALUES ($1, $2, $2, '1.0.0')`, site, code)
						return err
					}
					_, err := tx.Exec(ctx, `DELETE FROM components WHERE site_id = $1 AND code = $2`, site, fmt.Sprintf("g%d-%d", g, i/2-1))
					return err
				})
				if err == nil {
					err = b.st.RefreshSiteComponentCounts(ctx, []int64{site})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, name := range []string{"shop", "blog"} {
		want := b.count(t, `SELECT count(*) FROM components WHERE site_id = $1`, sites[i])
		if c := siteComponents(t, b.st, name); c.Components != want {
			t.Errorf("%s: %d components counted, %d there", name, c.Components, want)
		}
	}
}
