package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// CatalogFilter narrows the catalog: Status is one of
// readmodel.CatalogFilters (FilterAll for all; Filter.Shows defines each).
//
// A page starts after Offset rows, or, when After is set, after the row at
// After (keyset pagination: rows added or removed before the cursor do not
// shift the rows after it). Offset and After are not used together.
type CatalogFilter struct {
	Status readmodel.Filter
	Search string
	Limit  int
	Offset int
	After  *CatalogCursor
}

// CatalogCursor is a row's place in the catalog's order: its rank
// (upcheck_catalog_rank: what needs action first), lower(name) and code.
type CatalogCursor struct {
	Rank int
	Name string
	Code string
}

// CatalogEntry is one row of the catalog snapshot: the read model's row,
// with its place in the order and its search keys.
type CatalogEntry struct {
	readmodel.CatalogRow
	// Cursor is this row's place in the order: a page after it starts
	// with the next row.
	Cursor CatalogCursor `json:"-"`
	// AdvisoryKeys are the ids and aliases of the advisories of the
	// current result, upper-cased: the catalog's search finds the row by
	// any of them (internal/catalog/alias.go).
	AdvisoryKeys []string `json:"-"`
}

// CatalogCounts is how many components each catalog filter shows.
type CatalogCounts struct {
	All, Attention, Updates, Security, Vulnerable, Failing, Stale, Dismissed int
	KnownExploited, Malicious, Waiting, Skipped                              int
}

// Of is the count of one filter, as CatalogFilter.Status names it; 0 for
// an unknown one.
func (c CatalogCounts) Of(status readmodel.Filter) int {
	switch status {
	case readmodel.FilterAll:
		return c.All
	case readmodel.FilterAttention:
		return c.Attention
	case readmodel.FilterUpdates:
		return c.Updates
	case readmodel.FilterSecurity:
		return c.Security
	case readmodel.FilterVulnerable:
		return c.Vulnerable
	case readmodel.FilterFailing:
		return c.Failing
	case readmodel.FilterStale:
		return c.Stale
	case readmodel.FilterDismissed:
		return c.Dismissed
	case readmodel.FilterKnownExploited:
		return c.KnownExploited
	case readmodel.FilterMalicious:
		return c.Malicious
	case readmodel.FilterWaiting:
		return c.Waiting
	case readmodel.FilterSkipped:
		return c.Skipped
	}
	return 0
}

// ComponentDetail is one component from the read model (the stored facts
// of readmodel.DetailRow) with its whole stored evaluation and registry
// facts (JSON, decoded by catalog) and its skip.
type ComponentDetail struct {
	readmodel.DetailRow
	// Evaluation is the stored evaluation (release.Evaluation's JSON).
	Evaluation []byte
	// RegistryFacts are the npm registry's facts (readmodel.RegistryFacts,
	// JSON; nil otherwise).
	RegistryFacts []byte
	// Skip is the component's skip (nil: none), whether or not it hides a
	// release now (docs/policy.md).
	Skip *Skip
}

// timeOf is a timestamptz column sqlc could not type (an aggregate read
// through a view): a time in UTC, or nil for NULL.
func timeOf(v any) *time.Time {
	t, ok := v.(time.Time)
	if !ok {
		return nil
	}
	return utc(&t)
}

// ComponentDetail reads one component of site; ErrNotFound when it is not
// installed.
func (e *Executor) ComponentDetail(ctx context.Context, site int64, code string) (ComponentDetail, error) {
	r, err := e.q.ComponentDetail(ctx, e.dbtx, db.ComponentDetailParams{Site: site, Code: code})
	if err != nil {
		return ComponentDetail{}, mapError(err)
	}
	return ComponentDetail{
		DetailRow: readmodel.DetailRow{
			Code: r.Code, Name: r.Name, Installed: r.InstalledVersion, SourceURL: deref(r.SourceUrl),
			PinnedKey: deref(r.PinnedKey), Latest: deref(r.LatestVersion), Evaluated: r.Evaluated, Stale: r.Stale,
			Failing: r.Failing, SourceFailing: r.SourceFailing, EvalError: deref(r.EvalError),
			Dismissed: r.Dismissed, LastSuccessAt: r.LastSuccessAt, LastAttemptAt: r.LastAttemptAt, ExpiresAt: r.ExpiresAt,
			LastError: deref(r.LastError), LastErrorKind: deref(r.LastErrorKind), LastErrorArgs: storedFailureArgs(r.LastErrorArgs),
			UpdateAvailable: r.UpdateAvailable, Security: r.Security, Vulnerable: r.Vulnerable,
			VulnerableNoFix: r.VulnerableNoFix, NeedsNewerCore: r.NeedsNewerCore, SecuritySince: timeOf(r.SecuritySince),
			CoreVersion: r.CoreVersion, Deprecated: deref(r.Deprecated), ProvenanceLost: deref(r.ProvenanceLost),
			Package: deref(r.Package), KnownExploited: r.KnownExploited, Malicious: r.Malicious, OSVReadAt: timeOf(r.OsvReadAt),
			PolicyText: r.Policy, PinDowngrade: deref(r.PinDowngrade),
			PinDowngradedAt: utc(r.PinDowngradedAt), NewPublisherVersion: deref(r.NewPublisherVersion),
			NewPublisher: deref(r.NewPublisher),
		},
		Evaluation: r.Evaluation, RegistryFacts: r.RegistryFacts, Skip: detailSkip(r),
	}, nil
}

