package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/upcheck/upcheck/internal/dev/devdb"
	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

const (
	syncSources   = 100
	syncPerSource = 100 // 10,000 components
)

// syncHolds measures a manifest sync of 10,000 components whose sources'
// documents are stored: the first sync adds and evaluates them all, the
// second upgrades the core, which makes every result stale and evaluates
// them all again. It reports each sync's wall time and the longest time any
// transaction held the lease's lock: every renewal and fenced write waits
// that long.
func syncHolds(ctx context.Context, cluster *devdb.Cluster) error {
	name := fmt.Sprintf("bench_sync_%d", time.Now().Unix())
	if err := cluster.CreateDatabase(ctx, name); err != nil {
		return err
	}
	defer dropDatabase(cluster, name)
	pool, err := pgxpool.New(ctx, cluster.URL(name))
	if err != nil {
		return err
	}
	defer pool.Close()
	quiet := slog.New(slog.DiscardHandler)
	if err := store.Migrate(ctx, pool, quiet); err != nil {
		return err
	}
	st := store.New(pool)
	var mu sync.Mutex
	var longest time.Duration
	lm, err := lease.New(st, lease.DefaultTimings(), lease.WithLogger(quiet), lease.WithLockHeld(func(d time.Duration) {
		mu.Lock()
		longest = max(longest, d)
		mu.Unlock()
	}))
	if err != nil {
		return err
	}
	if err := storeSyncDocuments(ctx, lm); err != nil {
		return err
	}
	f := fetch.New(fetch.Config{}, quiet)
	defer f.Close()
	syncer := updatecheck.NewSyncer(updatecheck.New(st, lm, f, quiet))

	for _, step := range []struct{ name, core string }{{"sync_add", "1.0.0"}, {"sync_core_upgrade", "2.0.0"}} {
		mu.Lock()
		longest = 0
		mu.Unlock()
		start := time.Now()
		rep, err := syncer.Sync(ctx, syncManifest(step.core))
		if err != nil {
			return err
		}
		wall := time.Since(start)
		if rep.Reevaluated != syncSources*syncPerSource+1 {
			return fmt.Errorf("%s evaluated %d components, want %d", step.name, rep.Reevaluated, syncSources*syncPerSource+1)
		}
		mu.Lock()
		hold := longest
		mu.Unlock()
		report(step.name+"_wall", wall.Seconds(), "s", "", nil)
		report(step.name+"_lock_hold_max", hold.Seconds()*1000, "ms", "<= 50", yes(hold <= 50*time.Millisecond))
	}
	return nil
}

// storeSyncDocuments stores one document per source, as a check would.
func storeSyncDocuments(ctx context.Context, lm *lease.Manager) error {
	acq, err := lm.Acquire(ctx, lease.Operator)
	if err != nil || acq.Outcome != lease.Acquired {
		return fmt.Errorf("acquire for the sync benchmark: %v %v", acq.Outcome, err)
	}
	defer lm.Release(ctx, acq.Lease.Owner, false)
	for s := range syncSources {
		var pkgs []string
		if s == 0 {
			pkgs = append(pkgs, `"core": {"releases": [{"version": "2.0.0"}]}`)
		}
		for c := range syncPerSource {
			pkgs = append(pkgs, fmt.Sprintf(`"s%d-%d": {"releases": [{"version": "1.0.0"},
				{"version": "1.1.0", "requires_core": ">=2.0.0", "security": %v, "summary": "Fixes things"}],
				"advisories": [{"id": "S-%d-%d", "severity": "high", "affected": "<1.1.0", "fixed_in": "1.1.0"}]}`, s, c, c%3 == 0, s, c))
		}
		doc := fmt.Sprintf(`{"format": 1, "publisher": "bench", "sequence": 1, "packages": {%s}}`, strings.Join(pkgs, ","))
		err := lm.WithLease(ctx, acq.Lease.Owner, func(tx *store.Tx) error {
			_, err := tx.SourceSaveDocument(ctx, store.SourceDocument{URL: syncSourceURL(s), Document: []byte(doc),
				Sequence: 1, SignatureState: string(readmodel.TrustUnsigned), Epoch: acq.Lease.Epoch})
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func syncSourceURL(s int) string { return fmt.Sprintf("https://bench-%d.example/updates.json", s) }

func syncManifest(core string) *manifest.Manifest {
	m := &manifest.Manifest{Components: []manifest.Component{{Code: "core", Name: "Core", Version: core, Source: syncSourceURL(0)}}}
	for s := range syncSources {
		for c := range syncPerSource {
			code := fmt.Sprintf("s%d-%d", s, c)
			m.Components = append(m.Components, manifest.Component{Code: code, Name: code, Version: "1.0.0", Source: syncSourceURL(s)})
		}
	}
	return m
}
