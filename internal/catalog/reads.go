package catalog

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// Reads are this process's reads of the read model: the summary and the
// catalog snapshot, cached as doc.go says, and one component's detail.
// One Reads serves the whole process (its pages, its API, its CLI
// commands); every writer of this process tells it when it has written
// (Changed).
type Reads struct {
	store    *store.Store
	summary  readCache[*summaryRead]
	snapshot readCache[*Snapshot]
	// siteSnapshots is the registered sites' catalogs, by site: the last
	// siteSnapshotsMax sites asked (SiteSnapshot).
	siteSnapshots keyedCache[*Snapshot]
	// sites is the site switcher's sites for a principal that may see
	// every site (SiteChoices).
	sites readCache[siteChoices]
	// The fleet's reads, by what they were asked (fleet.go).
	fleetPages   keyedCache[FleetPage]
	fleetTotals  keyedCache[readmodel.FleetSummary]
	fleetReads   atomic.Uint64 // FleetPage.Read of the last page read
	fleetImpacts keyedCache[readmodel.FleetImpact]
	// devMode is UPCHECK_LOCKFILE_DEV: what the tree's counts count (the
	// summary's, and each catalog row's dependencies).
	devMode readmodel.DevMode

	mu sync.Mutex
	// schedule is the schedule this process runs (Scheduled), for
	// next_check_at; nil while none runs.
	schedule cron.Schedule
}

// Option sets up a Reads.
type Option func(*Reads)

// WithDevMode counts the installed tree's findings under the setting
// UPCHECK_LOCKFILE_DEV (readmodel.DevMode); without it, under its
// default, readmodel.DevSeparate.
func WithDevMode(m readmodel.DevMode) Option {
	return func(r *Reads) { r.devMode = m }
}

// New returns the reads of st's read model, with nothing cached yet.
func New(st *store.Store, opts ...Option) *Reads {
	r := &Reads{store: st, devMode: readmodel.DevSeparate}
	r.siteSnapshots.max = siteSnapshotsMax
	for _, o := range opts {
		o(r)
	}
	return r
}

// Changed drops every cached read: this process has just written to what
// the read model reads, and the next request waits for a read begun after
// this call, so this process never shows its own write late. The writers
// call it after each write they make: a check and an import when they take
// the lease (check_running changed) and when they end, whatever the
// outcome; a manifest sync when it ends, and a tree sync; a dismissal and
// its end (doc.go).
// A nil Reads has nothing to drop.
func (r *Reads) Changed() {
	if r == nil {
		return
	}
	r.summary.invalidate()
	r.snapshot.invalidate()
	r.siteSnapshots.invalidate()
	r.sites.invalidate()
	r.fleetPages.invalidate()
	r.fleetTotals.invalidate()
	r.fleetImpacts.invalidate()
}

// Scheduled records the schedule this process runs (nil: none any more),
// whose next fire the summary reports.
func (r *Reads) Scheduled(s cron.Schedule) {
	r.mu.Lock()
	r.schedule = s
	r.mu.Unlock()
}

// withNextCheck fills in when the schedule this process runs fires next,
// on the process's clock: a fact of the process, not of the database, so
// it is added to every copy handed out rather than cached.
func (r *Reads) withNextCheck(v readmodel.Summary) readmodel.Summary {
	r.mu.Lock()
	s := r.schedule
	r.mu.Unlock()
	v.NextCheckAt = nil
	if s != nil {
		if next := s.Next(time.Now().UTC()); !next.IsZero() {
			next = next.UTC()
			v.NextCheckAt = &next
		}
	}
	return v
}

// summaryRead is one read of the summary and its JSON, encoded once for
// each next check time it was asked with: the badge's endpoint answers
// many times a second from one read, and encoding its every field each
// time cost more than the rest of the request.
type summaryRead struct {
	value readmodel.Summary

	mu      sync.Mutex
	encoded []byte
	next    *time.Time // NextCheckAt encoded
}

// Summary is the stored summary, cached as doc.go says and read by one
// query at a time however many requests ask, with when this process's
// schedule runs the next check. It never fetches.
func (r *Reads) Summary(ctx context.Context) (readmodel.Summary, error) {
	read, err := r.summaryRead(ctx)
	if err != nil {
		return readmodel.Summary{}, err
	}
	return r.withNextCheck(read.value), nil
}

