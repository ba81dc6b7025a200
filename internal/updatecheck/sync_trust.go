package updatecheck

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
)

// pinDowngrade says how a pin change lowers the trust of its source
// (docs/policy.md "Trust going down"), "" when it does not: fewer
// signatures are required, or keys pinned before are pinned no more
// (every key, when the manifest pins none).
func pinDowngrade(c pinChange) string {
	if len(c.OldKeys) == 0 {
		return "" // nothing was pinned: any pin is more trust
	}
	if len(c.NewKeys) == 0 {
		return "the manifest pins no key any more: documents are no longer verified"
	}
	var removed []string
	for _, k := range c.OldKeys {
		if !slices.Contains(c.NewKeys, k) {
			removed = append(removed, k)
		}
	}
	var parts []string
	if c.NewThreshold < c.OldThreshold {
		parts = append(parts, fmt.Sprintf("the manifest requires %s where it required %d",
			signatures(c.NewThreshold), c.OldThreshold))
	}
	if len(removed) > 0 {
		parts = append(parts, "the manifest no longer pins "+strings.Join(removed, ", "))
	}
	return strings.Join(parts, "; ")
}

func signatures(n int) string {
	if n == 1 {
		return "1 signature"
	}
	return fmt.Sprintf("%d signatures", n)
}

// recordPinDowngrade writes, in the sync's transaction, the warning, the
// audit row and the notification (trust_downgrade) of a pin change that
// lowers its source's trust; pins are the components' pins after the
// change, by code.
func (w *writer) recordPinDowngrade(ctx context.Context, tx *store.Tx, site int64, c pinChange, pins map[string]string) error {
	reason := pinDowngrade(c)
	if reason == "" {
		return nil
	}
	for _, code := range c.Components {
		if err := tx.PinDowngradePut(ctx, store.PinDowngrade{Site: site, Code: code, SourceURL: c.Source, Pin: pins[code], Reason: reason}); err != nil {
			return err
		}
	}
	if err := tx.AuditAppend(ctx, 0, readmodel.AuditSourceDowngrade, map[string]any{"source": c.Source, "components": c.Components,
		"kind": readmodel.DowngradePin, "reason": reason, "by": pinActor}); err != nil {
		return err
	}
	if w.notifier == nil || site != store.LocalSite { // a registered site's pin downgrade is not told (a manifest's, the local site's)
		return nil
	}
	return w.notifier.QueuePinDowngrade(ctx, tx, c.Source, c.Components)
}

// manifestDismissals are the dismissals m declares, as the store keeps
// them.
func manifestDismissals(m *manifest.Manifest) []store.ManifestDismissal {
	out := make([]store.ManifestDismissal, 0, len(m.Dismissals))
	for _, d := range m.Dismissals {
		md := store.ManifestDismissal{Code: d.Component, AdvisoryID: d.Advisory, Reason: strings.TrimSpace(d.Reason)}
		if at, ok := d.ExpiresAt(); ok {
			md.ExpiresAt = &at
		}
		out = append(out, md)
	}
	return out
}

// manifestSkips are the skips m declares.
func manifestApprovals(m *manifest.Manifest) []store.Approval {
	out := make([]store.Approval, 0, len(m.Approvals))
	for _, a := range m.Approvals {
		out = append(out, store.Approval{Code: a.Component, Version: a.Version, Digest: a.Digest, Reason: strings.TrimSpace(a.Reason)})
	}
	return out
}

func manifestSkips(m *manifest.Manifest) []store.Skip {
	out := make([]store.Skip, 0, len(m.Skips))
	for _, s := range m.Skips {
		out = append(out, store.Skip{Code: s.Component, Version: s.Version, Reason: strings.TrimSpace(s.Reason)})
	}
	return out
}
