// Package app is the composition root: it turns a Config into a running
// process — database, migrations, lease manager, HTTP server — and owns the
// order in which they start and stop.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/upcheck/upcheck/internal/config"
	"github.com/upcheck/upcheck/internal/devdb"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/web"
)

// ShutdownTimeout is how long in-flight requests get to finish after SIGTERM.
const ShutdownTimeout = 30 * time.Second

// OpenDatabase connects to cfg's database, or, with no URL configured,
// starts the private cluster under cfg.DataDir and connects to it.
func OpenDatabase(ctx context.Context, cfg config.Config, logger *slog.Logger) (*pgxpool.Pool, error) {
	url := cfg.DatabaseURL
	if url == "" {
		cluster, err := devdb.Ensure(ctx, filepath.Join(cfg.DataDir, "pg"), devdb.Options{Logger: logger})
		if err != nil {
			return nil, fmt.Errorf("private postgresql cluster: %w", err)
		}
		if err := cluster.CreateDatabase(ctx, "upcheck"); err != nil {
			return nil, err
		}
		url = cluster.URL("upcheck")
		logger.InfoContext(ctx, "using the private postgresql cluster", "dir", cluster.Dir, "port", cluster.Port)
	}
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("UPCHECK_DATABASE_URL: %w", err)
	}
	// Fail fast while the database is down, so /readyz and the API answer
	// 503 at once instead of queueing behind dead connection attempts.
	pcfg.ConnConfig.ConnectTimeout = 5 * time.Second
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return pool, nil
}

// Migrate applies pending migrations and returns.
func Migrate(ctx context.Context, cfg config.Config, logger *slog.Logger) error {
	pool, err := OpenDatabase(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer pool.Close()
	return store.Migrate(ctx, pool, logger)
}

// Serve runs the HTTP server until ctx is cancelled, then shuts down within
// ShutdownTimeout. ready, when not nil, receives the listening address.
func Serve(ctx context.Context, cfg config.Config, logger *slog.Logger, ready func(addr string)) error {
	if cfg.TestTimings {
		logger.WarnContext(ctx, "UPCHECK_TEST_TIMINGS is set: lease timings are shortened; never use this in production",
			"lease", cfg.Timings.Lease, "heartbeat", cfg.Timings.Heartbeat, "cooldown", cfg.Timings.Cooldown)
	}
	pool, err := OpenDatabase(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := store.Migrate(ctx, pool, logger); err != nil {
		return err
	}
	if err := store.CheckSchema(ctx, pool); err != nil {
		return err
	}
	st := store.New(pool)

	srv := &http.Server{
		Handler:           web.New(web.Deps{Store: st, Logger: logger}),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	logger.InfoContext(ctx, "serving", "addr", "http://"+ln.Addr().String())
	if ready != nil {
		ready(ln.Addr().String())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case err := <-served:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	logger.InfoContext(ctx, "shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
