package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/upcheck/upcheck/internal/dev/devdb"
	"github.com/upcheck/upcheck/internal/dev/npmreg"
	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/npm"
)

// npmCheck is part 8: a check of npmreg.SizedPackages npm components (one of them
// the core) by the real binary against the loopback registry, timed
// against a bare fetcher of the same URLs with the same concurrency in the
// same run; the check process's peak RSS with the 40 MB document and the
// ten 5 MB ones among them; then the same check answered by 304s. Then the
// same first check again with the registry sending every document
// uncompressed (npm_plain_*), as some registries and proxies do. Each
// round has a database of its own.
func npmCheck(ctx context.Context, binary string, cluster *devdb.Cluster) error {
	start := time.Now()
	reg, err := startRegistry(npmreg.SizedPackages)
	if err != nil {
		return err
	}
	defer reg.close()
	var raw, gz, largest int
	for _, d := range reg.docs {
		raw, gz, largest = raw+d.Raw, gz+len(d.Gzipped), max(largest, d.Raw)
	}
	report("npm_docs", float64(len(reg.docs)), "documents", "", nil)
	report("npm_docs_bytes", float64(raw)/(1<<20), "MiB", "", nil)
	report("npm_docs_gzip_bytes", float64(gz)/(1<<20), "MiB", "", nil)
	report("npm_docs_largest", float64(largest)/(1<<20), "MiB", "", nil)
	report("npm_docs_generated_in", time.Since(start).Seconds(), "s", "", nil)

	if err := npmRound(ctx, binary, cluster, reg, "npm_"); err != nil {
		return err
	}
	reg.Plain.Store(true)
	defer reg.Plain.Store(false)
	return npmRound(ctx, binary, cluster, reg, "npm_plain_")
}

// npmRound is one round of part 8 in a database of its own, its figures
// named with prefix: the first check against the bare fetcher, its CPU
// time and peak RSS; then, with gzip only (the 304s send no body either
// way), what the diff of the offered updates adds (npmBrings) and the
// all-304 check.
func npmRound(ctx context.Context, binary string, cluster *devdb.Cluster, reg *registry, prefix string) error {
	env, done, err := npmDatabase(ctx, binary, cluster, reg, prefix)
	if err != nil {
		return err
	}
	defer done()
	reg.SentBytes.Swap(0)
	res, rss, err := check(binary, env)
	if err != nil {
		return err
	}
	if res.Fetched != npmreg.SizedPackages {
		return fmt.Errorf("the first npm check fetched %d of %d packages: %+v (the registry answered %d documents)",
			res.Fetched, npmreg.SizedPackages, res, reg.Answered.Load())
	}
	wall := time.Duration(res.DurationMS) * time.Millisecond
	report(prefix+"check_wall", wall.Seconds(), "s", "", nil)
	report(prefix+"check_bytes", float64(reg.SentBytes.Swap(0))/(1<<20), "MiB", "", nil)
	bare, err := npmBareFetch(ctx, reg, prefix)
	if err != nil {
		return err
	}
	reg.SentBytes.Swap(0)
	report(prefix+"bare_fetch_wall", bare.Seconds(), "s", "", nil)
	vsBare := bare.Seconds() / wall.Seconds()
	report(prefix+"check_vs_bare", vsBare, "bare/check", ">= 0.95", yes(vsBare >= 0.95))
	report(prefix+"check_cpu", res.cpu.Seconds(), "s", "", nil)
	report(prefix+"check_peak_rss", float64(rss)/1024, "MiB", "< 150", yes(rss < 150<<10))
	if reg.Plain.Load() {
		return nil
	}
	if err := npmBrings(ctx, binary, cluster, reg, wall, prefix); err != nil {
		return err
	}
	if err := npmTreeBrings(ctx, binary, cluster, reg, prefix); err != nil {
		return err
	}

	reg.SentBytes.Swap(0) // npmBrings's own check sent the documents again
	before, depsBefore := reg.NotModified.Load(), reg.DependencyNotModified.Load()
	depsAnswered := reg.DependencyAnswered.Load()
	res304, rss304, err := check(binary, env)
	if err != nil {
		return err
	}
	report(prefix+"check304_wall", float64(res304.DurationMS)/1000, "s", "", nil)
	report(prefix+"check304_not_modified", float64(res304.NotModified), "packages", fmt.Sprint(npmreg.SizedPackages),
		yes(res304.NotModified == npmreg.SizedPackages))
	report(prefix+"check304_registry_304s", float64(reg.NotModified.Load()-before), "answers", "", nil)
	report(prefix+"check304_dependency_304s", float64(reg.DependencyNotModified.Load()-depsBefore), "answers", "", nil)
	report(prefix+"check304_dependency_200s", float64(reg.DependencyAnswered.Load()-depsAnswered), "answers", "", nil)
	report(prefix+"check304_bytes", float64(reg.SentBytes.Swap(0)), "B", "", nil)
	report(prefix+"check304_cpu", res304.cpu.Seconds(), "s", "", nil)
	report(prefix+"check304_peak_rss", float64(rss304)/1024, "MiB", "< 150", yes(rss304 < 150<<10))
	return nil
}

