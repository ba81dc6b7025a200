package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// ReadModelStamp says until when rows read from the read model still hold
// (read_model_version, upcheck_read_model_turns_at): no
// write to what they read has committed since Version, and the clock has
// not passed TurnsAt. Known is false for a read of no rows, which carries
// neither.
type ReadModelStamp struct {
	Version int64
	TurnsAt *time.Time
	Known   bool
}

// CatalogRows reads every component of the local site from the read model
// (SiteCatalogRows).
func (e *Executor) CatalogRows(ctx context.Context, mode readmodel.DevMode) ([]CatalogEntry, ReadModelStamp, error) {
	return e.SiteCatalogRows(ctx, LocalSite, mode)
}

// SiteCatalogRows reads every component of site from the read model
// (queries/catalog.sql CatalogAll), in no particular order, with the stamp
// of the read. The catalog package orders, filters, searches and pages
// them. mode is UPCHECK_LOCKFILE_DEV: what each component's dependencies
// count (CatalogRow.TreeCounted).
func (e *Executor) SiteCatalogRows(ctx context.Context, site int64, mode readmodel.DevMode) ([]CatalogEntry, ReadModelStamp, error) {
	rows, err := e.q.CatalogAll(ctx, e.dbtx, db.CatalogAllParams{Site: site, DevMode: string(mode)})
	if err != nil {
		return nil, ReadModelStamp{}, mapError(fmt.Errorf("read catalog: %w", err))
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
			LastErrorKind: deref(r.LastErrorKind), LastErrorArgs: storedFailureArgs(r.LastErrorArgs),
			SecuritySince: timeOf(r.SecuritySince), Dismissed: int(r.DismissedCount), DismissedUntil: timeOf(r.DismissedUntil),
			Deprecated: deref(r.Deprecated), ProvenanceLost: deref(r.ProvenanceLost),
			KnownExploited: r.KnownExploited, Malicious: r.Malicious, NeedsAttention: r.NeedsAttention,
			TreeCounted: int(r.TreeCounted), TreeMalicious: int(r.TreeMalicious),
		}, Cursor: CatalogCursor{Rank: int(r.SortRank), Name: r.SortName, Code: r.Code}, AdvisoryKeys: r.AdvisoryKeys}
		row := &entries[i].CatalogRow
		if row.SourceURL != "" {
			row.SourceKind, row.Package = readmodel.SourceKindOf(row.SourceURL), readmodel.PackageOf(row.SourceURL)
		}
		if row.UpdateAvailable {
			row.UpdateCommand = readmodel.UpdateCommand(row.SourceURL, row.UpdateVersion, row.ReleaseURL)
		}
		if r.FixVersion != nil {
			row.FixVersion = *r.FixVersion
			row.FixCommand = readmodel.UpdateCommand(row.SourceURL, row.FixVersion, "")
		}
		policyFacts(row, &r)
	}
	var stamp ReadModelStamp
	if len(rows) > 0 {
		stamp = ReadModelStamp{Version: rows[0].Version, TurnsAt: timeOf(rows[0].TurnsAt), Known: true}
	}
	return entries, stamp, nil
}

// ReadModelUnchanged reports whether rows read with stamp still say what
// the read model says now: no write to what they read has committed since,
// and the clock has not turned a flag. One row; the database's clock
// judges. False for a stamp that is not Known.
func (e *Executor) ReadModelUnchanged(ctx context.Context, stamp ReadModelStamp) (bool, error) {
	if !stamp.Known {
		return false, nil
	}
	ok, err := e.q.ReadModelUnchanged(ctx, e.dbtx, db.ReadModelUnchangedParams{Version: stamp.Version, TurnsAt: stamp.TurnsAt})
	if err != nil {
		return false, mapError(fmt.Errorf("check the catalog snapshot: %w", err))
	}
	return ok, nil
}

// storedReason reads a stored reason (release.Reason's JSON); the zero
// OfferReason, which has no words, for none or for one it cannot read
// (the views then say no more than the version).
func storedReason(stored []byte) readmodel.OfferReason {
	var r readmodel.OfferReason
	if len(stored) > 0 && json.Unmarshal(stored, &r) != nil {
		return readmodel.OfferReason{}
	}
	return r
}

// failureArgsJSON is a failure's arguments as they are stored
// (last_error_args): nil, NULL, for none.
func failureArgsJSON(args readmodel.FailureArgs) ([]byte, error) {
	if args == (readmodel.FailureArgs{}) {
		return nil, nil
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("encode a failure's arguments: %w", err)
	}
	return b, nil
}

// storedFailureArgs reads a failure's stored arguments
// (readmodel.FailureArgs' JSON); the zero FailureArgs for none or for
// arguments it cannot read (the sentence then names no argument).
func storedFailureArgs(stored []byte) readmodel.FailureArgs {
	var args readmodel.FailureArgs
	if len(stored) > 0 && json.Unmarshal(stored, &args) != nil {
		return readmodel.FailureArgs{}
	}
	return args
}

// policyFacts fills row with what the policy held back and the trust
// downgrades, as r read them.
func policyFacts(row *readmodel.CatalogRow, r *db.CatalogAllRow) {
	row.Policy = deref(r.Policy)
	if r.WaitingVersion != nil {
		why := storedReason(r.WaitingReason)
		row.Waiting = &readmodel.WaitingRelease{Version: *r.WaitingVersion, Until: utc(r.WaitingUntil), Reason: readmodel.OfferReasonText(why),
			ReasonKind: why.Kind}
	}
	if r.HeldVersion != nil {
		why := storedReason(r.HeldReason)
		row.Held = &readmodel.HeldRelease{Version: *r.HeldVersion, Reason: readmodel.OfferReasonText(why), ReasonKind: why.Kind}
	}
	if r.SkippedVersion != "" && r.SkippedAt != nil {
		row.Skipped = &readmodel.SkippedVersion{Version: r.SkippedVersion, Reason: deref(r.SkipReason),
			By: readmodel.SkippedByText(deref(r.SkipActor), r.SkipFromManifest), SkippedAt: r.SkippedAt.UTC(), FromManifest: r.SkipFromManifest}
	}
	if r.NewPublisherVersion != nil {
		row.NewPublisher = &readmodel.NewPublisher{Version: *r.NewPublisherVersion, Account: deref(r.NewPublisher)}
	}
	if r.PinDowngrade != nil && r.PinDowngradedAt != nil {
		row.PinDowngrade = &readmodel.PinDowngrade{Reason: *r.PinDowngrade, At: r.PinDowngradedAt.UTC()}
	}
	if len(r.Brings) > 0 && json.Unmarshal(r.Brings, &row.Brings) != nil {
		row.Brings = nil // as stored by an older build: said again after the next check
	}
}
