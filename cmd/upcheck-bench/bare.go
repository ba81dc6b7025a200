package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
)

// bareFetch fetches every source the check fetched with a bare fetcher:
// the same fetch package, its default concurrency and per-host limits, no
// database, no lease, no evaluation. Its wall time is what the check's
// fetching alone costs, the baseline of check_vs_bare.
func bareFetch(ctx context.Context, pubs *publishers) (time.Duration, error) {
	f := fetch.New(fetch.Config{AllowPrivate: true}, nil)
	defer f.Close()
	reqs := make([]fetch.Request, sources)
	for s := range sources {
		reqs[s] = fetch.Request{URL: fmt.Sprintf("%s/s%d.json", pubs.urls[s%hosts], s)}
	}
	var failed atomic.Int64
	start := time.Now()
	err := f.Run(ctx, reqs, func(_ context.Context, _ int, _ fetch.Response, err error) {
		if err != nil {
			failed.Add(1)
		}
	})
	wall := time.Since(start)
	if err != nil {
		return 0, err
	}
	if n := failed.Load(); n > 0 {
		return 0, fmt.Errorf("the bare fetcher failed %d of %d sources", n, sources)
	}
	return wall, nil
}
