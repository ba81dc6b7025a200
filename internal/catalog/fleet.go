package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/upcheck/upcheck/internal/npmver"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
)

// The fleet (docs/design.md "The fleet"): a page is one statement over
// fleet_site_counts, which the tree's writes keep; the impact is read in
// one read-only transaction, so that its counts and its lists agree. Each
// is cached by what it was asked (the principal's sites included) as the
// summary is (doc.go), the last keyedMax of each kept: so that the fleet's
// first page and an advisory's impact, asked by every operator at once
// after an attack, cost one read a second.

// FleetPage is one page of the sites with their counts.
type FleetPage struct {
	Rows []readmodel.FleetRow
	// More: a next page exists.
	More bool
	// Read names the read the page came from, unique on this instance:
	// two pages with the same Read are the same rows (what is rendered of
	// them may be kept by it).
	Read uint64
}

// Fleet reads one page of the sites as f asks (f.Limit rows at most, 1
// when not positive).
func (r *Reads) Fleet(ctx context.Context, f store.FleetFilter) (FleetPage, error) {
	return r.fleetPages.get(ctx, fmt.Sprintf("%#v", f), func(ctx context.Context) (FleetPage, error) {
		return r.readFleet(ctx, f)
	})
}

func (r *Reads) readFleet(ctx context.Context, f store.FleetFilter) (FleetPage, error) {
	limit := max(f.Limit, 1)
	// One row more than the page tells whether a next page exists.
	f.Limit = limit + 1
	rows, err := r.store.FleetPage(ctx, f)
	if err != nil {
		return FleetPage{}, err
	}
	out := FleetPage{Rows: rows, Read: r.fleetReads.Add(1)}
	if len(rows) > limit {
		out.Rows, out.More = rows[:limit], true
	}
	return out, nil
}

// FleetSummary reads the totals across the sites of scope.
func (r *Reads) FleetSummary(ctx context.Context, scope store.FleetScope, f store.FleetFilter) (readmodel.FleetSummary, error) {
	key := fmt.Sprintf("%#v %q %d", scope, f.DevMode, f.StaleAfter)
	return r.fleetTotals.get(ctx, key, func(ctx context.Context) (readmodel.FleetSummary, error) {
		return r.store.FleetSummary(ctx, scope, f.DevMode, f.StaleAfter)
	})
}

// ErrBadRange is a range the impact cannot read (npm's syntax).
var ErrBadRange = errors.New("not a version range")

// FleetImpactQuery is what the impact is asked of: an advisory (its id or
// an alias), or a package and, optionally, a version range in npm's
// syntax ("" for every version).
type FleetImpactQuery struct {
	Advisory string
	Package  string
	Range    string
}

// FleetImpact reads the sites of scope that q affects now and those that
// ever installed an affected version, in one read-only transaction.
func (r *Reads) FleetImpact(ctx context.Context, scope store.FleetScope, q FleetImpactQuery) (readmodel.FleetImpact, error) {
	var rng *release.Range
	if q.Package != "" && strings.TrimSpace(q.Range) != "" {
		parsed, err := release.ParseRange(q.Range)
		if err != nil {
			return readmodel.FleetImpact{}, fmt.Errorf("%w: %v", ErrBadRange, err)
		}
		rng = &parsed
	}
	key := fmt.Sprintf("%#v %#v", scope, q)
	return r.fleetImpacts.get(ctx, key, func(ctx context.Context) (readmodel.FleetImpact, error) {
		return r.readFleetImpact(ctx, scope, q, rng)
	})
}

func (r *Reads) readFleetImpact(ctx context.Context, scope store.FleetScope, q FleetImpactQuery, rng *release.Range) (readmodel.FleetImpact, error) {
	var out readmodel.FleetImpact
	err := r.store.ReadTx(ctx, func(tx *store.Tx) error {
		var err error
		if q.Advisory != "" {
			out, err = tx.FleetImpactOfAdvisory(ctx, scope, strings.ToUpper(strings.TrimSpace(q.Advisory)))
			return err
		}
		versions, err := tx.FleetPackageVersions(ctx, q.Package)
		if err != nil {
			return err
		}
		if rng != nil {
			versions = slices.DeleteFunc(versions, func(v string) bool {
				sv, err := npmver.Parse(v)
				return err != nil || !rng.Contains(sv)
			})
		}
		out, err = tx.FleetImpactOfPackage(ctx, scope, q.Package, versions)
		return err
	})
	if err != nil {
		return readmodel.FleetImpact{}, err
	}
	if rng != nil {
		out.Range = rng.String()
	}
	return out, nil
}
