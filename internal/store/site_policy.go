package store

import (
	"context"
	"fmt"

	"github.com/upcheck/upcheck/internal/db"
)

// A registered site's own update policy (docs/design.md "Many sites"):
// sites.policy holds release.Policy.Text's canonical JSON ("" the
// default), and every component of the site is offered under it
// (components.policy). The local site's policy is its manifest's, never
// stored on the site.

// SitePolicy returns the stored policy text of site ("" the default);
// ErrNotFound when there is no such site.
func (e *Executor) SitePolicy(ctx context.Context, site int64) (string, error) {
	p, err := e.q.SitePolicyGet(ctx, e.dbtx, site)
	if err != nil {
		return "", mapError(fmt.Errorf("policy of site %d: %w", site, err))
	}
	return p, nil
}

// SitePolicies returns the policy text of every registered site whose
// policy is not the default, by site id.
func (e *Executor) SitePolicies(ctx context.Context) (map[int64]string, error) {
	rows, err := e.q.SitePolicies(ctx, e.dbtx)
	if err != nil {
		return nil, mapError(fmt.Errorf("sites' policies: %w", err))
	}
	out := make(map[int64]string, len(rows))
	for _, r := range rows {
		out[r.ID] = r.Policy
	}
	return out, nil
}

// SitePolicySet stores policy (release.Policy.Text) as the registered
// site's and offers every one of its components under it, in tx: it
// returns the policy it replaced and how many components changed policy.
// ErrNotFound for the local site (whose policy is its manifest's) and for
// no such site. Run it under the lease's lock, as a push writes the
// site's components: a check's fenced writes then see the components
// under one policy or the other, never a mix.
func (t *Tx) SitePolicySet(ctx context.Context, site int64, policy string) (before string, components int, err error) {
	before, err = t.q.SitePolicySet(ctx, t.tx, db.SitePolicySetParams{ID: site, Policy: policy})
	if err != nil {
		return "", 0, mapError(fmt.Errorf("set the policy of site %d: %w", site, err))
	}
	n, err := t.q.ComponentPolicySetSite(ctx, t.tx, db.ComponentPolicySetSiteParams{SiteID: site, Policy: policy})
	if err != nil {
		return "", 0, mapError(fmt.Errorf("set the policy of site %d's components: %w", site, err))
	}
	return before, int(n), nil
}
