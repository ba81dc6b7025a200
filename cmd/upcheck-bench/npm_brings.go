package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/npmver"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// npmBrings measures, beside part 8's first check (wall, of the same
// run), what the diff of every offered update adds to it (docs/npm.md
// "What an update brings"), an upper bound: the CPU of decoding the 500
// documents keeping the manifests of the installed and newer versions
// and diffing the latest against the installed, less the CPU of decoding
// them keeping nothing, both one document at a time (the check decodes
// on several workers), plus the wall of fetching the added dependencies'
// documents (each once, at most updatecheck.MaxDependencyDocuments) with
// the check's fetcher defaults. npm_brings_vs_check is that over the
// check's wall: the target is at most 0.10.
func npmBrings(ctx context.Context, reg *registry, wall time.Duration, prefix string) error {
	decode := func(keep func(d int) npm.KeepDependencies, diff bool) (time.Duration, map[string]bool, error) {
		added := map[string]bool{}
		start := time.Now()
		for i, d := range reg.docs {
			zr, err := gzip.NewReader(bytes.NewReader(d.Gzipped))
			if err != nil {
				return 0, nil, err
			}
			pkg, err := npm.DecodePackageKeeping(zr, npm.DefaultMaxDocument, keep(i))
			if err != nil {
				return 0, nil, fmt.Errorf("%s: %w", d.Name, err)
			}
			if !diff || d.Installed == d.Latest {
				continue
			}
			if b, ok := npm.Diff(pkg, d.Installed, d.Latest); ok {
				for _, a := range b.Added {
					if npm.SourceOf(a.Spec) == "" {
						added[a.Name] = true
					}
				}
			}
		}
		return time.Since(start), added, nil
	}
	plain, _, err := decode(func(int) npm.KeepDependencies { return nil }, false)
	if err != nil {
		return err
	}
	kept, added, err := decode(func(i int) npm.KeepDependencies {
		floor, err := npmver.Parse(reg.docs[i].Installed)
		return func(v string) bool {
			p, perr := npmver.Parse(v)
			return err == nil && perr == nil && !p.LessThan(floor)
		}
	}, true)
	if err != nil {
		return err
	}
	regs, err := npm.LoadRegistries(reg.url, "", func(string) string { return "" })
	if err != nil {
		return err
	}
	var reqs []fetch.Request
	for name := range added {
		if len(reqs) == updatecheck.MaxDependencyDocuments {
			break
		}
		u, err := regs.PackageURL(npm.Name(name))
		if err != nil {
			return err
		}
		reqs = append(reqs, fetch.Request{URL: u.String(), Accept: "application/json", MaxBody: npm.DefaultMaxDocument,
			Consume: func(r io.Reader) error { _, err := io.Copy(io.Discard, r); return err }})
	}
	f := fetch.New(fetch.Config{AllowPrivate: true}, nil)
	defer f.Close()
	var answered atomic.Int64
	start := time.Now()
	if err := f.Run(ctx, reqs, func(context.Context, int, fetch.Response, error) { answered.Add(1) }); err != nil {
		return err
	}
	deps := time.Since(start)
	report(prefix+"brings_decode_added", (kept - plain).Seconds(), "s", "", nil)
	report(prefix+"brings_dependencies", float64(len(added)), "packages", "", nil)
	report(prefix+"brings_dependency_fetch_wall", deps.Seconds(), "s", "", nil)
	ratio := ((kept - plain) + deps).Seconds() / wall.Seconds()
	report(prefix+"brings_vs_check", ratio, "added/check", "<= 0.10", yes(ratio <= 0.10))
	return nil
}
