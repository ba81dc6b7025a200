// Package pgtest gives each test its own PostgreSQL database, cloned from a
// template database that is migrated once per migration set. The databases
// live on the project's private test cluster (.data/testpg, started on first
// use and left running for the next test process) or, when
// UPCHECK_TEST_DATABASE_URL is set, on that server. There is no mocked
// database: a missing PostgreSQL fails the test, it is never skipped.
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/upcheck/upcheck/internal/dev/devdb"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/testkit"
	"github.com/upcheck/upcheck/migrations"
)

// templateLockKey serialises template creation across test processes.
const templateLockKey = 0x75706368_6b746d70

var (
	setupOnce sync.Once
	setupErr  error
	serverURL string // a URL on the server; the database part is replaced
	template  string
)

// DB is one test's database.
type DB struct {
	Name string
	URL  string
	Pool *pgxpool.Pool
}

// New creates a fresh migrated database for t and drops it when t ends.
func New(t testing.TB) *DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	setupOnce.Do(func() { setupErr = setup(ctx) })
	if setupErr != nil {
		t.Fatalf("pgtest: no test database (PostgreSQL is required; `make test` starts a private cluster): %v", setupErr)
	}

	name := "upcheck_test_" + randomHex(6)
	if err := adminExec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{template}.Sanitize()); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	d := &DB{Name: name, URL: withDatabase(serverURL, name)}
	cfg, err := pgxpool.ParseConfig(d.URL)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	cfg.MaxConns = 12
	if d.Pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	t.Cleanup(func() {
		d.Pool.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := adminExec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Logf("pgtest: drop %s: %v", name, err)
		}
	})
	return d
}

func setup(ctx context.Context) error {
	serverURL = os.Getenv("UPCHECK_TEST_DATABASE_URL")
	if serverURL == "" {
		root, err := testkit.ModuleRoot()
		if err != nil {
			return err
		}
		cluster, err := devdb.Ensure(ctx, filepath.Join(root, ".data", "testpg"), devdb.Options{
			Fast: true, MaxConnections: 400, Logger: slog.Default(),
		})
		if err != nil {
			return err
		}
		serverURL = cluster.URL("postgres")
	}
	sum, err := migrationsHash()
	if err != nil {
		return err
	}
	template = "upcheck_template_" + sum
	return ensureTemplate(ctx)
}

// ensureTemplate creates and migrates the template unless a complete one
// exists. A template is marked complete (datistemplate) only after its
// migrations succeeded, so one left half-made by a killed run is rebuilt.
func ensureTemplate(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(templateLockKey)); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(templateLockKey))

	var complete *bool
	err = conn.QueryRow(ctx, "SELECT datistemplate FROM pg_database WHERE datname = $1", template).Scan(&complete)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	if complete != nil && *complete {
		return nil
	}
	ident := pgx.Identifier{template}.Sanitize()
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, withDatabase(serverURL, template))
	if err != nil {
		return err
	}
	err = store.Migrate(ctx, pool, slog.New(slog.DiscardHandler))
	pool.Close()
	if err != nil {
		return fmt.Errorf("migrate template: %w", err)
	}
	_, err = conn.Exec(ctx, "ALTER DATABASE "+ident+" WITH IS_TEMPLATE true")
	return err
}

func adminExec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}

// migrationsHash names the template after the migrations' content, so a
// changed migration gets a new template instead of a stale one.
func migrationsHash() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:16], err
}

func withDatabase(raw, name string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Path = "/" + name
	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return strings.ToLower(hex.EncodeToString(b))
}

// URLFor is a URL for another database on the same server, for tests that
// must act on d from outside it (refuse its connections, terminate them).
func (d *DB) URLFor(database string) string { return withDatabase(d.URL, database) }

// MustExec runs sql and fails t when it fails: a setup or probe statement that
// errs must never let a test pass without checking anything. It returns
// the number of rows affected.
func (d *DB) MustExec(t testing.TB, sql string, args ...any) int64 {
	t.Helper()
	tag, err := d.Pool.Exec(context.Background(), sql, args...)
	if err != nil {
		t.Fatalf("pgtest: %s: %v", oneLine(sql), err)
	}
	return tag.RowsAffected()
}

// Row is one row of QueryRow; its Scan fails the test on an error.
type Row struct {
	t   testing.TB
	sql string
	row pgx.Row
}

// QueryRow runs a query expected to return one row.
func (d *DB) QueryRow(t testing.TB, sql string, args ...any) Row {
	return Row{t: t, sql: sql, row: d.Pool.QueryRow(context.Background(), sql, args...)}
}

// Scan reads the row into dest and fails the test on any error, no rows
// included. Call it from the test's goroutine only (it calls t.Fatalf).
func (r Row) Scan(dest ...any) {
	r.t.Helper()
	if err := r.row.Scan(dest...); err != nil {
		r.t.Fatalf("pgtest: %s: %v", oneLine(r.sql), err)
	}
}

func oneLine(sql string) string {
	s := strings.Join(strings.Fields(sql), " ")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
