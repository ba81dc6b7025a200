package main

import (
	"context"
	"fmt"
	"time"

	"github.com/upcheck/upcheck/internal/dev/devdb"
	"github.com/upcheck/upcheck/internal/dev/npmreg"
)

// npmBrings measures what the diff of the offered updates adds to part
// 8's first check (wall, of the same run; docs/npm.md "What an update
// brings"): the same first check, in a database of its own, with
// UPCHECK_NPM_DEPENDENCY_DOCUMENTS=0 (no added dependency's document
// fetched) is the check without the dependencies' documents;
// npm_brings_vs_check is what the check with them takes more, over it
// (target at most 0.10). The documents the bench's registry serves add,
// over the 450 offered updates, some tens of distinct dependencies
// (npmreg.GenerateDependency), each served, each fetched once.
func npmBrings(ctx context.Context, binary string, cluster *devdb.Cluster, reg *registry, wall time.Duration, prefix string) error {
	report(prefix+"brings_dependency_documents", float64(reg.DependencyAnswered.Load()), "documents", "", nil)
	env, done, err := npmDatabase(ctx, binary, cluster, reg, prefix+"nodeps_")
	if err != nil {
		return err
	}
	defer done()
	before := reg.DependencyAnswered.Load() + reg.DependencyNotModified.Load()
	res, _, err := check(binary, append(env, "UPCHECK_NPM_DEPENDENCY_DOCUMENTS=0"))
	if err != nil {
		return err
	}
	if res.Fetched != npmreg.SizedPackages {
		return fmt.Errorf("the npm check without dependencies fetched %d of %d packages: %+v", res.Fetched, npmreg.SizedPackages, res)
	}
	if n := reg.DependencyAnswered.Load() + reg.DependencyNotModified.Load() - before; n != 0 {
		return fmt.Errorf("the npm check without dependencies asked for %d of their documents", n)
	}
	without := time.Duration(res.DurationMS) * time.Millisecond
	report(prefix+"brings_check_without_dependencies_wall", without.Seconds(), "s", "", nil)
	ratio := (wall - without).Seconds() / without.Seconds()
	report(prefix+"brings_vs_check", ratio, "added/check", "<= 0.10", yes(ratio <= 0.10))
	return nil
}
