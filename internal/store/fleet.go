package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// FleetScope is the sites a read of the fleet may name: every site, or
// (Limited) only those of IDs, none when IDs is empty (docs/design.md
// "Who sees what").
type FleetScope struct {
	Limited bool
	IDs     []int64
}

func (s FleetScope) ids() []int64 {
	if s.IDs == nil {
		return []int64{}
	}
	return s.IDs
}

// FleetFilter is one page of the Fleet page (queries/fleet.sql): its
// order, filter and search (a part of a site's name or owner), Limit rows
// after the first Offset, under the setting DevMode; StaleAfter is
// UPCHECK_SITE_STALE_AFTER.
type FleetFilter struct {
	Scope      FleetScope
	Sort       readmodel.FleetSort
	Filter     readmodel.FleetFilter
	Search     string
	DevMode    readmodel.DevMode
	StaleAfter time.Duration
	Offset     int
	Limit      int
}

// fleetRow is a row of either order's query (their columns are one list).
type fleetRow = db.FleetPageAttentionRow

// FleetPage reads one page of the sites as f asks, in one statement.
func (e *Executor) FleetPage(ctx context.Context, f FleetFilter) ([]readmodel.FleetRow, error) {
	var rows []fleetRow
	var err error
	if f.Sort == readmodel.FleetByAttention {
		rows, err = e.q.FleetPageAttention(ctx, e.dbtx, db.FleetPageAttentionParams{StaleSeconds: f.StaleAfter.Seconds(),
			DevMode: string(f.DevMode), Limited: f.Scope.Limited, SiteIds: f.Scope.ids(), Search: f.Search, Filter: string(f.Filter),
			RowLimit: int64(f.Limit), RowOffset: int64(f.Offset)})
	} else {
		var sorted []db.FleetPageSortedRow
		sorted, err = e.q.FleetPageSorted(ctx, e.dbtx, db.FleetPageSortedParams{StaleSeconds: f.StaleAfter.Seconds(),
			DevMode: string(f.DevMode), Limited: f.Scope.Limited, SiteIds: f.Scope.ids(), Search: f.Search, Filter: string(f.Filter),
			Sort: string(f.Sort), RowLimit: int64(f.Limit), RowOffset: int64(f.Offset)})
		rows = make([]fleetRow, len(sorted))
		for i, r := range sorted {
			rows[i] = fleetRow(r)
		}
	}
	if err != nil {
		return nil, mapError(fmt.Errorf("read the fleet: %w", err))
	}
	out := make([]readmodel.FleetRow, len(rows))
	for i, r := range rows {
		mal, kev := int(r.Malicious), int(r.KnownExploited)
		out[i] = readmodel.FleetRow{Site: r.Name, Owner: r.Owner, Local: r.ID == LocalSite, Checked: r.Tree,
			Packages: int(r.Packages), PushedAt: utc(r.PushedAt), Stale: r.Stale,
			Counts: readmodel.TreeCounts{Malicious: &mal, Exposed: int(r.Exposed), KnownExploited: &kev,
				VulnerableNoFix: int(r.VulnerableNoFix), Vulnerable: int(r.Vulnerable), Total: int(r.Total)}}
		cmal, ckev := int(r.ComponentMalicious), int(r.ComponentKnownExploited)
		out[i].Components = readmodel.FleetComponentCounts{Checked: r.ComponentsChecked, Components: int(r.Components),
			UpdatesAvailable: int(r.ComponentUpdates), SecurityUpdates: int(r.ComponentSecurity),
			Vulnerable: int(r.ComponentVulnerable), TrustSignals: int(r.ComponentTrust), Malicious: &cmal, KnownExploited: &ckev}
	}
	return out, nil
}

// ComponentCountsBatch is how many sites one statement of
// RefreshSiteComponentCounts counts: each batch its own transaction,
// holding its sites' rows for one statement (docs/performance.md "The
// fleet").
const ComponentCountsBatch = 500

