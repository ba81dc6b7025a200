package store

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// CatalogSnapshot is the whole catalog as the read model said it at one
// moment: every component with its flags (component_state), its rank
// (upcheck_catalog_rank) and its exposure clock, in the catalog's order.
// Filtering, searching and paging it reads no database: a page costs what
// its own rows cost, whatever the number of components. It is immutable
// once built, so any number of requests may read it at once.
type CatalogSnapshot struct {
	// ReadAt is when the database was read, on this process's clock
	// (monotonic): the flags are as they were then.
	ReadAt time.Time
	// version and turnsAt say until when the snapshot still holds
	// (migration 00019: read_model_version, upcheck_read_model_turns_at);
	// reusable is false for a snapshot of no rows, which carries neither.
	version  int64
	turnsAt  *time.Time
	reusable bool
	entries  []CatalogEntry // in the catalog's order (compareCursor)
	// byFilter holds, per filter, the positions in entries of the rows it
	// shows, in order; counts are their lengths.
	byFilter map[string][]int32
	// haystack is every row's searchable text, lower-cased, one line per
	// row ("code\x00name\n"), and starts the offset of each line: one
	// bytes.Index pass finds every match of a search.
	haystack []byte
	starts   []int32
	// byKey holds, per advisory id or alias (upper-cased), the positions
	// of the rows whose current result lists it (catalog_alias.go).
	byKey map[string][]int32
}

// catalogFilters are the catalog's filters; "" shows every component.
var catalogFilters = readmodel.CatalogFilters

// shows reports whether the filter status shows e: the one definition of
// each filter, over the read model's flags.
func (e *CatalogEntry) shows(status string) bool {
	switch status {
	case readmodel.FilterAll:
		return true
	case readmodel.FilterAttention:
		return e.Security || e.Vulnerable
	case readmodel.FilterUpdates:
		return e.UpdateAvailable
	case readmodel.FilterSecurity:
		return e.Security
	case readmodel.FilterVulnerable:
		return e.Vulnerable
	case readmodel.FilterFailing:
		return e.Failing
	case readmodel.FilterStale:
		return e.Stale
	case readmodel.FilterDismissed:
		return e.Dismissed > 0
	}
	return false
}

// compareCursor is the catalog's order: rank (what needs action first),
// then lower-cased name, then code, compared byte-wise so that the order
// does not depend on the database's collation and a cursor finds its
// place by binary search.
func compareCursor(a, b CatalogCursor) int {
	if c := cmp.Compare(a.Rank, b.Rank); c != 0 {
		return c
	}
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	return strings.Compare(a.Code, b.Code)
}

// CatalogSnapshot reads every component from the read model
// (queries/catalog.sql CatalogAll) and indexes it.
func (s *Store) CatalogSnapshot(ctx context.Context) (*CatalogSnapshot, error) {
	rows, err := s.q.CatalogAll(ctx, s.pool)
	if err != nil {
		return nil, mapError(fmt.Errorf("read catalog: %w", err))
	}
	entries := make([]CatalogEntry, len(rows))
	for i, r := range rows {
		entries[i] = CatalogEntry{CatalogRow: readmodel.CatalogRow{
			Code: r.Code, Name: r.Name, Installed: r.InstalledVersion, SourceURL: deref(r.SourceUrl), Evaluated: r.Evaluated,
			Latest: deref(r.LatestVersion), UpdateVersion: deref(r.UpdateVersion), RequiredCore: deref(r.RequiredCore),
			UpdateAvailable: r.UpdateAvailable, Security: r.Security, Vulnerable: r.Vulnerable, VulnerableNoFix: r.VulnerableNoFix,
			NeedsNewerCore: r.NeedsNewerCore, Stale: r.Stale, Failing: r.Failing, Advisories: orEmptyArray(r.OpenAdvisories),
			ReleaseURL: deref(r.ReleaseUrl), LastSuccessAt: r.LastSuccessAt, LastAttemptAt: r.LastAttemptAt,
			LastError: deref(r.LastError), EvalError: deref(r.EvalError),
			LastErrorKind: deref(r.LastErrorKind), LastErrorArg: deref(r.LastErrorArg),
			SecuritySince: timeOf(r.SecuritySince), Dismissed: int(r.DismissedCount), DismissedUntil: timeOf(r.DismissedUntil),
		}, Cursor: CatalogCursor{Rank: int(r.SortRank), Name: r.SortName, Code: r.Code}, advisoryKeys: r.AdvisoryKeys}
	}
	snap := newCatalogSnapshot(entries, time.Now())
	if len(rows) > 0 {
		snap.version, snap.turnsAt, snap.reusable = rows[0].Version, timeOf(rows[0].TurnsAt), true
	}
	return snap, nil
}

