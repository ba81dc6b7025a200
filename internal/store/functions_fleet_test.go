package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/treekit"
)

// The fleet's counts (migrations/00024_fleet.sql): fleet_site_counts,
// refreshed from upcheck_tree_attention when a write that moves them
// commits.

// fleetTotal is a site's total under mode as fleet_site_counts holds it
// (-1: no row), and the same counted from the one definition.
func (f *fdb) fleetTotal(t *testing.T, site int64, mode string) (stored, counted int64) {
	t.Helper()
	stored = f.int(t, `SELECT coalesce((SELECT total FROM fleet_site_counts WHERE site_id = $1 AND dev_mode = $2), -1)`, site, mode)
	counted = f.int(t, `SELECT count(DISTINCT (name, version, kind = 'exposed')) FROM upcheck_tree_attention($1, $2)`, site, mode)
	return stored, counted
}

// fleetVulnerableSite is the local site's tree with a (vulnerable, no
// fix), d (development only, malicious) and e (development only,
// vulnerable: counted under include alone).
func fleetVulnerableSite(t *testing.T, f *fdb) *store.Store {
	t.Helper()
	st := store.New(f.Pool)
	treekit.Write(t, st, "package-lock.json", treekit.Tree(t, "node_modules/a 1.0.0", "node_modules/d 1.0.0 dev",
		"node_modules/e 1.0.0 dev"), nil)
	mal := release.AdvisoryMatch{Advisory: release.Advisory{ID: "MAL-d", Severity: "critical", Affected: "*"}, NoFix: true, Malicious: true}
	treekit.WriteFindings(t, st, []store.TreeFinding{
		treekit.Finding(t, "a", "1.0.0", release.AdvisoryMatch{Advisory: release.Advisory{ID: "GHSA-a", Severity: "high",
			Affected: "*"}, NoFix: true}, false),
		treekit.Finding(t, "d", "1.0.0", mal, false),
		treekit.Finding(t, "e", "1.0.0", release.AdvisoryMatch{Advisory: release.Advisory{ID: "GHSA-e", Severity: "low",
			Affected: "*", FixedIn: "1.0.1"}}, false),
	}, nil)
	return st
}

// upcheck_fleet_refresh counts the sites named from the one definition
// under every setting; a site with no tree is not checked.
func testFleetRefresh(t *testing.T, f *fdb) {
	fleetVulnerableSite(t, f)
	f.exec(t, `UPDATE fleet_site_counts SET total = 99, tree = false`)
	f.exec(t, `SELECT upcheck_fleet_refresh(ARRAY[1])`)
	for _, mode := range []string{"separate", "include", "omit"} {
		if stored, counted := f.fleetTotal(t, 1, mode); stored != counted || counted == 0 {
			t.Errorf("%s: stored %d, counted %d", mode, stored, counted)
		}
	}
	testFleetRefreshMany(t, f)
	if !f.bool(t, `SELECT bool_and(tree AND packages = 3) FROM fleet_site_counts WHERE site_id = 1`) {
		t.Error("the local site's tree is read: checked, 3 packages")
	}
	f.exec(t, `INSERT INTO sites (name, token_hash) VALUES ('other', sha256('t'))`)
	f.exec(t, `SELECT upcheck_fleet_refresh(ARRAY(SELECT id FROM sites))`)
	if f.bool(t, `SELECT bool_or(tree OR total > 0) FROM fleet_site_counts c JOIN sites s ON s.id = c.site_id WHERE s.name = 'other'`) {
		t.Error("a site with no tree: not checked, nothing counted")
	}
}

