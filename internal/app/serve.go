package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/config"
	"github.com/upcheck/upcheck/internal/housekeeping"
	"github.com/upcheck/upcheck/internal/lockfile"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
	"github.com/upcheck/upcheck/internal/web"
)

// Serve runs the HTTP server and the check schedule until ctx is cancelled.
// Then it stops in order: no new requests or checks; a running check is
// cancelled and releases its lease at once; in-flight requests get
// ShutdownTimeout to finish. ready, when not nil, receives the address.
func Serve(ctx context.Context, cfg config.Config, logger *slog.Logger, ready func(addr string)) error {
	if err := checkServeConfig(cfg); err != nil {
		return err // before the demo site starts
	}
	var demoSite *demoSite
	if cfg.Demo {
		var err error
		if demoSite, err = startDemo(logger, os.Stderr); err != nil {
			return err
		}
		defer demoSite.close()
		cfg.AllowPrivateSources = true // the demo publisher lives on loopback
	}
	a, err := open(ctx, cfg, logger, true)
	if err != nil {
		if ctx.Err() != nil {
			return nil // asked to stop while waiting for the database
		}
		return err
	}
	defer a.Close()
	if err := store.CheckSchema(ctx, a.Pool); err != nil {
		return err
	}
	// Listen before the manifest sync: a second serve started on an address
	// already taken must stop before it points the installed components at
	// its own demo publisher, which dies with it.
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer ln.Close() // srv.Serve closes it too; this covers the returns before
	watcher, err := a.readComponents(ctx, demoSite)
	if err != nil {
		return err
	}
	logger.InfoContext(ctx, "serving", "addr", "http://"+ln.Addr().String(), "trusted_proxies", cfg.TrustedProxies,
		"metrics_public", cfg.MetricsPublic)
	if ready != nil {
		ready(ln.Addr().String())
	}
	return runServices(ctx, logger, a.services(ln, watcher, demoSite))
}

// checkServeConfig refuses what serve cannot run with: lease timings that
// do not fit together, and two sources of the installed components.
func checkServeConfig(cfg config.Config) error {
	if _, err := LeaseTimings(cfg.Timings); err != nil {
		return err
	}
	if cfg.Manifest != "" && cfg.Lockfile != "" {
		return errors.New("UPCHECK_MANIFEST and UPCHECK_LOCKFILE are both set: the components come from one of them; unset the other")
	}
	return nil
}

// readComponents reads the installed components once before serving: the
// demo site's, or the manifest's; with a lockfile it returns the watcher
// that reads it now and whenever it changes.
func (a *App) readComponents(ctx context.Context, demoSite *demoSite) (*lockfile.Watcher, error) {
	cfg := a.Config
	switch {
	case demoSite != nil:
		return nil, demoSite.install(ctx, a)
	case cfg.Lockfile != "":
		return a.watchLockfile(ctx), nil
	case cfg.Manifest != "":
		// A bad manifest must not take the site's update checks down with
		// it: the previous components stay and the error is loud.
		_, err := a.SyncManifest(ctx, cfg.Manifest)
		a.inputRead(ctx, readmodel.InputManifest, cfg.Manifest, err)
	}
	return nil, nil
}