// CatalogSnapshotHolds reports whether snap still says what the read model
// says now: no write to what it reads has committed since, and the clock
// has not turned a flag. One row; the database's clock judges.
func (s *Store) CatalogSnapshotHolds(ctx context.Context, snap *CatalogSnapshot) (bool, error) {
	if !snap.reusable {
		return false, nil
	}
	ok, err := s.q.ReadModelUnchanged(ctx, s.pool, db.ReadModelUnchangedParams{Version: snap.version, TurnsAt: snap.turnsAt})
	if err != nil {
		return false, mapError(fmt.Errorf("check the catalog snapshot: %w", err))
	}
	return ok, nil
}

// newCatalogSnapshot orders entries and builds the filter and search
// indexes.
func newCatalogSnapshot(entries []CatalogEntry, readAt time.Time) *CatalogSnapshot {
	slices.SortFunc(entries, func(a, b CatalogEntry) int { return compareCursor(a.Cursor, b.Cursor) })
	snap := &CatalogSnapshot{ReadAt: readAt, entries: entries, byFilter: make(map[string][]int32, len(catalogFilters)),
		starts: make([]int32, len(entries))}
	var hay bytes.Buffer
	for i := range entries {
		e := &entries[i]
		for _, f := range catalogFilters {
			if e.shows(f) {
				snap.byFilter[f] = append(snap.byFilter[f], int32(i))
			}
		}
		snap.starts[i] = int32(hay.Len())
		hay.WriteString(strings.ToLower(e.Code))
		hay.WriteByte(0)
		hay.WriteString(strings.ToLower(e.Name))
		hay.WriteByte('\n')
		snap.indexKeys(e.advisoryKeys, i)
	}
	snap.haystack = hay.Bytes()
	return snap
}

// Len is the number of components in the snapshot.
func (c *CatalogSnapshot) Len() int { return len(c.entries) }

// Page returns one page of the catalog as f asks for it and how many
// components each filter shows with f's search. Entries are copies: the
// snapshot stays as it was.
func (c *CatalogSnapshot) Page(f CatalogFilter) ([]CatalogEntry, CatalogCounts, error) {
	if f.After != nil && (f.After.Code == "" || f.Offset != 0) {
		return nil, CatalogCounts{}, errors.New("a catalog cursor needs a code and no offset")
	}
	if f.Limit < 0 || f.Offset < 0 {
		return nil, CatalogCounts{}, errors.New("a catalog page needs a limit and offset of 0 or more")
	}
	rows := c.byFilter[f.Status]
	var counts CatalogCounts
	if q := strings.ToLower(f.Search); q != "" {
		matches := c.withAdvisory(c.search(q), f.Search)
		counts = c.countAmong(matches)
		rows = c.keep(matches, f.Status)
	} else {
		counts = countsBy(func(status string) int { return len(c.byFilter[status]) })
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
	out := make([]CatalogEntry, 0, end-start)
	for _, i := range rows[start:end] {
		out = append(out, c.entries[i])
	}
	return out, counts, nil
}

// search returns, in order, the positions of the rows whose code or name
// contains q (lower-cased) as a plain substring.
func (c *CatalogSnapshot) search(q string) []int32 {
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
func (c *CatalogSnapshot) countAmong(positions []int32) CatalogCounts {
	tally := make(map[string]int, len(catalogFilters))
	for _, i := range positions {
		for _, f := range catalogFilters {
			if c.entries[i].shows(f) {
				tally[f]++
			}
		}
	}
	return countsBy(func(status string) int { return tally[status] })
}

// countsBy is the counts of every filter, each given by n.
func countsBy(n func(status string) int) CatalogCounts {
	return CatalogCounts{All: n(readmodel.FilterAll), Attention: n(readmodel.FilterAttention), Updates: n(readmodel.FilterUpdates),
		Security: n(readmodel.FilterSecurity), Vulnerable: n(readmodel.FilterVulnerable), Failing: n(readmodel.FilterFailing),
		Stale: n(readmodel.FilterStale), Dismissed: n(readmodel.FilterDismissed)}
}

// keep returns the positions the filter status shows.
func (c *CatalogSnapshot) keep(positions []int32, status string) []int32 {
	if status == "" {
		return positions
	}
	out := make([]int32, 0, len(positions))
	for _, i := range positions {
		if c.entries[i].shows(status) {
			out = append(out, i)
		}
	}
	return out
}
