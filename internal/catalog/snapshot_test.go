package catalog

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// randomEntries is a catalog of n components with random flags and names
// that share substrings, in no particular order.
func randomEntries(r *rand.Rand, n int) []store.CatalogEntry {
	words := []string{"Blog", "blog", "Shop", "SEO", "Événements", "forms", "Forum", "cache", "ß", "z"}
	out := make([]store.CatalogEntry, n)
	for i := range out {
		name := words[r.IntN(len(words))] + " " + words[r.IntN(len(words))]
		e := store.CatalogEntry{CatalogRow: readmodel.CatalogRow{
			Code: fmt.Sprintf("c%03d", r.IntN(1000)) + fmt.Sprint(i), Name: name,
			Security: r.IntN(5) == 0, Vulnerable: r.IntN(6) == 0, UpdateAvailable: r.IntN(3) == 0,
			Failing: r.IntN(7) == 0, Stale: r.IntN(7) == 0,
		}}
		e.NeedsAttention = e.Security || e.Vulnerable || r.IntN(8) == 0 // or a trust downgrade, a deprecated version
		if r.IntN(6) == 0 {                                             // a release waits for its soak
			e.Waiting = &readmodel.WaitingRelease{Version: "9.9.9", Reason: "waits until 4 Dec 18:00 UTC (soak 3 days)"}
		}
		if r.IntN(6) == 0 { // a skip hides a release
			e.Skipped = &readmodel.SkippedVersion{Version: "9.0.0", By: "the manifest", FromManifest: true}
		}
		e.Cursor = store.CatalogCursor{Rank: readmodel.CatalogRankMin + r.IntN(readmodel.CatalogRankMax-readmodel.CatalogRankMin+1), Name: strings.ToLower(name), Code: e.Code}
		out[i] = e
	}
	return out
}

// naivePage is the catalog's meaning written the slow way: every row,
// filtered by its flags and a case-insensitive substring of code or name,
// sorted by rank, lower name and code, then sliced.
func naivePage(all []store.CatalogEntry, f store.CatalogFilter) []string {
	var rows []store.CatalogEntry
	q := strings.ToLower(f.Search)
	for _, e := range all {
		hit := strings.Contains(strings.ToLower(e.Code), q) || strings.Contains(strings.ToLower(e.Name), q)
		keep := map[string]bool{"": true, "attention": e.NeedsAttention, "updates": e.UpdateAvailable,
			"security": e.Security, "vulnerable": e.Vulnerable, "failing": e.Failing, "stale": e.Stale,
			"waiting": e.Waiting != nil, "skipped": e.Skipped != nil}[string(f.Status)]
		if hit && keep {
			rows = append(rows, e)
		}
	}
	slices.SortFunc(rows, func(a, b store.CatalogEntry) int {
		if a.Cursor.Rank != b.Cursor.Rank {
			return a.Cursor.Rank - b.Cursor.Rank
		}
		if a.Cursor.Name != b.Cursor.Name {
			return strings.Compare(a.Cursor.Name, b.Cursor.Name)
		}
		return strings.Compare(a.Code, b.Code)
	})
	start := min(f.Offset, len(rows))
	if f.After != nil {
		start = len(rows)
		for k, e := range rows {
			if e.Cursor.Rank > f.After.Rank || (e.Cursor.Rank == f.After.Rank && (e.Cursor.Name > f.After.Name ||
				(e.Cursor.Name == f.After.Name && e.Code > f.After.Code))) {
				start = k
				break
			}
		}
	}
	var codes []string
	for _, e := range rows[start:min(start+f.Limit, len(rows))] {
		codes = append(codes, e.Code)
	}
	return codes
}

// The snapshot's filters, search, order, offsets and cursors (also a
// cursor whose row is gone) agree with the naive reading, and its counts
// with the naive counts, on random catalogs.
func TestCatalogSnapshotAgreesWithTheNaiveReading(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	searches := []string{"", "blog", "BLOG", "o", "é", "ÉV", "c01", "ss", "zz z", "nothing", "\x00", "g\nb"}
	for round := range 200 {
		all := randomEntries(r, 1+r.IntN(300))
		snap := newSnapshot(slices.Clone(all), time.Now())
		for range 20 {
			f := store.CatalogFilter{Status: catalogFilters[r.IntN(len(catalogFilters))],
				Search: searches[r.IntN(len(searches))], Limit: 1 + r.IntN(60)}
			switch r.IntN(3) {
			case 0:
				f.Offset = r.IntN(len(all) + 5)
			case 1:
				cur := all[r.IntN(len(all))].Cursor
				if r.IntN(2) == 0 {
					cur.Code += "-gone" // a row that is no longer there
				}
				f.After = &cur
			}
			got, counts, err := snap.Page(f)
			if err != nil {
				t.Fatal(err)
			}
			var codes []string
			for _, e := range got {
				codes = append(codes, e.Code)
			}
			if want := naivePage(all, f); !slices.Equal(codes, want) {
				t.Fatalf("round %d, %+v: got %v, want %v", round, f, codes, want)
			}
			for _, status := range catalogFilters {
				want := len(naivePage(all, store.CatalogFilter{Status: status, Search: f.Search, Limit: len(all)}))
				if counts.Of(status) != want {
					t.Fatalf("round %d, search %q: count of %q is %d, want %d", round, f.Search, status, counts.Of(status), want)
				}
			}
		}
	}
}

// A page's entries are copies: changing them leaves the snapshot as it was.
func TestCatalogSnapshotPagesAreCopies(t *testing.T) {
	snap := newSnapshot([]store.CatalogEntry{{CatalogRow: readmodel.CatalogRow{Code: "a", Name: "A"}, Cursor: store.CatalogCursor{Name: "a", Code: "a"}}}, time.Now())
	page, _, err := snap.Page(store.CatalogFilter{Limit: 10})
	if err != nil || len(page) != 1 {
		t.Fatalf("page %v, %v", page, err)
	}
	page[0].Name = "changed"
	again, _, err := snap.Page(store.CatalogFilter{Limit: 10})
	if err != nil || again[0].Name != "A" {
		t.Fatalf("snapshot changed through a page: %+v, %v", again, err)
	}
}

// BenchmarkCatalogSnapshotPage is one catalog read at 10,000 components:
// the first page, a filter, a search and a cursor deep in the order.
func BenchmarkCatalogSnapshotPage(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	all := randomEntries(r, 10_000)
	snap := newSnapshot(all, time.Now())
	deep := snap.entries[snap.byFilter[""][2500]].Cursor
	for _, f := range []store.CatalogFilter{{Limit: 50}, {Status: "security", Limit: 50}, {Search: "c12", Limit: 50},
		{After: &deep, Limit: 50}} {
		b.Run(fmt.Sprintf("status=%s,q=%s,after=%v", f.Status, f.Search, f.After != nil), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := snap.Page(f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
