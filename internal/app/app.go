// Package app is the composition root: it turns a Config into a running
// process — database, migrations, lease manager, fetcher, checker, reads,
// scheduler, HTTP server — and owns the order in which they start and stop.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/robfig/cron/v3"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/config"
	"github.com/upcheck/upcheck/internal/dev/devdb"
	"github.com/upcheck/upcheck/internal/feedsync"
	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/lockfile"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/metrics"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// ShutdownTimeout is how long in-flight requests get to finish after SIGTERM.
const ShutdownTimeout = 30 * time.Second

// App is the wired process: everything a command needs.
type App struct {
	Config config.Config
	// Settings are Config's domain values (SettingsFrom).
	Settings Settings
	Logger   *slog.Logger
	Pool     *pgxpool.Pool
	Store    *store.Store
	Lease    *lease.Manager
	Fetcher  *fetch.Fetcher
	Checker  *updatecheck.Checker
	Auth     *auth.Service
	Notify   *notify.Service
	Metrics  *metrics.Metrics
	Schedule cron.Schedule

	// Syncer and Importer write as Checker does (updatecheck.NewSyncer,
	// NewImporter); Reads are the process's reads of the read model, told
	// of every write, and Dismissals the admins' decisions about
	// advisories.
	Syncer   *updatecheck.Syncer
	Importer *updatecheck.Importer
	// TreeSyncer stores a lockfile's installed tree after Syncer synced
	// its components.
	TreeSyncer *updatecheck.TreeSyncer
	// Feeds syncs the advisory feeds (UPCHECK_FEEDS; the demo's own in
	// the demo): by every check that finds them due, and by `upcheck feed`.
	Feeds      *feedsync.Sync
	Reads      *catalog.Reads
	Dismissals *catalog.Dismissals

	// Npm is the checks' npm client: the registries of UPCHECK_NPMRC and
	// UPCHECK_NPM_REGISTRY, through Fetcher.
	Npm *npm.Client
}

// Open connects to the database (starting the private cluster when no URL is
// configured), applies migrations, and wires the lease manager, the fetcher
// and the checker. Close releases what it opened.
func Open(ctx context.Context, cfg config.Config, logger *slog.Logger) (*App, error) {
	return open(ctx, cfg, logger, false)
}

// startRetry is the pause between attempts to reach a database that is not
// up yet when serve starts.
const startRetry = 2 * time.Second

// LeaseTimings lays the durations UPCHECK_TEST_TIMINGS names over the
// lease's production timings and validates the result with the lease's
// rules. Every command calls it before it touches the database, so timings
// that cannot work stop the process at once, whatever the command.
func LeaseTimings(t config.Timings) (lease.Timings, error) {
	out := lease.DefaultTimings()
	set := func(to *time.Duration, named *time.Duration) {
		if named != nil {
			*to = *named
		}
	}
	set(&out.Lease, t.Lease)
	set(&out.Heartbeat, t.Heartbeat)
	set(&out.Cooldown, t.Cooldown)
	set(&out.Period, t.Period)
	set(&out.TxTimeout, t.TxTimeout)
	if err := out.Validate(); err != nil {
		return lease.Timings{}, fmt.Errorf("UPCHECK_TEST_TIMINGS: %w", err)
	}
	return out, nil
}