// SummaryJSON is Summary encoded as JSON, encoded again only when the
// summary was read again or its next check time moved.
func (r *Reads) SummaryJSON(ctx context.Context) ([]byte, error) {
	read, err := r.summaryRead(ctx)
	if err != nil {
		return nil, err
	}
	v := r.withNextCheck(read.value)
	read.mu.Lock()
	defer read.mu.Unlock()
	if read.encoded != nil && sameTime(read.next, v.NextCheckAt) {
		return read.encoded, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	read.encoded, read.next = append(b, '\n'), v.NextCheckAt
	return read.encoded, nil
}

func (r *Reads) summaryRead(ctx context.Context) (*summaryRead, error) {
	return r.summary.get(ctx, func(ctx context.Context) (*summaryRead, error) {
		v, err := r.store.Summary(ctx, store.LocalSite, r.devMode)
		if err != nil {
			return nil, err
		}
		return &summaryRead{value: v}, nil
	}, nil)
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// siteChoices is one read of the switcher's sites: the first max.
type siteChoices struct {
	max   int
	sites []store.SiteChoice
}

// SiteChoices is the sites the layout's switcher offers a principal that
// may see every site: the local site, then the first max registered ones
// by name (store.SiteChoices), cached like the summary, so that a page
// costs no query for them. max is the same for every call of a process;
// a call with another max reads at once.
func (r *Reads) SiteChoices(ctx context.Context, max int) ([]store.SiteChoice, error) {
	read := func(ctx context.Context) (siteChoices, error) {
		sites, err := r.store.SiteChoices(ctx, store.FleetScope{}, max)
		return siteChoices{max: max, sites: sites}, err
	}
	v, err := r.sites.get(ctx, read, nil)
	if err == nil && v.max != max {
		v, err = read(ctx)
	}
	return v.sites, err
}

// Snapshot is the whole catalog, cached like the summary, for pages to
// filter and page without reading a row (Snapshot.Page). Past its 500 ms
// the snapshot is read again only if a write or the clock changed what it
// says (one row asks). A caller must not keep it: each request asks again.
func (r *Reads) Snapshot(ctx context.Context) (*Snapshot, error) {
	return r.snapshot.get(ctx, func(ctx context.Context) (*Snapshot, error) {
		return readSnapshot(ctx, r.store, store.LocalSite, r.devMode)
	}, func(ctx context.Context, snap *Snapshot) (bool, error) {
		return snap.holds(ctx, r.store)
	})
}

// siteSnapshotsMax is how many registered sites' catalogs are kept: a
// registered site's catalog is its lockfile's direct dependencies, and
// however many sites the fleet has, this process keeps this many.
const siteSnapshotsMax = 16

// SiteSnapshot is site's whole catalog, for its pages as Snapshot is the
// local site's (which it returns for store.LocalSite). A registered
// site's is cached as the fleet's reads are: each of the last
// siteSnapshotsMax sites asked kept as the summary is, at most a second,
// and dropped by this process's own writes (Changed).
func (r *Reads) SiteSnapshot(ctx context.Context, site int64) (*Snapshot, error) {
	if site == store.LocalSite {
		return r.Snapshot(ctx)
	}
	return r.siteSnapshots.get(ctx, strconv.FormatInt(site, 10), func(ctx context.Context) (*Snapshot, error) {
		return readSnapshot(ctx, r.store, site, r.devMode)
	})
}

// ReadPage reads the whole catalog now, bypassing any cache (tests and
// tools; the server reads through Reads.Snapshot), the tree's counts under
// UPCHECK_LOCKFILE_DEV's default, and returns one page of
// it as f asks and how many components each filter shows with f's search.
func ReadPage(ctx context.Context, st *store.Store, f store.CatalogFilter) ([]store.CatalogEntry, store.CatalogCounts, error) {
	snap, err := readSnapshot(ctx, st, store.LocalSite, readmodel.DevSeparate)
	if err != nil {
		return nil, store.CatalogCounts{}, err
	}
	return snap.Page(f)
}
