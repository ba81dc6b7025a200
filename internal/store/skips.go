package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// ErrFromManifest refuses to change in the AdminCP a dismissal or a skip
// that the manifest declares: it is changed in the manifest, reviewed with
// the site's code (docs/policy.md).
var ErrFromManifest = errors.New("declared in the manifest: change it there")

// ManifestActor is who the audit log and the pages say declared what the
// manifest declares.
const ManifestActor = "manifest"

// Skip is a skipped version of a component (component_skips): a plain
// release at or below Version is not offered to it.
type Skip struct {
	// Site is the site whose component it is (sites.id).
	Site                  int64
	Code, Version, Reason string
	// By is who skipped it, as they were called ("manifest" for the
	// manifest's); UserID 0 for no user.
	By           string
	UserID       int64
	FromManifest bool
	At           time.Time
}

func skipFromRow(r db.ComponentSkip) Skip {
	s := Skip{Site: r.SiteID, Code: r.Code, Version: r.Version, Reason: r.Reason, By: r.Actor, FromManifest: r.FromManifest, At: r.SkippedAt}
	if r.UserID != nil {
		s.UserID = *r.UserID
	}
	return s
}

// Skips returns every standing skip of site, by component code.
func (e *Executor) Skips(ctx context.Context, site int64) (map[string]Skip, error) {
	rows, err := e.q.SkipList(ctx, e.dbtx, site)
	if err != nil {
		return nil, mapError(fmt.Errorf("list skips: %w", err))
	}
	out := make(map[string]Skip, len(rows))
	for _, r := range rows {
		out[r.Code] = skipFromRow(r)
	}
	return out, nil
}

// FleetSkippedVersions returns every site's skipped versions, by
// component.
func (e *Executor) FleetSkippedVersions(ctx context.Context) (map[ComponentKey]string, error) {
	rows, err := e.q.SkipVersionsFleet(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(fmt.Errorf("list the fleet's skips: %w", err))
	}
	out := make(map[ComponentKey]string, len(rows))
	for _, r := range rows {
		out[ComponentKey{Site: r.SiteID, Code: r.Code}] = r.Version
	}
	return out, nil
}

// SkipOf returns the skip of site's component; false when it has none.
func (e *Executor) SkipOf(ctx context.Context, site int64, code string) (Skip, bool, error) {
	r, err := e.q.SkipGet(ctx, e.dbtx, db.SkipGetParams{Site: site, Code: code})
	if errors.Is(mapError(err), ErrNotFound) {
		return Skip{}, false, nil
	}
	if err != nil {
		return Skip{}, false, mapError(err)
	}
	return skipFromRow(r), true, nil
}

// SkipPut records s, replacing the component's skip, with its audit row
// (component.skip) in the same transaction. The reason is required, as a
// dismissal's. ErrFromManifest when s is not the manifest's and the
// manifest declares the component's skip.
func (t *Tx) SkipPut(ctx context.Context, s Skip) error {
	s.Reason = strings.TrimSpace(s.Reason)
	switch {
	case s.Reason == "":
		return ErrReasonRequired
	case utf8.RuneCountInString(s.Reason) > MaxReasonLength:
		return ErrReasonTooLong
	}
	if !s.FromManifest {
		if cur, ok, err := t.SkipOf(ctx, s.Site, s.Code); err != nil {
			return err
		} else if ok && cur.FromManifest {
			return ErrFromManifest
		}
	}
	prev, err := t.q.SkipPut(ctx, t.tx, db.SkipPutParams{Site: s.Site, Code: s.Code, Version: s.Version, Reason: s.Reason, Actor: s.By,
		UserID: optionalID(s.UserID), FromManifest: s.FromManifest})
	if err != nil {
		return mapError(fmt.Errorf("skip %s of %q: %w", s.Version, s.Code, err))
	}
	detail := map[string]any{"component": s.Code, "version": s.Version, "reason": s.Reason, "by": s.By,
		"from_manifest": s.FromManifest}
	if prev != "" {
		detail["replaced"] = prev
	}
	return t.auditSiteAppend(ctx, s.UserID, readmodel.AuditComponentSkip, s.Site, detail)
}

// SkipDelete ends the skip of site's component, with its audit row
// (component.unskip), and returns the version it skipped ("" when there
// was none: nothing is audited). fromManifest says the manifest sync ends
// it; otherwise a skip the manifest declares is refused (ErrFromManifest).
func (t *Tx) SkipDelete(ctx context.Context, site int64, code string, userID int64, by string, fromManifest bool) (string, error) {
	cur, ok, err := t.SkipOf(ctx, site, code)
	switch {
	case err != nil:
		return "", err
	case !ok:
		return "", nil
	case cur.FromManifest && !fromManifest:
		return "", ErrFromManifest
	}
	version, err := t.q.SkipDelete(ctx, t.tx, db.SkipDeleteParams{Site: site, Code: code})
	if err != nil {
		return "", mapError(fmt.Errorf("unskip %q: %w", code, err))
	}
	return version, t.auditSiteAppend(ctx, userID, readmodel.AuditComponentUnskip, site,
		map[string]any{"component": code, "version": version, "reason": cur.Reason, "by": by, "from_manifest": cur.FromManifest})
}

// PinDowngrade is a manifest sync that lowered the trust of a component's
// source (pin_downgrades): Pin is the component's pin after it.
type PinDowngrade struct {
	Site                         int64
	Code, SourceURL, Pin, Reason string
}

// PinDowngradePut records d, replacing the component's earlier one.
func (t *Tx) PinDowngradePut(ctx context.Context, d PinDowngrade) error {
	return mapError(t.q.PinDowngradePut(ctx, t.tx, db.PinDowngradePutParams{Site: d.Site, Code: d.Code, SourceUrl: d.SourceURL, Pin: d.Pin, Reason: d.Reason}))
}

// OfferChanged lists the components, every site's, whose current
// result's offer changed with time (a waiting release soaked), ordered by
// source, to be evaluated again from the stored documents.
func (e *Executor) OfferChanged(ctx context.Context) ([]Unevaluated, error) {
	rows, err := e.q.ResultsOfferChanged(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(fmt.Errorf("list results whose offer changed: %w", err))
	}
	out := make([]Unevaluated, len(rows))
	for i, r := range rows {
		out[i] = Unevaluated{Site: r.SiteID, Code: r.Code, InstalledVersion: r.InstalledVersion, SourceURL: r.SourceUrl,
			PinnedKey: deref(r.PinnedKey), Package: r.Package, Policy: r.Policy, Skipped: r.SkippedVersion, Approvals: r.Approvals}
	}
	return out, nil
}
