package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/store"
)

// fillTables are the tables fillFleet writes millions of rows into: their
// indexes that back no constraint are dropped before and made again
// after, from their own definitions.
var fillTables = []string{"tree_packages", "tree_edges", "tree_versions", "tree_state", "components"}

// fillStep is one statement of the fill, named for its figure.
type fillStep struct {
	name string
	sql  string
	args []any
}

// fillFleet fills the fleet's sites and trees on two connections of the
// database at url, as fast as PostgreSQL loads: the indexes of the filled
// tables that back no constraint (the migrations', read back with
// pg_get_indexdef) dropped first and made again at the end, each table
// written by one set-based INSERT … SELECT in the order of its primary
// key, with triggers and foreign-key checks off for the session
// (session_replication_role = replica: every row is made consistent here),
// then ANALYZE and the fleet's counts refreshed once for every site (the
// sites' triggers did not run). Site s installs package (s*37 + k*10) mod
// fleetNames for k < fleetPerSite (distinct within the site) at version
// 1.0.((s + k) mod fleetVersions), and had 0.9.0 of the first fleetPast
// of them installed before. Its packages among the first
// fleetComponentNames (fleetComponentsPerSite of them: k*10 runs over
// every residue) are its direct dependencies made components, as a push
// makes them (code and npm package its name, source npm:NAME, the
// default policy), each a package the registry serves; the fleet's counts
// of them are refreshed at the end (a fleet check counts them again). The
// trees' findings are the check's to evaluate: none is written here.
func fillFleet(ctx context.Context, url string) error {
	var conns [2]*pgx.Conn
	for i := range conns {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		for _, set := range []string{`SET session_replication_role = replica`, `SET maintenance_work_mem = '256MB'`,
			`SET synchronous_commit = off`} {
			if _, err := c.Exec(ctx, set); err != nil {
				return err
			}
		}
		conns[i] = c
	}
	indexes, err := dropFillIndexes(ctx, conns[0])
	if err != nil {
		return err
	}
	// The sites first: the trees read them.
	if err := runSteps(ctx, conns[0], []fillStep{{"sites",
		`INSERT INTO sites (name, owner, token_hash, token_made_at, pushed_at)
		 SELECT 'site-' || s, 'owner-' || (s % 100), sha256(('push-' || s)::bytea), now(), now() - (s % 10) * interval '1 day'
		 FROM generate_series(1, $1::int) s`, []any{fleetSites}}}); err != nil {
		return err
	}
	if err := inLanes(ctx, conns, fillRowLanes()); err != nil {
		return err
	}
	// The indexes again, each table's on one connection.
	var rebuild [2][]fillStep
	for i, ix := range indexes {
		rebuild[i%2] = append(rebuild[i%2], fillStep{"index_" + ix.name, ix.def, nil})
	}
	if err := inLanes(ctx, conns, rebuild); err != nil {
		return err
	}
	var analyze [2][]fillStep
	for i, t := range append([]string{"sites"}, fillTables...) {
		analyze[i%2] = append(analyze[i%2], fillStep{"analyze_" + t, `ANALYZE ` + t, nil})
	}
	if err := inLanes(ctx, conns, analyze); err != nil {
		return err
	}
	if _, err := conns[0].Exec(ctx, `SET session_replication_role = origin`); err != nil {
		return err
	}
	if err := runSteps(ctx, conns[0], []fillStep{{"counts", `SELECT upcheck_fleet_refresh(ARRAY(SELECT id FROM sites))`, nil}}); err != nil {
		return err
	}
	return refreshComponentCounts(ctx, conns[0])
}

// refreshComponentCounts counts every site's components as a check's end
// does (store.Store.RefreshSiteComponentCounts: store.ComponentCountsBatch
// sites a statement, in site order), timed: fleet_fill_component_counts
// in all, and its slowest batch.
func refreshComponentCounts(ctx context.Context, conn *pgx.Conn) error {
	var ids []int64
	rows, err := conn.Query(ctx, `SELECT id FROM sites ORDER BY id`)
	if err != nil {
		return err
	}
	if ids, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
		return err
	}
	start := time.Now()
	var slowest time.Duration
	for lo := 0; lo < len(ids); lo += store.ComponentCountsBatch {
		began := time.Now()
		if _, err := conn.Exec(ctx, `SELECT upcheck_fleet_components_refresh($1)`, ids[lo:min(lo+store.ComponentCountsBatch, len(ids))]); err != nil {
			return fmt.Errorf("component counts: %w", err)
		}
		slowest = max(slowest, time.Since(began))
	}
	report("fleet_fill_component_counts", time.Since(start).Seconds(), "s", "", nil)
	report("fleet_fill_component_counts_batch_max", slowest.Seconds()*1000, "ms", "", nil)
	return nil
}

// fillIndex is an index dropped for the fill, with its definition.
type fillIndex struct{ name, def string }

