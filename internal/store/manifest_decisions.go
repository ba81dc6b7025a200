package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// ManifestDismissal is a dismissal the manifest declares
// (docs/policy.md "Dismissals and skips as code").
type ManifestDismissal struct {
	Code, AdvisoryID, Reason string
	ExpiresAt                *time.Time
}

func (d ManifestDismissal) key() string { return d.Code + "\x00" + strings.ToUpper(d.AdvisoryID) }

// ApplyManifestDismissals makes the standing dismissals from the manifest
// exactly want, audited, and reports how many it changed: a declared one
// that is new or says something else replaces what stands for its
// advisory (an admin's too); one the manifest no longer declares ends
// ("undone"). Run by the manifest sync, in its transaction.
func (t *Tx) ApplyManifestDismissals(ctx context.Context, want []ManifestDismissal) (int, error) {
	standing, err := t.q.DismissalManifestStanding(ctx, t.tx, LocalSite)
	if err != nil {
		return 0, mapError(fmt.Errorf("manifest dismissals: %w", err))
	}
	wanted := make(map[string]ManifestDismissal, len(want))
	for _, d := range want {
		wanted[d.key()] = d
	}
	changed := 0
	kept := map[string]bool{}
	var undone, replaced []int64
	for _, s := range standing {
		k := ManifestDismissal{Code: s.ComponentCode, AdvisoryID: s.AdvisoryID}.key()
		if w, ok := wanted[k]; ok && w.Reason == s.Reason && sameTime(w.ExpiresAt, s.ExpiresAt) {
			kept[k] = true
			continue
		}
		if _, ok := wanted[k]; ok {
			replaced = append(replaced, s.ID) // by the one below, audited as a dismissal
			continue
		}
		undone = append(undone, s.ID)
		changed++
		if err := t.AuditAppend(ctx, 0, readmodel.AuditAdvisoryUndismiss, map[string]any{"component": s.ComponentCode,
			"advisory": s.AdvisoryID, "dismissal": s.ID, "reason": s.Reason, "by": ManifestActor, "from_manifest": true}); err != nil {
			return 0, err
		}
	}
	for how, ids := range map[string][]int64{"undone": undone, "replaced": replaced} {
		if len(ids) == 0 {
			continue
		}
		if err := t.q.DismissalEndByIDs(ctx, t.tx, db.DismissalEndByIDsParams{How: how, Ids: ids}); err != nil {
			return 0, mapError(fmt.Errorf("manifest dismissals: end: %w", err))
		}
	}
	for _, d := range want {
		if kept[d.key()] {
			continue
		}
		replaced, err := t.q.DismissalEndStanding(ctx, t.tx, db.DismissalEndStandingParams{Site: LocalSite, ComponentCode: d.Code, AdvisoryID: d.AdvisoryID})
		if err != nil {
			return 0, mapError(fmt.Errorf("manifest dismissals: replace: %w", err))
		}
		id, err := t.q.DismissalManifestCreate(ctx, t.tx, db.DismissalManifestCreateParams{Site: LocalSite, ComponentCode: d.Code,
			AdvisoryID: d.AdvisoryID, Reason: d.Reason, ExpiresAt: d.ExpiresAt})
		if err != nil {
			return 0, mapError(fmt.Errorf("manifest dismissals: dismiss %q of %q: %w", d.AdvisoryID, d.Code, dismissalConstraint(err)))
		}
		detail := map[string]any{"component": d.Code, "advisory": d.AdvisoryID, "dismissal": id, "reason": d.Reason,
			"expires_at": d.ExpiresAt, "by": ManifestActor, "from_manifest": true}
		if len(replaced) > 0 {
			detail["replaced"] = replaced[0]
		}
		if err := t.AuditAppend(ctx, 0, readmodel.AuditAdvisoryDismiss, detail); err != nil {
			return 0, err
		}
		changed++
	}
	return changed, nil
}

// ApplyManifestSkips makes the skips from the manifest exactly want (by
// component), audited, and reports how many it changed: a declared skip
// replaces the component's (an admin's too); a manifest skip no longer
// declared ends. The manifest is the local site's (LocalSite).
func (t *Tx) ApplyManifestSkips(ctx context.Context, want []Skip) (int, error) {
	current, err := t.Skips(ctx, LocalSite)
	if err != nil {
		return 0, err
	}
	wanted := make(map[string]Skip, len(want))
	for _, s := range want {
		wanted[s.Code] = s
	}
	changed := 0
	for code, cur := range current {
		if _, ok := wanted[code]; ok || !cur.FromManifest {
			continue
		}
		if _, err := t.SkipDelete(ctx, LocalSite, code, 0, ManifestActor, true); err != nil {
			return 0, err
		}
		changed++
	}
	for _, s := range want {
		if cur, ok := current[s.Code]; ok && cur.FromManifest && cur.Version == s.Version && cur.Reason == strings.TrimSpace(s.Reason) {
			continue
		}
		s.Site, s.By, s.UserID, s.FromManifest = LocalSite, ManifestActor, 0, true
		if err := t.SkipPut(ctx, s); err != nil {
			return 0, err
		}
		changed++
	}
	return changed, nil
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}
