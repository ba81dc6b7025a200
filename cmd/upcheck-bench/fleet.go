package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/dev/devdb"
)

// The simulated fleet (part 12): fleetSites registered sites, each with
// fleetPerSite installed packages drawn from fleetNames packages at
// fleetVersions versions each (30,000 distinct package versions), about
// 10 million installed rows; each site also installed, and removed,
// an older version of fleetPast of its packages (the tree's history),
// and fleetAdvisories advisories match one version each of as many
// packages.
const (
	fleetSites      = 10000
	fleetPerSite    = 1000
	fleetNames      = 10000
	fleetVersions   = 3
	fleetPast       = 100
	fleetAdvisories = 1000
)

// fleetTables are the tables a fleet fills, whose rows and bytes (with
// their indexes) the part reports.
var fleetTables = []string{"sites", "tree_state", "tree_packages", "tree_edges", "tree_versions", "tree_findings"}

// fleet is part 12 (`-only fleet`): a database of its own, migrated by the
// real binary, filled with the simulated fleet by SQL (the shape a fleet
// of pushes writes, not the pushes themselves: 10,000 pushes through the
// sync would take the part's whole time), timed, and each table's rows and
// bytes reported: the figures docs/operations.md's "Many sites" scales
// from.
func fleet(ctx context.Context, binary string, cluster *devdb.Cluster) error {
	name := fmt.Sprintf("bench_fleet_%d", time.Now().Unix())
	if err := cluster.CreateDatabase(ctx, name); err != nil {
		return err
	}
	url := cluster.URL(name)
	if keep {
		fmt.Println("database", url)
	} else {
		defer dropDatabase(cluster, name)
	}
	env := []string{"UPCHECK_DATABASE_URL=" + url, "UPCHECK_LOG_LEVEL=WARN", "PATH=" + os.Getenv("PATH")}
	if out, err := command(binary, env, "", "migrate").CombinedOutput(); err != nil {
		return fmt.Errorf("upcheck migrate: %v\n%s", err, out)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	began := time.Now()
	if err := fillFleet(ctx, conn); err != nil {
		return fmt.Errorf("fill the fleet: %w", err)
	}
	report("fleet_fill_wall", time.Since(began).Seconds(), "s", "", nil)
	return reportFleetSizes(ctx, conn)
}

// fillFleet fills the fleet on conn. Site s installs package
// (s*37 + k*10) mod fleetNames for k < fleetPerSite (distinct within the
// site) at version (s + k) mod fleetVersions.
func fillFleet(ctx context.Context, conn *pgx.Conn) error {
	steps := []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO sites (name, owner, token_hash, token_made_at, pushed_at)
		  SELECT 'site-' || s, 'owner-' || (s % 100), sha256(('push-' || s)::bytea), now(), now()
		  FROM generate_series(1, $1::int) s`, []any{fleetSites}},
		{`CREATE TEMP TABLE fleet_installs AS
		  SELECT s.id AS site_id, 'fleet-' || lpad(((s.id * 37 + k * 10) % $2::int)::text, 5, '0') AS name,
		         '1.0.' || ((s.id + k) % $3::int) AS version, k
		  FROM sites s CROSS JOIN generate_series(0, $1::int - 1) k
		  WHERE s.id > 1`, []any{fleetPerSite, fleetNames, fleetVersions}},
		{`INSERT INTO tree_packages (site_id, id, name, version, dev, optional, peer, source, install_script, dev_only, via)
		  SELECT site_id, 'node_modules/' || name, name, version, false, false, false, 'registry', false, false,
		         jsonb_build_array(jsonb_build_object('head', name, 'path', jsonb_build_array(name)))
		  FROM fleet_installs`, nil},
		{`INSERT INTO tree_edges (site_id, from_id, name, kind, range, to_id)
		  SELECT site_id, '', name, 'prod', '^' || version, 'node_modules/' || name FROM fleet_installs`, nil},
		{`INSERT INTO tree_versions (site_id, name, version, installed_at)
		  SELECT site_id, name, version, now() - interval '30 days' FROM fleet_installs`, nil},
		{`INSERT INTO tree_versions (site_id, name, version, installed_at, removed_at)
		  SELECT site_id, name, '0.9.0', now() - interval '90 days', now() - interval '30 days'
		  FROM fleet_installs WHERE k < $1::int`, []any{fleetPast}},
		{`INSERT INTO tree_state (site_id, path, file_hash, tree_hash, heads_hash, epoch, packages, synced_at, changed_at)
		  SELECT id, 'package-lock.json', sha256(('file-' || id)::bytea), sha256(('tree-' || id)::bytea), '', 1, $1::int, now(), now()
		  FROM sites WHERE id > 1`, []any{fleetPerSite}},
		{`INSERT INTO tree_findings (name, version, advisory_id, advisory, advisory_keys, malicious, known_exploited, severity, epoch)
		  SELECT 'fleet-' || lpad(a::text, 5, '0'), '1.0.' || (a % $2::int), 'GHSA-fleet-' || a,
		         jsonb_build_object('id', 'GHSA-fleet-' || a, 'summary', 'a bench advisory'), ARRAY['GHSA-fleet-' || a],
		         a % 50 = 0, a % 20 = 0, 'high', 1
		  FROM generate_series(0, $1::int - 1) a`, []any{fleetAdvisories, fleetVersions}},
		{`DROP TABLE fleet_installs`, nil},
		{`ANALYZE`, nil},
	}
	for _, st := range steps {
		if _, err := conn.Exec(ctx, st.sql, st.args...); err != nil {
			return fmt.Errorf("%.60s…: %w", st.sql, err)
		}
	}
	return nil
}

// reportFleetSizes reports each of fleetTables' rows and bytes (with its
// indexes and TOAST), and the database's.
func reportFleetSizes(ctx context.Context, conn *pgx.Conn) error {
	for _, t := range fleetTables {
		var rows, bytes int64
		if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM `+t+`), pg_total_relation_size($1::regclass)`, t).Scan(&rows, &bytes); err != nil {
			return err
		}
		report("fleet_rows_"+t, float64(rows), "rows", "", nil)
		report("fleet_bytes_"+t, float64(bytes)/(1<<20), "MiB", "", nil)
	}
	var total int64
	if err := conn.QueryRow(ctx, `SELECT pg_database_size(current_database())`).Scan(&total); err != nil {
		return err
	}
	report("fleet_database", float64(total)/(1<<20), "MiB", "", nil)
	return nil
}
