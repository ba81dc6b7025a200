package main

import (
	"context"
	"fmt"
	"time"

	"github.com/upcheck/upcheck/internal/dev/devdb"
	"github.com/upcheck/upcheck/internal/dev/npmreg"
)

// npmBrings measures what the diff of the offered updates adds to part
// 8's first check (docs/npm.md "What an update brings"): the same first
// check, each in a database of its own, with
// UPCHECK_NPM_DEPENDENCY_DOCUMENTS=0 (no added dependency's document
// fetched) and without it, alternating, beside the round's first check
// (wall): npm_brings_vs_check is what the fastest with them takes more
// than the fastest without, over the latter (target at most 0.10); the
// fastest of each, as the machine's other load only ever adds. The
// documents the bench's registry serves add, over the 450 offered
// updates, some tens of distinct dependencies
// (npmreg.GenerateDependency), each served, each fetched once.
func npmBrings(ctx context.Context, binary string, cluster *devdb.Cluster, reg *registry, wall time.Duration, prefix string) error {
	report(prefix+"brings_dependency_documents", float64(reg.DependencyAnswered.Load()), "documents", "", nil)
	first := func(name string, extra ...string) (time.Duration, error) {
		env, done, err := npmDatabase(ctx, binary, cluster, reg, prefix+name)
		if err != nil {
			return 0, err
		}
		defer done()
		before := reg.DependencyAnswered.Load() + reg.DependencyNotModified.Load()
		res, _, err := check(binary, append(env, extra...))
		if err != nil {
			return 0, err
		}
		if res.Fetched != npmreg.SizedPackages {
			return 0, fmt.Errorf("the npm check %s fetched %d of %d packages: %+v", name, res.Fetched, npmreg.SizedPackages, res)
		}
		asked := reg.DependencyAnswered.Load() + reg.DependencyNotModified.Load() - before
		if (len(extra) > 0) != (asked == 0) {
			return 0, fmt.Errorf("the npm check %s asked for %d dependency documents", name, asked)
		}
		return time.Duration(res.DurationMS) * time.Millisecond, nil
	}
	with, without := wall, time.Duration(0)
	for _, run := range []struct {
		name  string
		extra []string
	}{{"nodeps1_", []string{"UPCHECK_NPM_DEPENDENCY_DOCUMENTS=0"}}, {"deps2_", nil}, {"nodeps2_", []string{"UPCHECK_NPM_DEPENDENCY_DOCUMENTS=0"}}} {
		d, err := first(run.name, run.extra...)
		if err != nil {
			return err
		}
		switch {
		case run.extra == nil:
			with = min(with, d)
		case without == 0:
			without = d
		default:
			without = min(without, d)
		}
	}
	report(prefix+"brings_check_wall_fastest", with.Seconds(), "s", "", nil)
	report(prefix+"brings_check_without_dependencies_wall_fastest", without.Seconds(), "s", "", nil)
	ratio := (with - without).Seconds() / without.Seconds()
	report(prefix+"brings_vs_check", ratio, "added/check", "<= 0.10", yes(ratio <= 0.10))
	return nil
}
