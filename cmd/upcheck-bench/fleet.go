package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/dev/devdb"
)

// The simulated fleet (part 12): fleetSites registered sites (the
// -fleet-sites flag; 10,000 by default, the scale), each with
// fleetPerSite installed packages drawn from fleetNames packages at
// fleetVersions versions each (30,000 distinct package versions), about
// 10 million installed rows; each site also installed, and removed, an
// older version (0.9.0) of fleetPast of its packages (the tree's
// history). fleetAdvisories OSV records name as many packages: one in 50
// a malicious package (every version), the others an advisory of one of
// its three versions, fixed in the next.
const (
	fleetPerSite    = 1000
	fleetNames      = 10000
	fleetVersions   = 3
	fleetPast       = 100
	fleetAdvisories = 1000
	// fleetComponentNames: a site's packages among the first this many
	// of fleetNames are its components (its direct dependencies, as a
	// push makes them): fleetComponentsPerSite each, drawn from packages
	// the registry serves (fewer than fleetAdvisories).
	fleetComponentNames    = 100
	fleetComponentsPerSite = fleetComponentNames * fleetPerSite / fleetNames
)

// fleetSites is how many registered sites the fleet has (-fleet-sites):
// fewer for development, the 10,000 by default.
var fleetSites = 10000

// fleetDB is a fleet's database kept by an earlier run (-fleet-db, the
// URL -keep printed): the part measures the pushes and the reads on it
// again (fleetAgain) without filling and checking a fleet anew.
var fleetDB string

// fleetAgain runs fleetServe on fleetDB, migrated by the binary first.
func fleetAgain(ctx context.Context, binary string) error {
	env := []string{"UPCHECK_DATABASE_URL=" + fleetDB, "UPCHECK_LOG_LEVEL=WARN", "PATH=" + os.Getenv("PATH")}
	if out, err := command(binary, env, "", "migrate").CombinedOutput(); err != nil {
		return fmt.Errorf("upcheck migrate: %v\n%s", err, out)
	}
	conn, err := pgx.Connect(ctx, fleetDB)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var sites int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM tree_state`).Scan(&sites); err != nil {
		return err
	}
	report("fleet_sites", float64(sites), "sites", "", nil)
	return fleetServe(ctx, binary, env, conn)
}

// fleetTables are the tables a fleet fills, whose rows and bytes (with
// their indexes) the part reports.
var fleetTables = []string{"sites", "tree_state", "tree_packages", "tree_edges", "tree_versions", "tree_findings", "components",
	"component_results", "fleet_site_components"}

// fleet is part 12 (`-only fleet`), in a database of its own migrated by
// the real binary:
//
//  1. the OSV records of the fleet's advisories imported by the real
//     binary (`upcheck feed import osv`);
//  2. the fleet filled by SQL (fillFleet: the rows a fleet of pushes
//     writes, not the pushes themselves), timed, and each table's rows
//     and bytes reported;
//  3. a fleet check by the real binary (fleetCheck): every site's versions
//     matched once, the findings' fixes decided from documents the
//     bench's registry serves, each fetch counted there, the check's peak
//     RSS;
//  4. `upcheck serve` (fleetServe): one site's push of 1,000 packages,
//     of versions the fleet has and of new ones, timed; the impact of an
//     advisory under the summary's load test, and the Fleet page's first
//     page against /healthz.
func fleet(ctx context.Context, binary string, cluster *devdb.Cluster) error {
	if fleetDB != "" {
		return fleetAgain(ctx, binary)
	}
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
	dir, err := os.MkdirTemp("", "upcheck-bench-fleet-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	env := []string{"UPCHECK_DATABASE_URL=" + url, "UPCHECK_LOG_LEVEL=WARN", "UPCHECK_FEED_DIR=" + dir, "PATH=" + os.Getenv("PATH")}
	if out, err := command(binary, env, "", "migrate").CombinedOutput(); err != nil {
		return fmt.Errorf("upcheck migrate: %v\n%s", err, out)
	}
	report("fleet_sites", float64(fleetSites), "sites", "", nil)
	archive := filepath.Join(dir, "fleet.zip")
	if err := writeFleetArchive(archive); err != nil {
		return err
	}
	imported, err := importOnce(binary, env, archive)
	if err != nil {
		return err
	}
	if imported.res.Written != fleetAdvisories {
		return fmt.Errorf("the import wrote %d of %d records: %+v", imported.res.Written, fleetAdvisories, imported.res)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	began := time.Now()
	if err := fillFleet(ctx, url); err != nil {
		return fmt.Errorf("fill the fleet: %w", err)
	}
	wall := time.Since(began).Seconds()
	if fleetSites == 10000 {
		report("fleet_fill_wall", wall, "s", "<= 300", yes(wall <= 300))
	} else {
		report("fleet_fill_wall", wall, "s", "", nil)
	}
	reg, err := startFleetRegistry()
	if err != nil {
		return err
	}
	defer reg.close()
	env = append(env, "UPCHECK_NPM_REGISTRY="+reg.url, "UPCHECK_ALLOW_PRIVATE_SOURCES=1")
	if err := fleetCheck(ctx, binary, env, conn, reg); err != nil {
		return err
	}
	if err := reportFleetSizes(ctx, conn); err != nil {
		return err
	}
	return fleetServe(ctx, binary, env, conn)
}

// fleetName is the i-th package of the fleet.
func fleetName(i int) string { return fmt.Sprintf("fleet-%05d", i) }

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
