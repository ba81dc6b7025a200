package updatecheck

import (
	"context"
	"errors"
	"fmt"

	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
)

// A registered site's own update policy (docs/design.md "Many sites",
// docs/policy.md): the object a manifest's "policy" holds, read by the
// manifest's parser (manifest.ParsePolicy), stored on the site
// (sites.policy) and given to every one of its components, which a push
// writes under it and a check and the minute's re-offer evaluate under.

// ErrSitePolicyLocal refuses a policy set on the local site: its policy is
// its manifest's, or its lockfile's --policy.
var ErrSitePolicyLocal = errors.New(`the local site's policy is its manifest's "policy" (for a lockfile, ` +
	`components sync --policy or UPCHECK_LOCKFILE_POLICY), not set here`)

// SitePolicyError is a policy the manifest's parser refused, in its words
// ("offer \"weekly\" is not one of all, minor, patch, security"): nothing
// was written.
type SitePolicyError struct{ Err error }

func (e *SitePolicyError) Error() string { return e.Err.Error() }
func (e *SitePolicyError) Unwrap() error { return e.Err }

// SitePolicyRequest is a change of a registered site's policy: Body is the
// policy as JSON, as a manifest's "policy" holds it ({} the default: every
// release at once). UserID (0 for none) is who asked, for the audit log.
type SitePolicyRequest struct {
	Site   store.Site
	Body   []byte
	UserID int64
}

// SitePolicyReport says what a change of a site's policy did.
type SitePolicyReport struct {
	Site string `json:"site"`
	// Policy is the site's policy now (the zero Policy: the default).
	Policy release.Policy `json:"policy"`
	// Unchanged: it was the site's policy already; nothing was written.
	Unchanged bool `json:"unchanged"`
	// Components is how many of the site's components changed policy,
	// Reevaluated how many were evaluated again under it from the stored
	// documents (the others at the next check).
	Components  int `json:"components"`
	Reevaluated int `json:"reevaluated"`
}

// SitePolicy is the policy a registered site's components are offered
// under (the zero Policy: the default). ErrSitePolicyLocal for the local
// site, store.ErrNotFound when the site is gone.
func (c *Checker) SitePolicy(ctx context.Context, site store.Site) (release.Policy, error) {
	if site.Local() {
		return release.Policy{}, ErrSitePolicyLocal
	}
	text, err := c.store.SitePolicy(ctx, site.ID)
	if err != nil {
		return release.Policy{}, err
	}
	return release.ParsePolicyText(text)
}

// SetSitePolicy makes req.Body the registered site's policy: parsed by the
// manifest's parser first (SitePolicyError: nothing is written), then
// stored with every component of the site under it in one transaction
// under the lease's lock, as a push writes them (a check's fenced writes
// see the components under one policy or the other, and a result
// evaluated under the old one is refused by the guarded write), audited
// (site.policy) when it changed. The components are then evaluated again
// from the stored documents, without a fetch, so that their offer changes
// at once; what is not evaluated here (an error) the next check
// evaluates. ErrSitePolicyLocal for the local site; store.ErrNotFound
// when the site is gone.
func (c *Checker) SetSitePolicy(ctx context.Context, req SitePolicyRequest) (SitePolicyReport, error) {
	rep := SitePolicyReport{Site: req.Site.Name}
	if req.Site.Local() {
		return rep, ErrSitePolicyLocal
	}
	p, err := manifest.ParsePolicy(req.Body)
	if err != nil {
		return rep, &SitePolicyError{Err: err}
	}
	// A site's "none" clears nothing below it, and its "all" is the tier
	// unset: stored as no member, so that one policy has one text, and the
	// site's text is its components' (Manifest.PolicyOf).
	p = release.Policy{}.With(p)
	if p.Offer == release.OfferAll {
		p.Offer = ""
	}
	rep.Policy = p
	text := p.Text()
	err = c.lease.WithLock(ctx, func(tx *store.Tx) error {
		before, n, err := tx.SitePolicySet(ctx, req.Site.ID, text)
		if err != nil {
			return err
		}
		rep.Components, rep.Unchanged = n, before == text
		if rep.Unchanged {
			return nil
		}
		return tx.AuditAppend(ctx, req.UserID, readmodel.AuditSitePolicy,
			map[string]any{"site": req.Site.Name, "before": before, "policy": text, "components": n})
	})
	if err != nil {
		return rep, fmt.Errorf("policy of %s: %w", req.Site.Name, err)
	}
	if rep.Unchanged {
		return rep, nil
	}
	c.reads.Changed()
	// The site's counts of its components, once they are evaluated.
	ctx, countSites := c.withCounts(ctx)
	defer countSites()
	countsDue(ctx, req.Site.ID)
	if rep.Components > 0 {
		if rep.Reevaluated, err = NewSyncer(c).evaluateStored(ctx, req.Site.ID); err != nil {
			// The policy is stored: the next check evaluates under it.
			c.logger.WarnContext(ctx, "the site's components were not evaluated under its new policy; the next check evaluates them",
				"site", req.Site.Name, "error", err)
		}
	}
	c.logger.InfoContext(ctx, "site policy set", "site", req.Site.Name, "policy", text, "unchanged", rep.Unchanged,
		"components", rep.Components, "reevaluated", rep.Reevaluated)
	return rep, nil
}
