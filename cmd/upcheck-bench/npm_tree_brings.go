package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/upcheck/upcheck/internal/dev/devdb"
	"github.com/upcheck/upcheck/internal/dev/npmreg"
	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/tree"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// treeChanges is how many of the registry's packages the bench's
// lockfile change moves to their latest version: the check's default
// bound of changed packages' documents (updatecheck.DefaultChangeDocuments).
const treeChanges = updatecheck.DefaultChangeDocuments

// npmTreeBrings measures what reading what a lockfile change brought adds
// to part 8's first check (docs/npm.md "What a lockfile change
// brought"): in a database of its own whose installed tree holds the
// registry's packages at their installed versions, then, synced again,
// treeChanges of them at their latest (each a change the check reads:
// its document fetched again whole, its added dependencies through the
// check's dependency documents), the first check with
// UPCHECK_NPM_CHANGE_DOCUMENTS=0 (no change read: each said not read) and
// without it, alternating: npm_tree_brings_vs_check is what the fastest
// with them takes more than the fastest without, over the latter; the
// fastest of each.
func npmTreeBrings(ctx context.Context, binary string, cluster *devdb.Cluster, reg *registry, prefix string) error {
	first := func(name string, extra ...string) (time.Duration, error) {
		env, done, err := npmDatabase(ctx, binary, cluster, reg, prefix+name)
		if err != nil {
			return 0, err
		}
		defer done()
		if err := benchTreeChange(ctx, env, reg); err != nil {
			return 0, err
		}
		res, _, err := check(binary, append(env, extra...))
		if err != nil {
			return 0, err
		}
		if res.Fetched != npmreg.SizedPackages {
			return 0, fmt.Errorf("the npm check %s fetched %d of %d packages: %+v", name, res.Fetched, npmreg.SizedPackages, res)
		}
		return time.Duration(res.DurationMS) * time.Millisecond, nil
	}
	var with, without time.Duration
	for _, run := range []struct {
		name  string
		extra []string
	}{{"nochanges1_", []string{"UPCHECK_NPM_CHANGE_DOCUMENTS=0"}}, {"changes1_", nil}, {"nochanges2_", []string{"UPCHECK_NPM_CHANGE_DOCUMENTS=0"}},
		{"changes2_", nil}} {
		d, err := first(run.name, run.extra...)
		if err != nil {
			return err
		}
		if run.extra == nil {
			with = minDuration(with, d)
		} else {
			without = minDuration(without, d)
		}
	}
	report(prefix+"tree_brings_check_wall_fastest", with.Seconds(), "s", "", nil)
	report(prefix+"tree_brings_check_without_wall_fastest", without.Seconds(), "s", "", nil)
	ratio := (with - without).Seconds() / without.Seconds()
	report(prefix+"tree_brings_vs_check", ratio, "added/check", "", nil)
	return nil
}

// minDuration is the smaller of a and b, b when a is 0 (none yet).
func minDuration(a, b time.Duration) time.Duration {
	if a == 0 {
		return b
	}
	return min(a, b)
}

// benchTreeChange stores, in the database of env, the installed tree of
// the registry's packages at their installed versions, then again with
// treeChanges of them (those whose latest is another version) at their
// latest, as two lockfile syncs would.
func benchTreeChange(ctx context.Context, env []string, reg *registry) error {
	url := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "UPCHECK_DATABASE_URL="); ok {
			url = v
		}
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	quiet := slog.New(slog.DiscardHandler)
	st := store.New(pool)
	lm, err := lease.New(st, lease.DefaultTimings(), lease.WithLogger(quiet))
	if err != nil {
		return err
	}
	f := fetch.New(fetch.Config{}, quiet)
	defer f.Close()
	syncer := updatecheck.NewTreeSyncer(updatecheck.New(st, lm, f, quiet))
	write := func(changed int) error {
		t := &tree.Tree{}
		moved := 0
		for _, d := range reg.docs {
			if d.Dependency {
				continue
			}
			v := d.Installed
			if moved < changed && d.Latest != d.Installed && d.Name != npmreg.SizedCore {
				v, moved = d.Latest, moved+1
			}
			id := "node_modules/" + d.Name
			t.Packages = append(t.Packages, tree.Package{ID: id, Name: d.Name, Version: v, Source: tree.SourceRegistry})
			t.Edges = append(t.Edges, tree.Edge{From: tree.Root, Name: d.Name, Range: "^" + v, Kind: tree.KindProd, To: id})
		}
		t.Sort()
		state, err := syncer.State(ctx, store.LocalSite)
		if err != nil {
			return err
		}
		_, err = syncer.Sync(ctx, updatecheck.TreeRead{Site: store.LocalSite, Path: "/bench/package-lock.json", FileHash: t.Hash(), Tree: t, State: state})
		return err
	}
	if err := write(0); err != nil {
		return err
	}
	return write(treeChanges)
}