// upcheck_fleet_refresh of 200 sites or more counts every site's at once
// (upcheck_fleet_tree_attention): the same counts as one site's at a time.
func testFleetRefreshMany(t *testing.T, f *fdb) {
	t.Helper()
	fleetVulnerableSite(t, f)
	f.exec(t, `INSERT INTO sites (name, token_hash) SELECT 'site-' || g, sha256(('t' || g)::bytea) FROM generate_series(1, 250) g`)
	f.exec(t, `UPDATE fleet_site_counts SET total = 99, tree = false`)
	f.exec(t, `SELECT upcheck_fleet_refresh(ARRAY(SELECT id FROM sites))`)
	for _, mode := range []string{"separate", "include", "omit"} {
		if stored, counted := f.fleetTotal(t, 1, mode); stored != counted || counted == 0 {
			t.Errorf("many sites, %s: stored %d, counted %d", mode, stored, counted)
		}
	}
	if n := f.int(t, `SELECT count(*) FROM fleet_site_counts WHERE tree OR total <> 0`); n != 3 {
		t.Errorf("many sites: %d rows checked or counted, want the local site's 3", n)
	}
}

// upcheck_fleet_tree_attention is upcheck_tree_attention of every site,
// each row with its site's id.
func testFleetTreeAttention(t *testing.T, f *fdb) {
	fleetVulnerableSite(t, f)
	for _, mode := range []string{"separate", "include"} {
		all := f.text(t, `SELECT string_agg(site_id || ':' || kind || ':' || advisory_id, ' ' ORDER BY kind, advisory_id) FROM upcheck_fleet_tree_attention($1)`, mode)
		one := f.text(t, `SELECT string_agg('1:' || kind || ':' || advisory_id, ' ' ORDER BY kind, advisory_id) FROM upcheck_tree_attention(1, $1)`, mode)
		if all != one || all == "" {
			t.Errorf("%s: the fleet's %q, the local site's %q", mode, all, one)
		}
	}
}