// services are serve's services, started in this order and stopped in the
// reverse: the schedule first (a running check is cancelled and releases
// its lease at once), the HTTP server after it (manual checks are
// cancelled, then in-flight requests get ShutdownTimeout), deliveries last
// (River stops taking jobs and waits for the sends in flight).
func (a *App) services(ln net.Listener, watcher *lockfile.Watcher, demoSite *demoSite) []service {
	cfg, logger := a.Config, a.Logger
	services := []service{
		{name: "notifications", run: func(ctx context.Context) error { a.Notify.Run(ctx); return nil }, stop: a.Notify.Stop},
		{name: "http server", run: func(ctx context.Context) error { return a.serveHTTP(ctx, ln) }},
		// Sessions, throttling rows, old history: once a day on every instance.
		{name: "housekeeping", run: func(ctx context.Context) error {
			housekeeping.New(a.Store, a.Auth, logger, housekeeping.WithTreeHistory(cfg.TreeHistoryRetention)).Every(ctx, time.Minute, 24*time.Hour)
			return nil
		}},
	}
	if watcher != nil {
		interval := lockfile.WatchInterval
		if d := cfg.Timings.Lockfile; d != nil {
			interval = *d
		}
		services = append(services, service{name: "lockfile watcher", run: func(ctx context.Context) error {
			watcher.Run(ctx, interval, func(err error) { a.inputRead(ctx, readmodel.InputLockfile, cfg.Lockfile, err) })
			return nil
		}})
	}
	scheduler := updatecheck.NewScheduler(a.Checker, a.Schedule, a.Lease.Timings(), logger)
	services = append(services, service{name: "schedule", run: func(ctx context.Context) error {
		if demoSite != nil {
			// The newcomer sees real results at once, not after the first
			// cron; the scheduler starts after it, so its catch-up finds
			// this check completed instead of answering busy beside it.
			demoSite.firstCheck(ctx, a)
		}
		scheduler.Run(ctx)
		return nil
	}})
	return services
}

// serveHTTP serves on ln until ctx ends, then shuts the server down: no
// new requests, ShutdownTimeout for those in flight. Manual checks run
// under ctx, so they end with the server (also when it fails), and a
// closed browser tab does not end one.
func (a *App) serveHTTP(ctx context.Context, ln net.Listener) error {
	cfg := a.Config
	srv := &http.Server{
		Handler: web.New(web.Deps{
			Store: a.Store, Checker: a.Checker, Importer: a.Importer, Reads: a.Reads, Dismissals: a.Dismissals,
			Auth: a.Auth, Notify: a.Notify, Logger: a.Logger, Context: ctx,
			Metrics: a.Metrics.Handler(), MetricsPublic: cfg.MetricsPublic, TrustedProxies: cfg.TrustedProxies, AdvisoryLinks: a.Settings.AdvisoryLinks,
			LockfileDev: a.Settings.LockfileDev, SiteStaleAfter: cfg.SiteStaleAfter,
			Middleware: []echo.MiddlewareFunc{a.Metrics.HTTP()},
		}),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(a.Logger.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
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

// watchLockfile reads UPCHECK_LOCKFILE now, before the first check, and
// makes every check read it first (for whoever starts the check); the
// watcher it returns also reads it whenever it changes, once serve runs
// it. A bad lockfile must not take the site's update checks down with it:
// the components stay as stored and the error is loud.
func (a *App) watchLockfile(ctx context.Context) *lockfile.Watcher {
	path := a.Config.Lockfile
	opt := a.Settings.Lockfile
	w := lockfile.NewWatcher(path, opt, func(ctx context.Context, l *lockfile.Lockfile) error {
		// The tree's state is read after the file here: of two looks
		// in this process the later read wins (the watcher's rule); a
		// write of another instance in between refuses this one, and
		// the next look applies the file again.
		state, err := a.TreeSyncer.State(ctx, store.LocalSite)
		if err != nil {
			return err
		}
		rep, err := a.syncLocked(ctx, path, opt, l, state)
		if err == nil {
			a.Logger.InfoContext(ctx, "lockfile applied", "path", path, "components", rep.Components,
				"added", rep.Added, "changed", rep.Changed, "removed", rep.Removed, "reevaluated", rep.Reevaluated)
		}
		return err
	})
	_, err := w.Look(ctx)
	a.inputRead(ctx, readmodel.InputLockfile, path, err)
	a.Checker.BeforeEachCheck(func(ctx context.Context) error {
		_, err := w.Look(ctx)
		a.inputRead(ctx, readmodel.InputLockfile, path, err)
		return nil // said by inputRead; the check runs on the components as stored
	})
	return w
}
