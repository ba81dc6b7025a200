package catalog

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/upcheck/upcheck/internal/store"
)

// Each registered site's catalog is its own components, read through the
// site's cache: 20 sites, each with one component of its own name, are
// each read with theirs alone; the cache keeps the last siteSnapshotsMax
// sites and no more, however many are asked (memory bounded at any
// number of sites); a write this process tells of (Changed) is seen by
// the next read; the local site's catalog is the local site's snapshot,
// none of theirs.
func TestSiteSnapshotsAreEachSitesAndBounded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var ids []int64
	for i := range 20 {
		name := fmt.Sprintf("site-%02d", i)
		hash := sha256.Sum256([]byte(name))
		s, err := b.store.SiteCreate(ctx, name, "", hash[:])
		if err != nil {
			t.Fatal(err)
		}
		b.db.MustExec(t, `INSERT INTO components (site_id, code, name, installed_version) VALUES ($1, 'app', $2, '1.0.0')`, s.ID, "App of "+name)
		ids = append(ids, s.ID)
	}
	for i, id := range ids {
		snap, err := b.reads.SiteSnapshot(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		rows, counts, err := snap.Page(store.CatalogFilter{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("App of site-%02d", i); counts.All != 1 || len(rows) != 1 || rows[0].Name != want {
			t.Errorf("site %d's catalog: %d rows, %+v; want its own %q", id, counts.All, rows, want)
		}
	}
	b.reads.siteSnapshots.mu.Lock()
	kept := len(b.reads.siteSnapshots.entries)
	b.reads.siteSnapshots.mu.Unlock()
	if kept != siteSnapshotsMax {
		t.Errorf("%d sites' catalogs kept after 20 asked, want %d", kept, siteSnapshotsMax)
	}

	last := ids[len(ids)-1]
	b.db.MustExec(t, `INSERT INTO components (site_id, code, name, installed_version) VALUES ($1, 'shop', 'Shop', '2.0.0')`, last)
	b.reads.Changed()
	snap, err := b.reads.SiteSnapshot(ctx, last)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Len() != 2 {
		t.Errorf("after a write told of, the site's catalog has %d components, want 2", snap.Len())
	}
	local, err := b.reads.SiteSnapshot(ctx, store.LocalSite)
	if err != nil {
		t.Fatal(err)
	}
	if local.Len() != 0 {
		t.Errorf("the local site's catalog has %d components, want none of the sites'", local.Len())
	}
}
