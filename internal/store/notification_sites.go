package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// The registered sites' tree events (docs/notifications.md "Sites"):
// per site for a channel of some sites, one digest per finding for a
// channel of the fleet, planned in the evaluation's fenced transaction.

// ChannelsBeyondLocal reports whether an enabled channel is of some sites
// or of the fleet: only then are the sites' tree findings planned.
func (e *Executor) ChannelsBeyondLocal(ctx context.Context) (bool, error) {
	ok, err := e.q.ChannelsBeyondLocal(ctx, e.dbtx)
	return ok, mapError(err)
}

// TreeSitesMoved lists the sites whose tree moved since it was last
// evaluated; read in the evaluation's transaction before
// TreeFindingsWrite records the trees evaluated.
func (t *Tx) TreeSitesMoved(ctx context.Context) ([]int64, error) {
	ids, err := t.q.TreeSitesMoved(ctx, t.tx)
	if err != nil {
		return nil, mapError(fmt.Errorf("list the sites whose tree moved: %w", err))
	}
	return ids, nil
}

// EventPlanSiteTreeFindings queues, in tx, the tree.finding event of each
// counted finding (under mode) new to a site (new to the fleet in tx, or
// on a site of moved) for each enabled channel subscribed to that site,
// once per channel and site.
func (t *Tx) EventPlanSiteTreeFindings(ctx context.Context, moved []int64, mode readmodel.DevMode, epoch int64) ([]uuid.UUID, error) {
	p := db.EventPlanSiteTreeFindingsParams{Moved: orNoIDs(moved), DevMode: string(mode)}
	if epoch != 0 {
		p.Epoch = &epoch
	}
	out, err := t.q.EventPlanSiteTreeFindings(ctx, t.tx, p)
	return out, mapError(err)
}

// EventPlanFleetFindings queues, in tx, the fleet digest: for each enabled
// channel of the fleet, one fleet.finding event per finding naming the
// sites it is new to (as EventPlanSiteTreeFindings reads them) that the
// channel was not told of yet.
func (t *Tx) EventPlanFleetFindings(ctx context.Context, moved []int64, mode readmodel.DevMode, epoch int64) ([]uuid.UUID, error) {
	p := db.EventPlanFleetFindingsParams{Moved: orNoIDs(moved), DevMode: string(mode)}
	if epoch != 0 {
		p.Epoch = &epoch
	}
	out, err := t.q.EventPlanFleetFindings(ctx, t.tx, p)
	return out, mapError(err)
}

// orNoIDs is ids, or an empty array for none (a nil slice is SQL null).
func orNoIDs(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// RegisteredOf are the keys among keys of registered sites' components
// (not LocalSite's), split into parallel lists of sites and codes; nil
// for none.
func RegisteredOf(keys []ComponentKey) (sites []int64, codes []string) {
	for _, k := range keys {
		if k.Site != LocalSite {
			sites, codes = append(sites, k.Site), append(codes, k.Code)
		}
	}
	return sites, codes
}

// EventPlanSites queues, in tx, the events of registered sites'
// components keys (every registered site's when keys is nil), for every
// enabled channel of some sites or of the fleet, or only channelID: one
// event per channel, site and fact naming the site for a channel of some
// sites, one digest per fact naming its sites for a channel of the fleet
// (docs/notifications.md "Sites"); epoch is the queuing check's (0:
// none). It returns the ids of the events queued now. LocalSite's keys
// are left out: they are EventPlan's.
//
// What is read is every registered component of the keys' sites whose
// code is among the keys' codes: a superset of keys (one source's write
// is one code or a few on many sites), planned as their own writes would
// plan them, by filters the view's rows are found by.
func (t *Tx) EventPlanSites(ctx context.Context, keys []ComponentKey, channelID, epoch int64) ([]uuid.UUID, error) {
	var p db.EventPlanSitesParams
	if keys == nil {
		scope, err := t.q.RegisteredComponentScope(ctx, t.tx)
		if err != nil {
			return nil, mapError(err)
		}
		p.Sites, p.Codes = scope.Sites, scope.Codes
	} else {
		sites, codes := RegisteredOf(keys)
		slices.Sort(sites)
		slices.Sort(codes)
		p.Sites, p.Codes = slices.Compact(sites), slices.Compact(codes)
	}
	if len(p.Sites) == 0 || len(p.Codes) == 0 {
		return nil, nil
	}
	if channelID != 0 {
		p.ChannelID = &channelID
	}
	if epoch != 0 {
		p.Epoch = &epoch
	}
	// Without JIT: the plan's estimate over many sites passes the cost at
	// which PostgreSQL compiles it, which took seconds (7 s for one
	// source on 2,000 sites) where the statement takes milliseconds.
	jit, err := t.q.JitOffLocal(ctx, t.tx)
	if err != nil {
		return nil, mapError(err)
	}
	out, err := t.q.EventPlanSites(ctx, t.tx, p)
	if err != nil {
		return nil, mapError(err)
	}
	return out, mapError(t.q.JitRestoreLocal(ctx, t.tx, jit.Was))
}
