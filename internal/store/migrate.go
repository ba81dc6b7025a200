package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/upcheck/upcheck/migrations"
)

// Migrate applies every pending migration. Several instances may start at
// once: goose's session locker (a PostgreSQL advisory lock) lets one migrate
// while the others wait, then find nothing left to do.
func Migrate(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) error {
	provider, sqlDB, err := newProvider(pool)
	if err != nil {
		return err
	}
	defer sqlDB.Close()
	results, err := provider.Up(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, r := range results {
		logger.InfoContext(ctx, "migration applied", "version", r.Source.Version, "file", r.Source.Path, "duration", r.Duration)
	}
	return migrateRiver(ctx, pool, logger)
}

// riverMigrateLock serialises River's migrations across instances starting
// together: River's migrator takes no lock of its own.
const riverMigrateLock = 0x75706368_72697672

// migrateRiver applies River's own migrations (the job queue behind
// notifications), under a session advisory lock.
func migrateRiver(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return mapError(fmt.Errorf("migrate river: %w", err))
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(riverMigrateLock)); err != nil {
		return mapError(fmt.Errorf("migrate river: lock: %w", err))
	}
	defer func() {
		// A failed unlock is harmless: the lock ends with the session.
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(riverMigrateLock))
	}()
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: logger})
	if err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	res, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	for _, v := range res.Versions {
		logger.InfoContext(ctx, "river migration applied", "version", v.Version, "name", v.Name, "duration", v.Duration)
	}
	return nil
}

// CheckSchema refuses a database whose schema is behind this binary's
// migrations, so a server never runs queries against tables it expects but
// that do not exist yet.
func CheckSchema(ctx context.Context, pool *pgxpool.Pool) error {
	provider, sqlDB, err := newProvider(pool)
	if err != nil {
		return err
	}
	defer sqlDB.Close()
	pending, err := provider.HasPending(ctx)
	if err != nil {
		return fmt.Errorf("check schema version: %w", err)
	}
	if pending {
		return fmt.Errorf("database schema is behind this binary: run `upcheck migrate`")
	}
	return nil
}

func newProvider(pool *pgxpool.Pool) (*goose.Provider, *sql.DB, error) {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, nil, err
	}
	sqlDB := stdlib.OpenDBFromPool(pool)
	provider, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations.FS,
		goose.WithSessionLocker(locker))
	if err != nil {
		sqlDB.Close()
		return nil, nil, fmt.Errorf("migrations: %w", err)
	}
	return provider, sqlDB, nil
}