// npmDatabase makes a database of its own for a round of part 8 (named
// with prefix), with the registry's packages as its components, and
// returns the environment of the binary's commands on it and what drops
// it.
func npmDatabase(ctx context.Context, binary string, cluster *devdb.Cluster, reg *registry, prefix string) ([]string, func(), error) {
	name := fmt.Sprintf("bench_%s%d", prefix, time.Now().Unix())
	if err := cluster.CreateDatabase(ctx, name); err != nil {
		return nil, nil, err
	}
	url := cluster.URL(name)
	dir, err := os.MkdirTemp("", "upcheck-bench-npm-")
	if err != nil {
		return nil, nil, err
	}
	done := func() {
		os.RemoveAll(dir)
		if !keep {
			dropDatabase(cluster, name)
		}
	}
	if keep {
		fmt.Println("database", url)
	}
	manifest := filepath.Join(dir, "manifest.json")
	if err := os.WriteFile(manifest, reg.manifest(), 0o644); err != nil {
		done()
		return nil, nil, err
	}
	env := []string{
		"UPCHECK_DATABASE_URL=" + url, "UPCHECK_MANIFEST=" + manifest, "UPCHECK_ALLOW_PRIVATE_SOURCES=1",
		"UPCHECK_NPM_REGISTRY=" + reg.url,
		"UPCHECK_LOG_LEVEL=WARN", "UPCHECK_LISTEN=127.0.0.1:0", "PATH=" + os.Getenv("PATH"),
	}
	for _, args := range [][]string{{"migrate"}, {"components", "sync"}} {
		if out, err := command(binary, env, "", args...).CombinedOutput(); err != nil {
			done()
			return nil, nil, fmt.Errorf("upcheck %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return env, done, nil
}

// npmBareFetch fetches every package document the check fetched with a
// bare fetcher: the fetch package with the check's defaults (concurrency,
// per-host limit, the npm client's cap and Accept), the URLs npm's
// registry settings give, each body decompressed (gzip, as the check
// accepts it) and discarded: no decoding, no database, no lease, no
// evaluation. The baseline of npm_check_vs_bare (prefix names its
// figures).
func npmBareFetch(ctx context.Context, reg *registry, prefix string) (time.Duration, error) {
	regs, err := npm.LoadRegistries(reg.url, "", func(string) string { return "" })
	if err != nil {
		return 0, err
	}
	reqs := make([]fetch.Request, len(reg.docs))
	var read atomic.Int64
	for i, d := range reg.docs {
		u, err := regs.PackageURL(npm.Name(d.Name))
		if err != nil {
			return 0, err
		}
		reqs[i] = fetch.Request{URL: u.String(), Accept: "application/json", MaxBody: npm.DefaultMaxDocument,
			Consume: func(r io.Reader) error {
				n, err := io.Copy(io.Discard, r)
				read.Add(n)
				return err
			}}
	}
	f := fetch.New(fetch.Config{AllowPrivate: true}, nil)
	defer f.Close()
	var failed atomic.Int64
	var firstErr atomic.Value
	start := time.Now()
	err = f.Run(ctx, reqs, func(_ context.Context, _ int, _ fetch.Response, err error) {
		if err != nil {
			failed.Add(1)
			firstErr.CompareAndSwap(nil, err)
		}
	})
	wall := time.Since(start)
	if err != nil {
		return 0, err
	}
	if n := failed.Load(); n > 0 {
		return 0, fmt.Errorf("the bare fetcher failed %d of %d packages: %v", n, len(reqs), firstErr.Load())
	}
	report(prefix+"bare_decoded_bytes", float64(read.Load())/(1<<20), "MiB", "", nil)
	return wall, nil
}
