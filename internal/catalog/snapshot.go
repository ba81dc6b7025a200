package catalog

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// Snapshot is the whole catalog as the read model said it at one
// moment: every component with its flags (component_state), its rank
// (upcheck_catalog_rank) and its exposure clock, in the catalog's order.
// Filtering, searching and paging it reads no database: a page costs what
// its own rows cost, whatever the number of components. It is immutable
// once built, so any number of requests may read it at once.
type Snapshot struct {
	// ReadAt is when the database was read, on this process's clock
	// (monotonic): the flags are as they were then.
	ReadAt time.Time
	// stamp says until when the snapshot still holds (holds).
	stamp   store.ReadModelStamp
	entries []store.CatalogEntry // in the catalog's order (compareCursor)
	// byFilter holds, per filter, the positions in entries of the rows it
	// shows, in order; counts are their lengths.
	byFilter map[readmodel.Filter][]int32
	// haystack is every row's searchable text, lower-cased, one line per
	// row ("code\x00name\n"), and starts the offset of each line: one
	// bytes.Index pass finds every match of a search.
	haystack []byte
	starts   []int32
	// byKey holds, per advisory id or alias (upper-cased), the positions
	// of the rows whose current result lists it (alias.go).
	byKey map[string][]int32
}

// catalogFilters are the catalog's filters; "" shows every component.
var catalogFilters = readmodel.CatalogFilters

// compareCursor is the catalog's order: rank (what needs action first),
// then lower-cased name, then code, compared byte-wise so that the order
// does not depend on the database's collation and a cursor finds its
// place by binary search.
func compareCursor(a, b store.CatalogCursor) int {
	if c := cmp.Compare(a.Rank, b.Rank); c != 0 {
		return c
	}
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	return strings.Compare(a.Code, b.Code)
}

// readSnapshot reads every component of site from the read model
// (store.SiteCatalogRows) and indexes it.
func readSnapshot(ctx context.Context, st *store.Store, site int64, mode readmodel.DevMode) (*Snapshot, error) {
	entries, stamp, err := st.SiteCatalogRows(ctx, site, mode)
	if err != nil {
		return nil, err
	}
	snap := newSnapshot(entries, time.Now())
	snap.stamp = stamp
	return snap, nil
}

// holds reports whether snap still says what the read model says now
// (store.ReadModelUnchanged): one row asks.
func (c *Snapshot) holds(ctx context.Context, st *store.Store) (bool, error) {
	return st.ReadModelUnchanged(ctx, c.stamp)
}

// newSnapshot orders entries and builds the filter and search indexes.
func newSnapshot(entries []store.CatalogEntry, readAt time.Time) *Snapshot {
	slices.SortFunc(entries, func(a, b store.CatalogEntry) int { return compareCursor(a.Cursor, b.Cursor) })
	snap := &Snapshot{ReadAt: readAt, entries: entries, byFilter: make(map[readmodel.Filter][]int32, len(catalogFilters)),
		starts: make([]int32, len(entries))}
	var hay bytes.Buffer
	for i := range entries {
		e := &entries[i]
		for _, f := range catalogFilters {
			if f.Shows(&e.CatalogRow) {
				snap.byFilter[f] = append(snap.byFilter[f], int32(i))
			}
		}
		snap.starts[i] = int32(hay.Len())
		hay.WriteString(strings.ToLower(e.Code))
		hay.WriteByte(0)
		hay.WriteString(strings.ToLower(e.Name))
		hay.WriteByte('\n')
		snap.indexKeys(e.AdvisoryKeys, i)
	}
	snap.haystack = hay.Bytes()
	return snap
}

// Len is the number of components in the snapshot.
func (c *Snapshot) Len() int { return len(c.entries) }