// dropFillIndexes drops the indexes of fillTables that back no
// constraint (a primary key or a unique constraint stays: the rows come
// in its order), and returns their definitions (pg_get_indexdef) to make
// them again.
func dropFillIndexes(ctx context.Context, conn *pgx.Conn) ([]fillIndex, error) {
	rows, err := conn.Query(ctx, `
		SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
		FROM pg_index i
		WHERE i.indrelid = ANY ($1::regclass[])
		  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.conrelid = i.indrelid)
		ORDER BY pg_relation_size(i.indrelid) DESC, 1`, fillTables)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (fillIndex, error) {
		var ix fillIndex
		return ix, r.Scan(&ix.name, &ix.def)
	})
	if err != nil {
		return nil, err
	}
	for _, ix := range out {
		if _, err := conn.Exec(ctx, `DROP INDEX `+ix.name); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// inLanes runs each lane's steps in order on its connection, the lanes
// at once.
func inLanes(ctx context.Context, conns [2]*pgx.Conn, lanes [2][]fillStep) error {
	var wg sync.WaitGroup
	var errs [2]error
	for i := range lanes {
		wg.Go(func() { errs[i] = runSteps(ctx, conns[i], lanes[i]) })
	}
	wg.Wait()
	return errors.Join(errs[:]...)
}

// runSteps runs steps one after the other on conn, reporting each one's
// wall time.
func runSteps(ctx context.Context, conn *pgx.Conn, steps []fillStep) error {
	for _, st := range steps {
		start := time.Now()
		if _, err := conn.Exec(ctx, st.sql, st.args...); err != nil {
			return fmt.Errorf("%s: %w", st.name, err)
		}
		report("fleet_fill_"+st.name, time.Since(start).Seconds(), "s", "", nil)
	}
	return nil
}

// fillRowLanes are the fill's rows in two lanes, one a connection: the
// sites' packages, components, their counts' rows and tree states on
// one; their edges and the tree's history on the other.
func fillRowLanes() [2][]fillStep {
	// installs is what each site installs: name, version and k, in
	// site order (the sites' ids are one run: one INSERT made them in
	// an empty table, after the local site's 1), without a sort: the
	// outer series of a nested loop.
	installs := `(SELECT s AS site_id, 'fleet-' || lpad(((s * 37 + k * 10) % $2::int)::text, 5, '0') AS name,
		          '1.0.' || ((s + k) % $3::int) AS version, k
		   FROM (SELECT min(id) AS lo, max(id) AS hi FROM sites WHERE id > 1) r
		   CROSS JOIN LATERAL generate_series(r.lo, r.hi) s
		   CROSS JOIN generate_series(0, $1::int - 1) k) i`
	shape := []any{fleetPerSite, fleetNames, fleetVersions}
	return [2][]fillStep{
		{
			{"tree_packages", `INSERT INTO tree_packages (site_id, id, name, version, dev, optional, peer, source, install_script, dev_only, via,
			                                      components)
			  SELECT i.site_id, 'node_modules/' || i.name, i.name, i.version, false, false, false, 'registry', false, false,
			         jsonb_build_array(jsonb_build_object('head', i.name, 'path', jsonb_build_array(i.name))),
			         CASE WHEN (i.site_id * 37 + i.k * 10) % $2::int < $4::int THEN ARRAY[i.name] ELSE '{}' END
			  FROM ` + installs, append(shape, fleetComponentNames)},
			{"components", `INSERT INTO components (site_id, code, name, installed_version, source_url, package)
			  SELECT i.site_id, i.name, i.name, i.version, 'npm:' || i.name, i.name
			  FROM ` + installs + ` WHERE (i.site_id * 37 + i.k * 10) % $2::int < $4::int
			  ORDER BY i.site_id, i.name`, append(shape, fleetComponentNames)},
			{"fleet_site_components", `INSERT INTO fleet_site_components (site_id, checked, components, updates, security, vulnerable,
			                                                            trust, malicious, known_exploited, refreshed_at)
			  SELECT id, false, 0, 0, 0, 0, 0, 0, 0, now() FROM sites WHERE id > 1`, nil},
			{"tree_state", `INSERT INTO tree_state (site_id, path, file_hash, tree_hash, heads_hash, epoch, packages, synced_at, changed_at)
			  SELECT id, 'package-lock.json', sha256(('file-' || id)::bytea), sha256(('tree-' || id)::bytea), '', 1, $1::int, now(), now()
			  FROM sites WHERE id > 1`, []any{fleetPerSite}},
		},
		{
			{"tree_edges", `INSERT INTO tree_edges (site_id, from_id, name, kind, range, to_id)
			  SELECT i.site_id, '', i.name, 'prod', '^' || i.version, 'node_modules/' || i.name FROM ` + installs, shape},
			{"tree_versions", `INSERT INTO tree_versions (site_id, name, version, installed_at, removed_at)
			  SELECT i.site_id, i.name, v.version, v.installed_at, v.removed_at FROM ` + installs + `
			  CROSS JOIN LATERAL (VALUES ('0.9.0', now() - interval '90 days', now() - interval '30 days'),
			                             (i.version, now() - interval '30 days', NULL::timestamptz)) v(version, installed_at, removed_at)
			  WHERE i.k < $4::int OR v.removed_at IS NULL`, append(shape, fleetPast)},
		},
	}
}