// upcheck_fleet_due lists sites in fleet_refresh_due, once each however
// often a transaction names them; upcheck_fleet_refresh_due refreshes
// each when the transaction commits and leaves the table empty.
func testFleetDue(t *testing.T, f *fdb) {
	fleetVulnerableSite(t, f)
	f.exec(t, `UPDATE fleet_site_counts SET total = 99`)
	ctx := context.Background()
	if err := pgx.BeginFunc(ctx, f.Pool, func(tx pgx.Tx) error {
		for range 2 {
			if _, err := tx.Exec(ctx, `SELECT upcheck_fleet_due(ARRAY[1, 1])`); err != nil {
				return err
			}
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM fleet_refresh_due`).Scan(&n); err != nil || n != 1 {
			t.Errorf("due inside the transaction: %d (%v), want 1", n, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := f.int(t, `SELECT count(*) FROM fleet_refresh_due`); n != 0 {
		t.Errorf("after the commit: %d due", n)
	}
	if stored, counted := f.fleetTotal(t, 1, "include"); stored != counted {
		t.Errorf("refreshed at the commit: stored %d, counted %d", stored, counted)
	}
}

// A site made has its rows, not checked (fleet_site_added).
func testFleetSitesChanged(t *testing.T, f *fdb) {
	f.exec(t, `INSERT INTO sites (name, token_hash) VALUES ('new-site', sha256('t'))`)
	if n := f.int(t, `SELECT count(*) FROM fleet_site_counts c JOIN sites s ON s.id = c.site_id
	                   WHERE s.name = 'new-site' AND NOT c.tree AND c.total = 0`); n != 3 {
		t.Errorf("a new site: %d rows, want one a setting", n)
	}
}

// A tree written refreshes its site; a sync that moves tree_state's times
// alone refreshes nothing.
func testFleetTreeChanged(t *testing.T, f *fdb) {
	st := fleetVulnerableSite(t, f)
	if stored, counted := f.fleetTotal(t, 1, "include"); stored != counted || stored != 3 {
		t.Errorf("written: stored %d, counted %d, want 3", stored, counted)
	}
	before := f.text(t, `SELECT max(refreshed_at)::text FROM fleet_site_counts WHERE site_id = 1`)
	f.exec(t, `UPDATE tree_state SET synced_at = clock_timestamp() WHERE site_id = 1`)
	if after := f.text(t, `SELECT max(refreshed_at)::text FROM fleet_site_counts WHERE site_id = 1`); after != before {
		t.Errorf("a touch refreshed the counts (%s, then %s)", before, after)
	}
	treekit.Write(t, st, "package-lock.json", treekit.Tree(t, "node_modules/a 1.0.0"), nil)
	if stored, counted := f.fleetTotal(t, 1, "include"); stored != counted || stored != 1 {
		t.Errorf("d removed: stored %d, counted %d, want 1", stored, counted)
	}
	if n := f.int(t, `SELECT min(packages) FROM fleet_site_counts WHERE site_id = 1`); n != 1 {
		t.Errorf("packages: %d, want 1", n)
	}
}

// A finding added, changed in what counting reads or removed refreshes
// the sites that install its version; one whose EPSS alone moved does
// not.
func testFleetFindingsChanged(t *testing.T, f *fdb) {
	fleetVulnerableSite(t, f)
	before := f.text(t, `SELECT max(refreshed_at)::text FROM fleet_site_counts WHERE site_id = 1`)
	f.exec(t, `UPDATE tree_findings SET epss = 0.5, advisory = advisory || '{"epss": 0.5}'`)
	if after := f.text(t, `SELECT max(refreshed_at)::text FROM fleet_site_counts WHERE site_id = 1`); after != before {
		t.Errorf("an EPSS move refreshed the counts (%s, then %s)", before, after)
	}
	f.exec(t, `UPDATE tree_findings SET malicious = true WHERE advisory_id = 'GHSA-a'`)
	if n := f.int(t, `SELECT malicious FROM fleet_site_counts WHERE site_id = 1 AND dev_mode = 'separate'`); n != 2 {
		t.Errorf("a marked malicious: %d malicious, want 2 (a and d)", n)
	}
	f.exec(t, `DELETE FROM tree_findings WHERE advisory_id = 'GHSA-a'`)
	if stored, counted := f.fleetTotal(t, 1, "separate"); stored != counted || stored != 1 {
		t.Errorf("a's finding gone: stored %d, counted %d, want 1 (d, malicious)", stored, counted)
	}
}

// A dismissal made or ended refreshes the sites with a finding of its
// advisory.
func testFleetDismissalsChanged(t *testing.T, f *fdb) {
	fleetVulnerableSite(t, f)
	f.exec(t, `INSERT INTO advisory_dismissals (component_code, package, advisory_id, reason, severity, affected)
	           VALUES ('', '', 'ghsa-a', 'not used', 'high', '*')`)
	if stored, counted := f.fleetTotal(t, 1, "separate"); stored != counted || stored != 1 {
		t.Errorf("dismissed: stored %d, counted %d, want 1", stored, counted)
	}
	f.exec(t, `UPDATE advisory_dismissals SET ended_at = clock_timestamp(), ended_how = 'undone'`)
	if stored, counted := f.fleetTotal(t, 1, "separate"); stored != counted || stored != 2 {
		t.Errorf("ended: stored %d, counted %d, want 2", stored, counted)
	}
}

// upcheck_advisory_keys_of is upcheck_advisory_keys of one advisory (its
// id and aliases, upper-cased), immutable, so that the look-back's
// findings are found by their advisory's keys from the index
// tree_exposures_keys: the impact of an advisory on the fleet
// (queries/fleet.sql) reads them so.
func testAdvisoryKeysOf(t *testing.T, f *fdb) {
	for advisory, want := range map[string][]string{
		`'{"id": "ghsa-x1", "aliases": ["cve-1", "CVE-1"]}'`: {"CVE-1", "GHSA-X1"},
		`'{"summary": "no id"}'`:                             {},
		`'"GHSA-x"'`:                                         {},
	} {
		var got []string
		f.QueryRow(t, `SELECT upcheck_advisory_keys_of(`+advisory+`::jsonb)`).Scan(&got)
		if !slices.Equal(got, want) {
			t.Errorf("upcheck_advisory_keys_of(%s) = %q, want %q", advisory, got, want)
		}
	}
	ctx := context.Background()
	tx, err := f.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.Query(ctx, `EXPLAIN SELECT id FROM tree_exposures WHERE upcheck_advisory_keys_of(advisory) @> ARRAY['CVE-1']`)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(plan, "\n"), "tree_exposures_keys") {
		t.Errorf("the look-back's findings of an advisory are not read by tree_exposures_keys:\n%s", strings.Join(plan, "\n"))
	}
}
