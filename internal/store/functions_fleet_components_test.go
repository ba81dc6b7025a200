package store_test

import (
	"context"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// The fleet's counts of a site's components
// (migrations/00029_fleet_components.sql): fleet_site_components,
// refreshed by upcheck_fleet_components_refresh when called, never by a
// write.

// fleetComponentsRow is site's stored counts: checked, then components,
// updates, security, vulnerable, trust, malicious, known_exploited.
func (f *fdb) fleetComponentsRow(t *testing.T, site int64) (checked bool, n [7]int64) {
	t.Helper()
	f.QueryRow(t, `SELECT checked, components, updates, security, vulnerable, trust, malicious, known_exploited
	               FROM fleet_site_components WHERE site_id = $1`, site).
		Scan(&checked, &n[0], &n[1], &n[2], &n[3], &n[4], &n[5], &n[6])
	return checked, n
}

// upcheck_fleet_components_refresh counts the sites named as their
// summaries count their components (queries/summary.sql's totals): a
// trust signal once a component, whether its trust went down or its
// offered update brings a signal; checked while every component's
// source was read, and a site with nothing known not checked.
func testFleetComponentsRefresh(t *testing.T, f *fdb) {
	f.exec(t, `INSERT INTO sites (name, token_hash) VALUES ('shop', sha256('a')), ('blog', sha256('b'))`)
	shop, blog := f.int(t, `SELECT id FROM sites WHERE name = 'shop'`), f.int(t, `SELECT id FROM sites WHERE name = 'blog'`)
	f.exec(t, `INSERT INTO sources (url, epoch, document_hash, last_success_at)
	           VALUES ('npm:a', 1, sha256('a'), now()), ('npm:b', 1, sha256('b'), now()), ('npm:d', 1, sha256('d'), now())`)
	f.exec(t, `INSERT INTO components (site_id, code, name, installed_version, source_url, package)
	           VALUES ($1, 'a', 'a', '1.0.0', 'npm:a', 'a'), ($1, 'b', 'b', '1.0.0', 'npm:b', 'b'),
	                  ($1, 'd', 'd', '1.0.0', 'npm:d', 'd')`, shop)
	// a: a security update, vulnerable, malicious and exploited, its
	// provenance lost; b: an update that brings a signal, its provenance
	// lost too (one trust signal); d: an update that brings nothing, and
	// a trust downgrade besides.
	f.exec(t, `INSERT INTO component_results (site_id, code, source_url, installed_version, core_version, document_hash, epoch,
	                                          update_available, security, advisory_ids, malicious_ids, exploited_ids,
	                                          provenance_lost, registry_facts)
	           VALUES ($1, 'a', 'npm:a', '1.0.0', '', sha256('a'), 1, true, true, '{GHSA-a,MAL-a}', '{MAL-a}', '{GHSA-a}',
	                   '1.0.1', '{}'),
	                  ($1, 'b', 'npm:b', '1.0.0', '', sha256('b'), 1, true, false, '{}', '{}', '{}', '1.0.1',
	                   '{"brings": [{"kind": "install_script"}]}'),
	                  ($1, 'd', 'npm:d', '1.0.0', '', sha256('d'), 1, true, false, '{}', '{}', '{}', '1.0.1',
	                   '{"brings": []}')`, shop)
	f.exec(t, `SELECT upcheck_fleet_components_refresh(ARRAY[$1, $2]::bigint[])`, shop, blog)
	checked, n := f.fleetComponentsRow(t, shop)
	if want := [7]int64{3, 3, 1, 1, 3, 1, 1}; !checked || n != want {
		t.Errorf("shop: checked %v, %v; want checked, %v", checked, n, want)
	}
	sum, err := store.New(f.Pool).Summary(context.Background(), shop, readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	if int64(sum.Components) != n[0] || int64(sum.UpdatesAvailable) != n[1] || int64(sum.SecurityUpdates) != n[2] ||
		int64(sum.Vulnerable) != n[3] || int64(sum.TrustDowngrades) != 3 || int64(sum.Brings) != 1 {
		t.Errorf("shop's summary: %d components, %d updates, %d security, %d vulnerable, %d trust downgrades, %d brings; "+
			"the fleet's %v", sum.Components, sum.UpdatesAvailable, sum.SecurityUpdates, sum.Vulnerable, sum.TrustDowngrades, sum.Brings, n)
	}
	if checked, n := f.fleetComponentsRow(t, blog); checked || n != [7]int64{} {
		t.Errorf("blog, nothing known: checked %v, %v", checked, n)
	}

	// A component whose source was never read: not checked.
	f.exec(t, `INSERT INTO components (site_id, code, name, installed_version, source_url, package)
	           VALUES ($1, 'c', 'c', '1.0.0', 'npm:c', 'c')`, shop)
	f.exec(t, `SELECT upcheck_fleet_components_refresh(ARRAY[$1]::bigint[])`, shop)
	if checked, n := f.fleetComponentsRow(t, shop); checked || n[0] != 4 {
		t.Errorf("shop with c never read: checked %v, %v", checked, n)
	}
	// A tree read with no component: known, nothing to count.
	f.exec(t, `INSERT INTO tree_state (site_id, path, file_hash, tree_hash, heads_hash, epoch, packages, synced_at, changed_at)
	           VALUES ($1, 'package-lock.json', sha256('f'), sha256('t'), '', 1, 0, now(), now())`, blog)
	f.exec(t, `SELECT upcheck_fleet_components_refresh(ARRAY[$1]::bigint[])`, blog)
	if checked, _ := f.fleetComponentsRow(t, blog); !checked {
		t.Errorf("blog with a tree and no component: not checked")
	}
}

// A site made has its row of the components' counts, not checked
// (upcheck_fleet_components_site_added), so that a refresh finds a row
// to lock.
func testFleetComponentsSiteAdded(t *testing.T, f *fdb) {
	f.exec(t, `INSERT INTO sites (name, token_hash) VALUES ('new-1', sha256('1')), ('new-2', sha256('2'))`)
	if n := f.int(t, `SELECT count(*) FROM fleet_site_components k JOIN sites s ON s.id = k.site_id
	                   WHERE s.name LIKE 'new-%' AND NOT k.checked AND k.components = 0`); n != 2 {
		t.Errorf("two sites made: %d rows, want 2", n)
	}
	if n := f.int(t, `SELECT count(*) FROM fleet_site_components WHERE site_id = 1`); n != 1 {
		t.Errorf("the local site: %d rows, want 1 (the migration's)", n)
	}
}
