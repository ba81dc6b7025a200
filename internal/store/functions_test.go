package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

// functionTests holds the direct test of every function the migrations
// create, by name: each calls its function (a trigger function: fires its
// triggers) on a database of its own and holds it to its boundaries.
// TestEveryFunctionHasADirectTest keeps the list complete.
var functionTests = map[string]func(t *testing.T, f *fdb){
	// migrations/00001_lease.sql
	"upcheck_lease_begin":    testLeaseBegin,
	"upcheck_lease_fence":    testLeaseFence,
	"upcheck_lease_acquired": testLeaseAcquired,
	// migrations/00004_catalog.sql
	"upcheck_advisory_keys": testAdvisoryKeys,
	// migrations/00005_dismissals.sql
	"upcheck_dismissal_in_force": testDismissalInForce,
	"upcheck_dismissal_names":    testDismissalNames,
	// migrations/00006_read_model.sql
	"upcheck_stale_age":           testStaleAge,
	"upcheck_pin_downgrade_shown": testPinDowngradeShown,
	"upcheck_expiry_warning":      testExpiryWarning,
	"upcheck_stale":               testStale,
	"upcheck_source_kind":         testSourceKind,
	"upcheck_failing":             testFailing,
	"upcheck_open_advisories":     testOpenAdvisories,
	"upcheck_severity_rank":       testSeverityRank,
	"upcheck_catalog_rank":        testCatalogRank,
	"upcheck_needs_attention":     testNeedsAttention,
	"upcheck_signal_rank":         testSignalRank,
	"upcheck_read_model_changed":  testReadModelChanged,
	"upcheck_read_model_turns_at": testReadModelTurnsAt,
	// migrations/00007_notifications.sql
	"upcheck_nothing_to_queue": testNothingToQueue,
	// migrations/00009_feeds.sql
	"upcheck_feed_stale_age":    testFeedStaleAge,
	"upcheck_feed_sync_dead":    testFeedSyncDead,
	"upcheck_malware_read_at":   testMalwareReadAt,
	"upcheck_exploited_read_at": testExploitedReadAt,
	// migrations/00013_tree_findings.sql
	"upcheck_tree_counted":   testTreeCounted,
	"upcheck_tree_shown":     testTreeShown,
	"upcheck_tree_dismissed": testTreeDismissed,
	"upcheck_tree_attention": testTreeAttention,
	// migrations/00016_tree_counts.sql
	"upcheck_component_tree_attention": testComponentTreeAttention,
	// migrations/00018_approvals.sql
	"upcheck_approvals_of": testApprovalsOf,
	// migrations/00022_tree_brings.sql
	"upcheck_tree_brings_unread": testTreeBringsUnread,
	// migrations/00023_site_tree_reads.sql
	"upcheck_fleet_tree_attention": testFleetTreeAttention,
	// migrations/00024_fleet.sql
	"upcheck_fleet_refresh":            testFleetRefresh,
	"upcheck_fleet_due":                testFleetDue,
	"upcheck_fleet_refresh_due":        testFleetDue,
	"upcheck_fleet_sites_changed":      testFleetSitesChanged,
	"upcheck_fleet_tree_changed":       testFleetTreeChanged,
	"upcheck_fleet_state_changed":      testFleetTreeChanged,
	"upcheck_fleet_findings_changed":   testFleetFindingsChanged,
	"upcheck_fleet_dismissals_changed": testFleetDismissalsChanged,
	// migrations/00027_notification_sites.sql
	"upcheck_channel_sees": testChannelSees,
	// migrations/00028_fleet_impact.sql
	"upcheck_advisory_keys_of": testAdvisoryKeysOf,
	// migrations/00029_fleet_components.sql
	"upcheck_fleet_components_refresh":    testFleetComponentsRefresh,
	"upcheck_fleet_components_site_added": testFleetComponentsSiteAdded,
	// migrations/00031_site_notifications.sql
	"upcheck_channel_only_of":        testChannelOnlyOf,
	"upcheck_sites_nothing_to_queue": testSitesNothingToQueue,
}

func TestFunctions(t *testing.T) {
	t.Parallel()
	for name, test := range functionTests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, &fdb{pgtest.New(t)})
		})
	}
}

// schemaFunctions lists the functions of the schema the migrations create:
// those of the public schema, without River's
// (river_*, created by River's own migrations).
func schemaFunctions(t *testing.T, d *pgtest.DB) []string {
	t.Helper()
	rows, err := d.Pool.Query(context.Background(), `
		SELECT p.proname
		FROM pg_proc p
		JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE n.nspname = 'public'
		  AND p.proname NOT LIKE 'river\_%'
		  AND NOT EXISTS (SELECT FROM pg_depend e
		                  WHERE e.classid = 'pg_proc'::regclass AND e.objid = p.oid AND e.deptype = 'e')
		ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// A function the migrations create has a direct test, and a function
// whose test file does not call it (trigger functions aside, which are
// fired by their triggers) is not tested directly. An entry for a function
// that no longer exists fails too.
func TestEveryFunctionHasADirectTest(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	names := schemaFunctions(t, d)
	if len(names) == 0 {
		t.Fatal("no function found: the query no longer sees the schema's functions")
	}
	var src strings.Builder
	files, err := filepath.Glob("functions*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	for _, name := range names {
		if functionTests[name] == nil {
			t.Errorf("function %s has no direct test: add one to functionTests (internal/store/functions_test.go)", name)
			continue
		}
		var trigger bool
		d.QueryRow(t, `SELECT bool_and(prorettype = 'trigger'::regtype) FROM pg_proc WHERE proname = $1`, name).Scan(&trigger)
		if !trigger && !regexp.MustCompile(`\b`+regexp.QuoteMeta(name)+`\(`).MatchString(src.String()) {
			t.Errorf("function %s is never called in %s", name, strings.Join(files, ", "))
		}
	}
	for name := range functionTests {
		if !slices.Contains(names, name) {
			t.Errorf("functionTests tests %s, which the schema does not have", name)
		}
	}
}

// fdb is one function test's database.
type fdb struct{ *pgtest.DB }

func (f *fdb) exec(t *testing.T, sql string, args ...any) { t.Helper(); f.MustExec(t, sql, args...) }

// bool, text, ... read the one value of a query.
func (f *fdb) bool(t *testing.T, sql string, args ...any) (v bool) {
	t.Helper()
	f.QueryRow(t, sql, args...).Scan(&v)
	return v
}

func (f *fdb) text(t *testing.T, sql string, args ...any) (v string) {
	t.Helper()
	f.QueryRow(t, sql, args...).Scan(&v)
	return v
}

func (f *fdb) int(t *testing.T, sql string, args ...any) (v int64) {
	t.Helper()
	f.QueryRow(t, sql, args...).Scan(&v)
	return v
}

// sqlState is the SQLSTATE err carries, "" for none.
func sqlState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}
