package updatecheck

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// SetDismissed dismisses (or restores) an advisory of an installed
// component, audited. Nothing is evaluated again: results list every
// advisory affecting the installed version and the read model leaves out
// the dismissed ones when it reads, so the badge and the alert follow at
// once. ErrNotFound when the component is not installed.
func (c *Checker) SetDismissed(ctx context.Context, code, advisoryID string, userID int64, dismiss bool) error {
	if _, err := c.store.Component(ctx, code); err != nil {
		return err
	}
	defer c.summary.invalidate()
	if dismiss {
		return c.store.DismissAdvisory(ctx, code, advisoryID, userID)
	}
	return c.store.UndismissAdvisory(ctx, code, advisoryID, userID)
}

// Detail is one component as its page shows it: the read model's row and
// the stored evaluation, with dismissals marked.
type Detail struct {
	store.ComponentDetail
	// Releases of the package, newest first; empty until evaluated.
	Releases []updatedoc.ReleaseStatus
	// Advisories affecting the installed version, dismissed ones included.
	Advisories []AdvisoryState
	// Update is the installable update, SecurityRelease the newest
	// security release (SecurityNeedsNewerCore: not installable on the
	// installed core), BlockedUpdate the newest release the installed core
	// cannot run; nil when none, or not evaluated. They head the page.
	Update, SecurityRelease, BlockedUpdate *updatedoc.Release
	SecurityNeedsNewerCore                 bool
}

// AdvisoryState is an advisory affecting the installed version and whether
// an admin dismissed it for this component.
type AdvisoryState struct {
	updatedoc.AdvisoryMatch
	Dismissed bool
}

// Detail reads one component for its page; ErrNotFound when it is not
// installed. It never parses or evaluates a document: it decodes the
// evaluation stored with the current result.
func (c *Checker) Detail(ctx context.Context, code string) (Detail, error) {
	d, err := c.store.ComponentDetail(ctx, code)
	if err != nil {
		return Detail{}, err
	}
	out := Detail{ComponentDetail: d}
	if !d.Evaluated || len(d.Evaluation) == 0 {
		return out, nil
	}
	var ev updatedoc.Evaluation
	if err := json.Unmarshal(d.Evaluation, &ev); err != nil {
		return Detail{}, fmt.Errorf("stored evaluation of %q: %w", code, err)
	}
	out.Releases = ev.Releases
	out.Update, out.SecurityRelease, out.BlockedUpdate = ev.Update, ev.SecurityRelease, ev.BlockedUpdate
	out.SecurityNeedsNewerCore = ev.SecurityNeedsNewerCore
	for _, a := range ev.Advisories {
		out.Advisories = append(out.Advisories, AdvisoryState{AdvisoryMatch: a, Dismissed: slices.Contains(d.Dismissed, a.ID)})
	}
	return out, nil
}
