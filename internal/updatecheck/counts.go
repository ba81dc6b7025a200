package updatecheck

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/upcheck/upcheck/internal/store"
)

// The fleet's counts of each site's components (fleet_site_components,
// docs/design.md "The fleet") follow no write by themselves: the check's
// fenced result writes, serialised by the lease's lock, gain no trigger
// and no count. An operation that changes a site's components, their
// results or what was decided of them notes the site (countsDue), and when
// the outermost operation ends (withCounts' done: a check, a push, a sync,
// a feed sync, an import, a skip, an approval, a re-offer) every site
// noted is counted once, many in one statement
// (store.Store.RefreshSiteComponentCounts), after the writes committed.

type countsKey struct{}

// dueSites are the sites whose counts an operation's writes changed.
type dueSites struct {
	mu  sync.Mutex
	ids map[int64]struct{}
}

// countsDue notes that the component counts of sites are due, refreshed
// when the operation of ctx ends. Outside one (no withCounts) it notes
// nothing: every operation that writes components or their results starts
// with withCounts.
func countsDue(ctx context.Context, sites ...int64) {
	d, ok := ctx.Value(countsKey{}).(*dueSites)
	if !ok {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, id := range sites {
		d.ids[id] = struct{}{}
	}
}

// countsRefreshTimeout bounds the refresh at an operation's end, which
// runs even when the operation's context ended (a check that lost its
// lease wrote what it wrote): 10,000 sites take about a second.
const countsRefreshTimeout = 30 * time.Second

// withCounts returns ctx noting the sites whose counts are due, and done,
// which counts them once each, then tells the reads. Inside an operation
// that notes them already (a feed sync inside a check, a skip's
// evaluation inside a sync) it returns that one's ctx and a done that
// does nothing: the outer one counts at its end, once.
func (w *writer) withCounts(ctx context.Context) (context.Context, func()) {
	if _, ok := ctx.Value(countsKey{}).(*dueSites); ok {
		return ctx, func() {}
	}
	d := &dueSites{ids: map[int64]struct{}{}}
	return context.WithValue(ctx, countsKey{}, d), func() {
		d.mu.Lock()
		ids := slices.Sorted(maps.Keys(d.ids))
		d.mu.Unlock()
		if len(ids) == 0 {
			return
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), countsRefreshTimeout)
		defer cancel()
		start := time.Now()
		if err := w.store.RefreshSiteComponentCounts(rctx, ids); err != nil {
			// Derived counts: the operation's writes stand; the site's
			// next refresh counts them.
			w.logger.WarnContext(ctx, "count the sites' components", "sites", len(ids), "error", err)
			return
		}
		w.reads.Changed()
		w.logger.DebugContext(ctx, "sites' components counted", "sites", len(ids), "duration_ms", time.Since(start).Milliseconds())
	}
}

// sitesOf are the sites of components.
func sitesOf(components []store.Component) []int64 {
	out := make([]int64, len(components))
	for i, c := range components {
		out[i] = c.Site
	}
	return out
}