// detailSkip is the component's skip as ComponentDetail read it; nil:
// none.
func detailSkip(r db.ComponentDetailRow) *Skip {
	if r.SkipVersion == nil || r.SkippedAt == nil {
		return nil
	}
	return &Skip{Code: r.Code, Version: *r.SkipVersion, Reason: deref(r.SkipReason), By: deref(r.SkipActor),
		FromManifest: r.SkipFromManifest, At: r.SkippedAt.UTC()}
}

// runScan is how many of the newest runs the history reads to fill a page:
// enough for a page of runs between long streaks of refusals.
const runScan = 2000

// Runs returns the latest check runs, newest first, with repeated refusals
// folded into one entry (see queries/check_runs.sql).
func (e *Executor) Runs(ctx context.Context, limit int) ([]readmodel.RunRow, error) {
	rows, err := e.q.CheckRunList(ctx, e.dbtx, db.CheckRunListParams{MaxRows: int32(limit), ScanRows: runScan})
	if err != nil {
		return nil, mapError(fmt.Errorf("read check history: %w", err))
	}
	out := make([]readmodel.RunRow, len(rows))
	for i, r := range rows {
		out[i] = readmodel.RunRow{
			ID: r.ID, Trigger: r.Trigger, Actor: deref(r.Actor), Status: r.Status, Error: deref(r.Error),
			Repeats: int(r.Repeats), FirstStartedAt: r.FirstStartedAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt, Fetched: int(r.SourcesFetched),
			NotModified: int(r.SourcesNotModified), Failed: int(r.SourcesFailed), Skipped: int(r.SourcesSkipped),
			Unwritten: int(r.SourcesUnwritten),
		}
		if r.DurationMs != nil {
			out[i].DurationMS = *r.DurationMs
		}
	}
	return out, nil
}

// SourceHealth lists the sources the local site's components use,
// failing ones first (SiteSourceHealth of LocalSite).
func (e *Executor) SourceHealth(ctx context.Context) ([]readmodel.SourceRow, error) {
	return e.SiteSourceHealth(ctx, LocalSite)
}

// SiteSourceHealth lists the sources site's components use, failing ones
// first: each read once for the fleet, with its state as the site sees it
// (how many of its components use it, their pin, stale from the first's
// installation).
func (e *Executor) SiteSourceHealth(ctx context.Context, site int64) ([]readmodel.SourceRow, error) {
	rows, err := e.q.SourceHealthList(ctx, e.dbtx, site)
	if err != nil {
		return nil, mapError(fmt.Errorf("read source health: %w", err))
	}
	out := make([]readmodel.SourceRow, len(rows))
	for i, r := range rows {
		out[i] = readmodel.SourceRow{
			URL: deref(r.Url), Components: int(r.Components), HasDocument: r.HasDocument, LastSuccessAt: r.LastSuccessAt,
			LastAttemptAt: r.LastAttemptAt, LastError: deref(r.LastError), ConsecutiveFailures: int(r.ConsecutiveFailures),
			ExpiresAt: r.ExpiresAt, Expired: r.Expired, Stale: r.Stale, Failing: r.Failing, SignatureState: r.SignatureState,
			LastErrorKind: deref(r.LastErrorKind), LastErrorArgs: storedFailureArgs(r.LastErrorArgs), Offline: r.Offline,
			Pin: r.Pin, TrustedCount: int(r.TrustedCount), KeyVersion: r.KeyVersion, Sequence: r.Sequence,
			VerifiedBy: strings.Fields(r.VerifiedBy), Untrusted: r.Untrusted, Unsigned: r.Unsigned, ExpiresSoon: r.ExpiresSoon,
			Kind: readmodel.SourceKindOf(deref(r.Url)), Package: readmodel.PackageOf(deref(r.Url)),
			Registry: r.Registry, RegistryKeys: r.RegistryKeys, KeysChangedAt: r.KeysChangedAt,
		}
	}
	return out, nil
}