func open(ctx context.Context, cfg config.Config, logger *slog.Logger, waitForDatabase bool) (*App, error) {
	timings, err := LeaseTimings(cfg.Timings)
	if err != nil {
		return nil, err
	}
	if cfg.TestTimings {
		logger.WarnContext(ctx, "UPCHECK_TEST_TIMINGS is set: lease timings are shortened; never use this in production",
			"lease", timings.Lease, "heartbeat", timings.Heartbeat, "cooldown", timings.Cooldown)
	}
	settings, err := SettingsFrom(cfg)
	if err != nil {
		return nil, err
	}
	// Before the database: a broken .npmrc stops the process at once, its
	// error naming the file, the line and the problem (never a token).
	env := cfg.Env
	if env == nil {
		env = func(string) string { return "" }
	}
	regs, err := npm.LoadRegistries(cfg.NpmRegistry, cfg.Npmrc, env)
	if err != nil {
		return nil, err
	}
	if regs.Default != nil || len(regs.Scopes) > 0 {
		logger.InfoContext(ctx, "npm registries", "default", urlText(regs.Default), "scopes", len(regs.Scopes))
	}
	pool, err := OpenDatabase(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	a := &App{Config: cfg, Settings: settings, Logger: logger, Pool: pool, Store: store.New(pool),
		Npm: &npm.Client{Registries: regs, MaxDocument: settings.NpmMaxDocument}}
	if err := a.wire(ctx, timings, waitForDatabase); err != nil {
		pool.Close()
		return nil, err
	}
	return a, nil
}

// wire builds the services on the migrated database. timings are the
// lease's; their period follows the schedule unless UPCHECK_TEST_TIMINGS
// named one.
func (a *App) wire(ctx context.Context, timings lease.Timings, waitForDatabase bool) error {
	if err := a.migrate(ctx, waitForDatabase); err != nil {
		return err
	}
	spec, err := updatecheck.ResolveSchedule(ctx, a.Store, a.Config.CheckSchedule)
	if err != nil {
		return err
	}
	schedule, period, err := updatecheck.ParseSchedule(spec)
	if err != nil {
		return err
	}
	a.Schedule = schedule
	if a.Config.Timings.Period == nil {
		timings.Period = period
	}
	devMode := a.Settings.LockfileDev
	m := metrics.New(a.Store.SummaryReader(store.LocalSite, devMode), metrics.WithFeeds(a.Store.Feeds)) // uncached: database_up says what the database does now
	a.Metrics = m
	if a.Lease, err = lease.New(a.Store, timings, lease.WithLogger(a.Logger), lease.WithObserver(m)); err != nil {
		return err
	}
	a.Fetcher = fetch.New(fetch.Config{
		AllowPrivate: a.Config.AllowPrivateSources, UserAgent: "upcheck/" + a.Config.Version, Timeout: a.Config.FetchTimeout,
	}, a.Logger)
	a.Checker = updatecheck.New(a.Store, a.Lease, a.Fetcher, a.Logger)
	a.Npm.Fetcher = a.Fetcher
	a.Checker.UseNpm(a.Npm)
	if n := a.Config.NpmDependencyDocuments; n != nil {
		a.Checker.LimitDependencyDocuments(*n)
	}
	if n := a.Config.NpmChangeDocuments; n != nil {
		a.Checker.LimitChangeDocuments(*n)
	}
	a.Checker.Observe(m)
	a.Reads = catalog.New(a.Store, catalog.WithDevMode(devMode))
	a.Checker.TellReads(a.Reads)
	a.Syncer, a.Importer = updatecheck.NewSyncer(a.Checker), updatecheck.NewImporter(a.Checker)
	a.TreeSyncer = updatecheck.NewTreeSyncer(a.Checker)
	a.Feeds = updatecheck.NewFeeds(a.Checker, a.Settings.Feeds, a.Config.FeedDir)
	if len(a.Settings.Feeds) > 0 {
		a.Checker.UseFeeds(a.Feeds)
	}
	a.Dismissals = catalog.NewDismissals(a.Store, a.Reads)
	if err := a.wireNotify(m); err != nil {
		return err
	}
	a.Checker.TreeDevMode(a.Settings.LockfileDev)
	// A second of principal cache: a burst of requests with one session or
	// token costs one query; a logout or revocation elsewhere takes effect
	// within that second.
	authConfig := auth.Config{SecureCookie: a.Config.SecureCookies, PrincipalCacheTTL: time.Second}
	if a.Auth, err = auth.New(a.Store, authConfig, a.Logger); err != nil {
		return err
	}
	a.Logger.DebugContext(ctx, "wired", "schedule", spec, "period", timings.Period)
	return nil
}

// migrate migrates the database; with waitForDatabase, a database not
// up yet is waited for (a server started before its database: a reboot,
// an orchestrator starting everything at once) rather than exited on.
func (a *App) migrate(ctx context.Context, waitForDatabase bool) error {
	for {
		err := store.Migrate(ctx, a.Pool, a.Logger)
		if err == nil {
			return nil
		}
		if !waitForDatabase || !store.IsUnavailable(err) {
			return err
		}
		a.Logger.WarnContext(ctx, "database unavailable at start; retrying", "in", startRetry, "error", err)
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(startRetry):
		}
	}
}

// wireNotify builds the notifications, observed by m, and hands them to
// the checker. They are queued by every process that writes results
// (serve and `upcheck check`); only serve delivers them.
func (a *App) wireNotify(m *metrics.Metrics) error {
	nt := notify.DefaultTimings()
	if d := a.Config.Timings.Delivery; d != nil {
		nt.Delivery = *d
	}
	if d := a.Config.Timings.Backoff; d != nil {
		nt.Backoff = *d
	}
	var err error
	if a.Notify, err = notify.New(a.Pool, a.Store, a.Fetcher, nt, a.Logger, notify.WithSMTP(a.Config.SMTP), notify.WithPublicURL(a.Config.PublicURL)); err != nil {
		return err
	}
	a.Notify.Observe(m)
	a.Checker.NotifyWith(a.Notify)
	return nil
}

