package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/upcheck/upcheck/internal/dev/devdb"
	"github.com/upcheck/upcheck/internal/dev/lockgen"
	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// treePackages is the size of the bench's installed tree.
const treePackages = 3000

// treeSync measures the installed tree's sync (part 10): a lockfile of
// 3,000 installed packages (about 9,000 dependencies) written first, then
// synced again unchanged, then with 10 packages at another version. It
// reports each sync's wall time, the longest hold of the lease's lock, the
// unchanged sync's ratio to the first (target ≤ 0.02) and the process's
// peak RSS; then the real binary's lockfile sync of the same tree, first
// and unchanged, its wall time and peak RSS (target < 200 MiB).
func treeSync(ctx context.Context, binary string, cluster *devdb.Cluster) error {
	name := fmt.Sprintf("bench_tree_%d", time.Now().Unix())
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
	var holds lockHolds
	lm, err := lease.New(st, lease.DefaultTimings(), lease.WithLogger(quiet), lease.WithLockHeld(holds.held))
	if err != nil {
		return err
	}
	f := fetch.New(fetch.Config{}, quiet)
	defer f.Close()
	syncer := updatecheck.NewTreeSyncer(updatecheck.New(st, lm, f, quiet))
	if err := treeSyncs(ctx, syncer, &holds); err != nil {
		return err
	}
	if kib, ok := vmHWM(fmt.Sprintf("/proc/%d/status", os.Getpid())); ok {
		report("tree_bench_peak_rss", float64(kib)/1024, "MiB", "", nil)
	}
	return treeCLI(ctx, binary, cluster)
}

// lockHolds is the longest hold of the lease's lock since it was last
// taken.
type lockHolds struct {
	mu      sync.Mutex
	longest time.Duration
}

func (h *lockHolds) held(d time.Duration) {
	h.mu.Lock()
	h.longest = max(h.longest, d)
	h.mu.Unlock()
}

// take is the longest hold since the last take, and starts anew.
func (h *lockHolds) take() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := h.longest
	h.longest = 0
	return d
}

// treeSyncs syncs the bench's tree first, then unchanged (the median of
// five: a few milliseconds, which one pause of the machine would double),
// then with 10 packages moved, and reports each sync's wall time and
// longest lock hold and the unchanged sync's ratio to the first.
func treeSyncs(ctx context.Context, syncer *updatecheck.TreeSyncer, holds *lockHolds) error {
	comps := &manifest.Manifest{Components: []manifest.Component{{Code: "core", Name: lockgen.Name(0), Version: "1.0.0",
		Source: npm.Source(npm.Name(lockgen.Name(0)))}}}
	tr := lockgen.Tree(treePackages, "http://127.0.0.1:4873/")
	var unchanged []time.Duration
	walls := map[string]time.Duration{}
	for _, step := range []string{"tree_first_sync", "tree_unchanged_sync", "tree_unchanged_sync", "tree_unchanged_sync",
		"tree_unchanged_sync", "tree_unchanged_sync", "tree_10_changed_sync"} {
		if step == "tree_10_changed_sync" {
			lockgen.Bump(tr, 10)
		}
		lock, err := lockgen.PackageLock(tr, "bench-site")
		if err != nil {
			return err
		}
		holds.take()
		start := time.Now()
		state, err := syncer.State(ctx, store.LocalSite)
		if err != nil {
			return err
		}
		rep, err := syncer.Sync(ctx, updatecheck.TreeRead{Site: store.LocalSite, Path: "package-lock.json", FileHash: sha256.Sum256(lock), Tree: tr,
			Components: comps, State: state})
		if err != nil {
			return err
		}
		wall := time.Since(start)
		if step == "tree_unchanged_sync" {
			unchanged = append(unchanged, wall)
			if len(unchanged) < 5 {
				continue
			}
			slices.Sort(unchanged)
			wall = unchanged[2]
		}
		walls[step] = wall
		hold := holds.take()
		if want := step == "tree_unchanged_sync"; rep.Unchanged != want {
			return fmt.Errorf("%s: unchanged %v, want %v", step, rep.Unchanged, want)
		}
		report(step+"_wall", wall.Seconds()*1000, "ms", "", nil)
		report(step+"_lock_hold", hold.Seconds()*1000, "ms", "", nil)
		if step == "tree_first_sync" {
			report("tree_lockfile_bytes", float64(len(lock)), "B", "", nil)
			report("tree_edges", float64(len(tr.Edges)), "", "", nil)
		}
	}
	ratio := walls["tree_unchanged_sync"].Seconds() / walls["tree_first_sync"].Seconds()
	report("tree_unchanged_ratio", ratio, "x first", "<= 0.02", yes(ratio <= 0.02))
	return nil
}

// treeCLI runs the real binary's lockfile sync (`upcheck components sync
// --lockfile`) of the same 3,000 packages, in a database of its own: the
// first sync (the components, then the tree) and the same again, each its
// wall time (the process's start included) and peak RSS.
func treeCLI(ctx context.Context, binary string, cluster *devdb.Cluster) error {
	name := fmt.Sprintf("bench_tree_cli_%d", time.Now().Unix())
	if err := cluster.CreateDatabase(ctx, name); err != nil {
		return err
	}
	defer dropDatabase(cluster, name)
	dir, err := os.MkdirTemp("", "upcheck-bench-tree-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	lock := filepath.Join(dir, "package-lock.json")
	body, err := lockgen.PackageLock(lockgen.Tree(treePackages, "http://127.0.0.1:4873/"), "bench-site")
	if err != nil {
		return err
	}
	if err := os.WriteFile(lock, body, 0o644); err != nil {
		return err
	}
	env := []string{"UPCHECK_DATABASE_URL=" + cluster.URL(name), "UPCHECK_LOG_LEVEL=WARN", "UPCHECK_NPM_REGISTRY=http://127.0.0.1:4873/",
		"PATH=" + os.Getenv("PATH")}
	if out, err := command(binary, env, "", "migrate").CombinedOutput(); err != nil {
		return fmt.Errorf("upcheck migrate: %v\n%s", err, out)
	}
	for _, step := range []string{"tree_cli_first_sync", "tree_cli_unchanged_sync"} {
		cmd := command(binary, env, "", "components", "sync", "--lockfile", lock, "--core", lockgen.Name(0))
		start := time.Now()
		out, rss, err := peakRSS(cmd)
		if err != nil {
			return fmt.Errorf("%s: %v\n%s", step, err, out)
		}
		report(step+"_wall", time.Since(start).Seconds()*1000, "ms", "", nil)
		mib := float64(rss) / 1024
		report(step+"_peak_rss", mib, "MiB", "< 200", yes(mib < 200))
	}
	return nil
}
