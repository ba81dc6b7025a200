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