// Close releases the fetcher's connections and the pool.
func (a *App) Close() {
	a.Fetcher.Close()
	a.Pool.Close()
}

// SyncManifest loads the manifest at path and makes the installed components
// exactly its entries. A bad manifest changes nothing.
func (a *App) SyncManifest(ctx context.Context, path string) (updatecheck.SyncReport, error) {
	m, err := manifest.Load(path)
	if err != nil {
		return updatecheck.SyncReport{}, err
	}
	return a.Syncer.Sync(ctx, m)
}

// SyncLockfile reads the lockfile at path (package-lock.json or
// pnpm-lock.yaml) and makes the installed components exactly the packages
// opt chooses, as SyncManifest does a manifest's entries, then stores its
// installed tree and, when the tree changed, evaluates its findings
// (Checker.EvaluateTree). A bad lockfile changes nothing; its error names
// the file, the line and the field.
//
// The tree's state is read before the file: when another sync writes the
// tree between the two, this one's write is refused (store.ErrTreeMoved)
// and the state and the file are read again, a few times at most.
func (a *App) SyncLockfile(ctx context.Context, path string, opt lockfile.Options) (updatecheck.SyncReport, error) {
	for attempt := 1; ; attempt++ {
		state, err := a.TreeSyncer.State(ctx, store.LocalSite)
		if err != nil {
			return updatecheck.SyncReport{}, err
		}
		l, err := lockfile.Read(path, opt)
		if err != nil {
			return updatecheck.SyncReport{}, err
		}
		rep, err := a.syncLocked(ctx, path, opt, l, state)
		if errors.Is(err, store.ErrTreeMoved) && attempt < 3 {
			continue
		}
		return rep, err
	}
}

// syncLocked syncs l, the read of the lockfile at path: its components,
// then its installed tree, from the tree's state as read before the file
// was. Every set of components has a core (manifest's rule): a lockfile's
// is the package opt.Core names, and its absence is said in the
// lockfile's words.
func (a *App) syncLocked(ctx context.Context, path string, opt lockfile.Options, l *lockfile.Lockfile, state store.TreeState) (updatecheck.SyncReport, error) {
	m := l.Manifest
	if _, ok := m.Core(); !ok {
		if opt.Core == "" {
			return updatecheck.SyncReport{}, fmt.Errorf("%w: %s: no package is the core: name the core's package with --core or UPCHECK_LOCKFILE_CORE", lockfile.ErrInvalid, path)
		}
		return updatecheck.SyncReport{}, fmt.Errorf("%w: %s: the core %s is not installed at the top level", lockfile.ErrInvalid, path, opt.Core)
	}
	rep, err := a.Syncer.Sync(ctx, m)
	if err != nil {
		return rep, err
	}
	tree, err := a.TreeSyncer.Sync(ctx, updatecheck.TreeRead{Site: store.LocalSite, Path: path, FileHash: l.FileHash, Tree: l.Tree, Components: m, State: state})
	if err != nil {
		return rep, err
	}
	rep.Tree = &tree
	if !tree.Unchanged {
		// The changed tree's findings now, not at the next check: the
		// evaluation takes the lease as an import does, and leaves it to
		// the check or feed sync that holds it (which evaluates it, or
		// the next one does). The tree is stored either way: a failed
		// evaluation is said, and the next check evaluates it.
		if _, err := a.Checker.EvaluateTree(ctx); err != nil {
			a.Logger.WarnContext(ctx, "the installed tree's findings were not evaluated after the lockfile sync; the next check evaluates them",
				"path", path, "error", err)
		}
	}
	return rep, nil
}

// urlText is u as text, "" for none.
func urlText(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.String()
}

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
	// 503 at once instead of queueing behind dead connection attempts. A
	// connect_timeout in the URL (or PGCONNECT_TIMEOUT) wins: with several
	// hosts it bounds each host's attempt (docs/operations.md).
	if pcfg.ConnConfig.ConnectTimeout == 0 {
		pcfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	// pgxpool's default (4 on two cores) queues page and API requests behind
	// each other; a check's workers, the heartbeat and the web share these.
	if !strings.Contains(url, "pool_max_conns") {
		pcfg.MaxConns = 20
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return pool, nil
}

// Migrate applies pending migrations and returns.
func Migrate(ctx context.Context, cfg config.Config, logger *slog.Logger) error {
	if _, err := LeaseTimings(cfg.Timings); err != nil {
		return err // refused like every other command, although migrate takes no lease
	}
	pool, err := OpenDatabase(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer pool.Close()
	return store.Migrate(ctx, pool, logger)
}