// Page returns one page of the catalog as f asks for it and how many
// components each filter shows with f's search. Entries are copies: the
// snapshot stays as it was.
func (c *Snapshot) Page(f store.CatalogFilter) ([]store.CatalogEntry, store.CatalogCounts, error) {
	if f.After != nil && (f.After.Code == "" || f.Offset != 0) {
		return nil, store.CatalogCounts{}, errors.New("a catalog cursor needs a code and no offset")
	}
	if f.Limit < 0 || f.Offset < 0 {
		return nil, store.CatalogCounts{}, errors.New("a catalog page needs a limit and offset of 0 or more")
	}
	rows := c.byFilter[f.Status]
	var counts store.CatalogCounts
	if q := strings.ToLower(f.Search); q != "" {
		matches := c.withAdvisory(c.search(q), f.Search)
		counts = c.countAmong(matches)
		rows = c.keep(matches, f.Status)
	} else {
		counts = countsBy(func(status readmodel.Filter) int { return len(c.byFilter[status]) })
	}
	start := min(f.Offset, len(rows))
	if f.After != nil {
		// The first row after the cursor; the cursor's own row may have
		// moved or gone since, which moves no other row across it.
		start = sort.Search(len(rows), func(k int) bool {
			return compareCursor(c.entries[rows[k]].Cursor, *f.After) > 0
		})
	}
	end := min(start+f.Limit, len(rows))
	out := make([]store.CatalogEntry, 0, end-start)
	for _, i := range rows[start:end] {
		out = append(out, c.entries[i])
	}
	return out, counts, nil
}

// search returns, in order, the positions of the rows whose code or name
// contains q (lower-cased) as a plain substring.
func (c *Snapshot) search(q string) []int32 {
	if strings.ContainsAny(q, "\x00\n") { // the separators: no code or name holds them
		return nil
	}
	needle := []byte(q)
	var out []int32
	for from := 0; from < len(c.haystack); {
		k := bytes.Index(c.haystack[from:], needle)
		if k < 0 {
			break
		}
		at := from + k
		// The row whose line holds the match; a match never spans two
		// lines unless the needle holds the separators, which a search
		// from a form or a query string cannot match usefully.
		row, _ := slices.BinarySearch(c.starts, int32(at))
		if row == len(c.starts) || c.starts[row] != int32(at) {
			row--
		}
		out = append(out, int32(row))
		// Go on after this row's line: one match per row is enough.
		if row+1 < len(c.starts) {
			from = int(c.starts[row+1])
		} else {
			break
		}
	}
	return out
}

// countAmong counts, per filter, the rows among positions it shows.
func (c *Snapshot) countAmong(positions []int32) store.CatalogCounts {
	tally := make(map[readmodel.Filter]int, len(catalogFilters))
	for _, i := range positions {
		for _, f := range catalogFilters {
			if f.Shows(&c.entries[i].CatalogRow) {
				tally[f]++
			}
		}
	}
	return countsBy(func(status readmodel.Filter) int { return tally[status] })
}

// countsBy is the counts of every filter, each given by n.
func countsBy(n func(status readmodel.Filter) int) store.CatalogCounts {
	return store.CatalogCounts{All: n(readmodel.FilterAll), Attention: n(readmodel.FilterAttention), Updates: n(readmodel.FilterUpdates),
		Security: n(readmodel.FilterSecurity), Vulnerable: n(readmodel.FilterVulnerable), Failing: n(readmodel.FilterFailing),
		Stale: n(readmodel.FilterStale), Dismissed: n(readmodel.FilterDismissed),
		KnownExploited: n(readmodel.FilterKnownExploited), Malicious: n(readmodel.FilterMalicious),
		Waiting: n(readmodel.FilterWaiting), Skipped: n(readmodel.FilterSkipped)}
}

// keep returns the positions the filter status shows.
func (c *Snapshot) keep(positions []int32, status readmodel.Filter) []int32 {
	if status == readmodel.FilterAll {
		return positions
	}
	out := make([]int32, 0, len(positions))
	for _, i := range positions {
		if status.Shows(&c.entries[i].CatalogRow) {
			out = append(out, i)
		}
	}
	return out
}
