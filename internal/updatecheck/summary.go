package updatecheck

import (
	"context"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// reads are the process's cached reads of the read model (readcache.go)
// and the schedule its summary reports.
type reads struct {
	summary readCache[readmodel.Summary]
	catalog readCache[*store.CatalogSnapshot]

	mu sync.Mutex
	// schedule is the schedule this process runs (Scheduler.Run), for
	// next_check_at; nil while none runs.
	schedule cron.Schedule
}

// invalidate drops every cached read: this process has just written.
func (rs *reads) invalidate() {
	rs.summary.invalidate()
	rs.catalog.invalidate()
}

// scheduled records the schedule this process runs (nil: none any more).
func (rs *reads) scheduled(s cron.Schedule) {
	rs.mu.Lock()
	rs.schedule = s
	rs.mu.Unlock()
}

// withNextCheck fills in when the schedule this process runs fires next,
// on the process's clock: a fact of the process, not of the database, so
// it is added to every copy handed out rather than cached.
func (rs *reads) withNextCheck(v readmodel.Summary) readmodel.Summary {
	rs.mu.Lock()
	s := rs.schedule
	rs.mu.Unlock()
	v.NextCheckAt = nil
	if s != nil {
		if next := s.Next(time.Now().UTC()); !next.IsZero() {
			next = next.UTC()
			v.NextCheckAt = &next
		}
	}
	return v
}

// Summary is the stored summary, cached as readcache.go says and read by
// one query at a time however many requests ask, with when this process's
// schedule runs the next check. It never fetches.
func (c *Checker) Summary(ctx context.Context) (readmodel.Summary, error) {
	v, err := c.reads.summary.get(ctx, func(ctx context.Context) (readmodel.Summary, error) {
		return ReadSummary(ctx, c.store)
	}, nil)
	if err != nil {
		return readmodel.Summary{}, err
	}
	return c.reads.withNextCheck(v), nil
}

// CatalogSnapshot is the whole catalog, cached like the summary, for
// pages to filter and page without reading a row
// (store.CatalogSnapshot.Page). Past its 500 ms the snapshot is read again
// only if a write or the clock changed what it says (one row asks). A
// caller must not keep it: each request asks again.
func (c *Checker) CatalogSnapshot(ctx context.Context) (*store.CatalogSnapshot, error) {
	return c.reads.catalog.get(ctx, c.store.CatalogSnapshot, c.store.CatalogSnapshotHolds)
}

// ReadSummary reads the summary from the database, bypassing any cache
// (metrics use it: database_up must say what the database does now).
func ReadSummary(ctx context.Context, st *store.Store) (readmodel.Summary, error) {
	return st.Summary(ctx)
}