// RefreshSiteComponentCounts counts again the components of the sites
// named (fleet_site_components: what the Fleet page shows of them), from
// component_state as the site's summary counts them. Call it once a site
// when the writes that change a site's components, their results or what
// was decided of them (a check, a push's evaluation, a sync, a skip, an
// approval, a dismissal, a policy) have committed: no trigger counts them
// on the check's fenced writes. Batches of ComponentCountsBatch sites, in
// site order, are one statement each, each in a transaction of its own;
// each locks its sites' rows then counts, so that of two refreshes of one
// site the later counts what the earlier committed. A site removed
// meanwhile is left out.
func (s *Store) RefreshSiteComponentCounts(ctx context.Context, siteIDs []int64) error {
	ids := slices.Clone(siteIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for start := 0; start < len(ids); start += ComponentCountsBatch {
		batch := ids[start:min(start+ComponentCountsBatch, len(ids))]
		if err := s.q.FleetComponentsRefresh(ctx, s.pool, batch); err != nil {
			return mapError(fmt.Errorf("count the components of %d sites: %w", len(batch), err))
		}
	}
	return nil
}

// FleetSummary reads the totals across the sites of scope.
func (e *Executor) FleetSummary(ctx context.Context, scope FleetScope, mode readmodel.DevMode, staleAfter time.Duration) (
	readmodel.FleetSummary, error) {
	r, err := e.q.FleetSummary(ctx, e.dbtx, db.FleetSummaryParams{StaleSeconds: staleAfter.Seconds(), DevMode: string(mode),
		Limited: scope.Limited, SiteIds: scope.ids()})
	if err != nil {
		return readmodel.FleetSummary{}, mapError(fmt.Errorf("read the fleet's summary: %w", err))
	}
	out := readmodel.FleetSummary{Sites: int(r.Sites), Checked: int(r.Checked), Stale: int(r.Stale),
		SitesMalicious: int(r.SitesMalicious), SitesAttention: int(r.SitesAttention), Packages: int(r.Packages),
		Counts: readmodel.TreeCounts{Exposed: int(r.Exposed), VulnerableNoFix: int(r.VulnerableNoFix), Vulnerable: int(r.Vulnerable),
			Total: int(r.Total)},
		ComponentsChecked: int(r.ComponentsChecked), SitesUpdates: int(r.SitesUpdates), SitesSecurity: int(r.SitesSecurity),
		Components: readmodel.FleetComponentCounts{Checked: r.ComponentsChecked == r.Sites, Components: int(r.Components),
			UpdatesAvailable: int(r.ComponentUpdates), SecurityUpdates: int(r.ComponentSecurity),
			Vulnerable: int(r.ComponentVulnerable), TrustSignals: int(r.ComponentTrust)}}
	// sqlc cannot type min() over the joined function: a time.Time, or
	// nil for NULL.
	if t, ok := r.MalwareReadAt.(time.Time); ok {
		out.MalwareReadAt = utc(&t)
		n, k := int(r.Malicious), int(r.ComponentMalicious)
		out.Counts.Malicious, out.Components.Malicious = &n, &k
	}
	if t, ok := r.ExploitedReadAt.(time.Time); ok {
		out.ExploitedReadAt = utc(&t)
		n, k := int(r.KnownExploited), int(r.ComponentKnownExploited)
		out.Counts.KnownExploited, out.Components.KnownExploited = &n, &k
	}
	return out, nil
}

// FleetImpactOfAdvisory reads the sites of scope the advisory (key: its
// id or an alias, upper-cased as osv.AdvisoryKeys writes them) affects
// now and those that ever installed a version it names.
func (e *Executor) FleetImpactOfAdvisory(ctx context.Context, scope FleetScope, key string) (readmodel.FleetImpact, error) {
	out := readmodel.FleetImpact{Advisory: key}
	c, err := e.q.FleetImpactAdvisoryCounts(ctx, e.dbtx, db.FleetImpactAdvisoryCountsParams{Limited: scope.Limited,
		SiteIds: scope.ids(), AdvisoryKey: key})
	if err != nil {
		return out, mapError(fmt.Errorf("count the sites %s affects: %w", key, err))
	}
	out.SitesNow, out.SitesEver = int(c.Now), int(c.Ever)
	now, err := e.q.FleetImpactAdvisoryNow(ctx, e.dbtx, db.FleetImpactAdvisoryNowParams{AdvisoryKey: key, Limited: scope.Limited,
		SiteIds: scope.ids(), RowLimit: readmodel.FleetImpactLimit})
	if err != nil {
		return out, mapError(fmt.Errorf("read the sites %s affects: %w", key, err))
	}
	out.Now = make([]readmodel.FleetImpactNow, len(now))
	for i, r := range now {
		out.Now[i] = readmodel.FleetImpactNow{Site: r.Site, Owner: r.Owner, Name: r.Name, Version: r.Version, InstanceID: r.InstanceID,
			AdvisoryID: r.AdvisoryID}
		if r.Fix != nil {
			var fix readmodel.TreeFix
			if err := json.Unmarshal(r.Fix, &fix); err != nil {
				return out, fmt.Errorf("decode the fix of %s on %s at %s: %w", r.AdvisoryID, r.InstanceID, r.Site, err)
			}
			out.Now[i].Fix, out.Now[i].FixText = &fix, readmodel.TreeFixText(fix)
		}
	}
	ever, err := e.q.FleetImpactAdvisoryEver(ctx, e.dbtx, db.FleetImpactAdvisoryEverParams{RowLimit: readmodel.FleetImpactLimit,
		AdvisoryKey: key, Limited: scope.Limited, SiteIds: scope.ids()})
	if err != nil {
		return out, mapError(fmt.Errorf("read the sites %s affected: %w", key, err))
	}
	out.Ever = make([]readmodel.FleetImpactEver, len(ever))
	for i, r := range ever {
		out.Ever[i] = readmodel.FleetImpactEver{Site: r.Site, Owner: r.Owner, Name: r.Name, Version: r.Version,
			InstalledAt: r.InstalledAt.UTC(), RemovedAt: utc(r.RemovedAt), Runs: nonNil(r.Runs)}
	}
	return out, nil
}

// FleetPackageVersions reads the versions of the package name that any
// site installs or installed (within the history kept).
func (e *Executor) FleetPackageVersions(ctx context.Context, name string) ([]string, error) {
	vs, err := e.q.FleetPackageVersions(ctx, e.dbtx, name)
	if err != nil {
		return nil, mapError(fmt.Errorf("read the versions of %q: %w", name, err))
	}
	return vs, nil
}

// FleetImpactOfPackage reads the sites of scope that install the package
// name at one of versions now, with what clears each of its findings
// there, and those that ever did.
func (e *Executor) FleetImpactOfPackage(ctx context.Context, scope FleetScope, name string, versions []string) (readmodel.FleetImpact, error) {
	out := readmodel.FleetImpact{Package: name}
	if versions == nil {
		versions = []string{}
	}
	c, err := e.q.FleetImpactPackageCounts(ctx, e.dbtx, db.FleetImpactPackageCountsParams{Name: name, Versions: versions,
		Limited: scope.Limited, SiteIds: scope.ids()})
	if err != nil {
		return out, mapError(fmt.Errorf("count the sites that install %q: %w", name, err))
	}
	out.SitesNow, out.SitesEver = int(c.Now), int(c.Ever)
	now, err := e.q.FleetImpactPackageNow(ctx, e.dbtx, db.FleetImpactPackageNowParams{Name: name, Versions: versions,
		Limited: scope.Limited, SiteIds: scope.ids(), RowLimit: readmodel.FleetImpactLimit})
	if err != nil {
		return out, mapError(fmt.Errorf("read the sites that install %q: %w", name, err))
	}
	out.Now = make([]readmodel.FleetImpactNow, len(now))
	for i, r := range now {
		out.Now[i] = readmodel.FleetImpactNow{Site: r.Site, Owner: r.Owner, Name: r.Name, Version: r.Version, InstanceID: r.InstanceID,
			Fixes: []readmodel.PackageFix{}}
		if err := json.Unmarshal(r.Fixes, &out.Now[i].Fixes); err != nil {
			return out, fmt.Errorf("decode the fixes on %s at %s: %w", r.InstanceID, r.Site, err)
		}
		for k := range out.Now[i].Fixes {
			out.Now[i].Fixes[k].Text = readmodel.TreeFixText(out.Now[i].Fixes[k].Fix)
		}
	}
	ever, err := e.q.FleetImpactPackageEver(ctx, e.dbtx, db.FleetImpactPackageEverParams{Name: name, Versions: versions,
		Limited: scope.Limited, SiteIds: scope.ids(), RowLimit: readmodel.FleetImpactLimit})
	if err != nil {
		return out, mapError(fmt.Errorf("read the sites that installed %q: %w", name, err))
	}
	out.Ever = make([]readmodel.FleetImpactEver, len(ever))
	for i, r := range ever {
		out.Ever[i] = readmodel.FleetImpactEver{Site: r.Site, Owner: r.Owner, Name: r.Name, Version: r.Version,
			InstalledAt: r.InstalledAt.UTC(), RemovedAt: utc(r.RemovedAt), Runs: nonNil(r.Runs)}
	}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
