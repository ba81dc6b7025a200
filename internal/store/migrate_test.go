package store_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/migrations"
)

// schemaSQL describes the schema of the public schema, River's tables and
// extensions' functions aside, one line per object, with the rows the
// migrations insert: two databases with the same lines have the same
// schema.
const schemaSQL = `
WITH rel AS (
    SELECT c.oid, c.relname, c.relkind FROM pg_class c
    WHERE c.relnamespace = 'public'::regnamespace AND c.relname NOT LIKE 'river\_%' AND c.relname <> 'goose_db_version'
      AND c.relname NOT LIKE 'goose\_db\_version\_%'
      AND NOT EXISTS (SELECT FROM pg_depend e WHERE e.classid = 'pg_class'::regclass AND e.objid = c.oid AND e.deptype = 'e')
)
SELECT line FROM (
    SELECT 'relation ' || relname || ' ' || relkind::text FROM rel
    UNION ALL
    SELECT 'column ' || r.relname || '.' || a.attname || ' #' || row_number() OVER (PARTITION BY r.oid ORDER BY a.attnum) || ' ' || format_type(a.atttypid, a.atttypmod)
           || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
           || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '') || ' ' || a.attgenerated::text
           || coalesce(' comment ' || col_description(r.oid, a.attnum), '')
    FROM rel r JOIN pg_attribute a ON a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped
    LEFT JOIN pg_attrdef d ON d.adrelid = r.oid AND d.adnum = a.attnum
    UNION ALL
    SELECT 'constraint ' || r.relname || '.' || k.conname || ' ' || pg_get_constraintdef(k.oid)
    FROM rel r JOIN pg_constraint k ON k.conrelid = r.oid
    UNION ALL
    SELECT 'index ' || pg_get_indexdef(i.indexrelid) FROM rel r JOIN pg_index i ON i.indrelid = r.oid
    UNION ALL
    SELECT 'view ' || relname || ' ' || pg_get_viewdef(oid) FROM rel WHERE relkind = 'v'
    UNION ALL
    SELECT 'trigger ' || pg_get_triggerdef(t.oid) FROM rel r JOIN pg_trigger t ON t.tgrelid = r.oid WHERE NOT t.tgisinternal
    UNION ALL
    SELECT 'function ' || pg_get_functiondef(p.oid) FROM pg_proc p
    WHERE p.pronamespace = 'public'::regnamespace AND p.proname NOT LIKE 'river\_%'
      AND NOT EXISTS (SELECT FROM pg_depend e WHERE e.classid = 'pg_proc'::regclass AND e.objid = p.oid AND e.deptype = 'e')
    UNION ALL
    SELECT 'type ' || t.typname || ' ' || t.typtype::text FROM pg_type t
    WHERE t.typnamespace = 'public'::regnamespace AND t.typtype IN ('e', 'd', 'c') AND t.typrelid = 0
    UNION ALL
    SELECT 'extension ' || extname FROM pg_extension
    UNION ALL
    SELECT 'row core_update_lock ' || l::text FROM core_update_lock l
    UNION ALL
    SELECT 'row read_model_version ' || v::text FROM read_model_version v
) s(line)
ORDER BY line`

// schemaOf is the description of d's schema (schemaSQL).
func schemaOf(t *testing.T, d *pgtest.DB) []string {
	t.Helper()
	rows, err := d.Pool.Query(context.Background(), schemaSQL)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// Every migration's Down undoes its Up: down to version 0 no object of
// upcheck's is left, and migrating again, from several instances at once
// (goose's lock lets one migrate), gives the schema back as it was.
func TestMigrationsGoDownAndUpAgain(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	ctx := context.Background()
	before := schemaOf(t, d)
	sqlDB := stdlib.OpenDBFromPool(d.Pool)
	defer sqlDB.Close()
	provider, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := provider.DownTo(ctx, 0); err != nil {
		t.Fatal(err)
	}
	var left []string
	rows, err := d.Pool.Query(ctx, `
		SELECT relname FROM pg_class
		WHERE relnamespace = 'public'::regnamespace AND relname NOT LIKE 'river\_%' AND relname NOT LIKE 'goose\_db\_version%'
		  AND relname NOT IN (SELECT c.relname FROM pg_class c JOIN pg_depend e ON e.classid = 'pg_class'::regclass AND e.objid = c.oid AND e.deptype = 'e')
		UNION ALL
		SELECT proname FROM pg_proc p
		WHERE pronamespace = 'public'::regnamespace AND proname NOT LIKE 'river\_%'
		  AND NOT EXISTS (SELECT FROM pg_depend e WHERE e.classid = 'pg_proc'::regclass AND e.objid = p.oid AND e.deptype = 'e')`)
	if err != nil {
		t.Fatal(err)
	}
	if left, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("down to version 0 leaves %s", strings.Join(left, ", "))
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() { errs[i] = store.Migrate(ctx, d.Pool, slog.New(slog.DiscardHandler)) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("migrate: %v", err)
		}
	}
	after := schemaOf(t, d)
	if strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("the schema after down and up again differs:\n%s", lineDiff(before, after))
	}
}

// lineDiff lists the lines only in a (-) and only in b (+).
func lineDiff(a, b []string) string {
	in := func(xs []string) map[string]bool {
		m := map[string]bool{}
		for _, x := range xs {
			m[x] = true
		}
		return m
	}
	ina, inb := in(a), in(b)
	var out strings.Builder
	for _, x := range a {
		if !inb[x] {
			out.WriteString("- " + x + "\n")
		}
	}
	for _, x := range b {
		if !ina[x] {
			out.WriteString("+ " + x + "\n")
		}
	}
	return out.String()
}
