package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
)

// Detail is one component as its page and the API show it: the read
// model's row (readmodel.DetailRow, in store.ComponentDetail, its
// evaluation's facts filled here) and the stored evaluation, with
// dismissals marked.
type Detail struct {
	store.ComponentDetail
	// Releases of the package, newest first; empty until evaluated.
	Releases []release.ReleaseStatus
	// Advisories affecting the installed version, dismissed ones included.
	Advisories []AdvisoryState
	// Withdrawn advisories whose range holds the installed version: they
	// do not count, the page lists them as withdrawn.
	Withdrawn []release.AdvisoryMatch
	// Update is the installable update, SecurityRelease the newest
	// security release (DetailRow.SecurityNeedsNewerCore: not installable
	// on the installed core), BlockedUpdate the newest release the
	// installed core cannot run; nil when none, or not evaluated. They
	// head the page.
	Update, SecurityRelease, BlockedUpdate *release.Release
	// OfferPolicy is the component's policy, parsed (the zero Policy: every
	// update, as soon as it is published).
	OfferPolicy release.Policy
	// Waiting is the newest release newer than Update that has not soaked,
	// Held the newest one the policy does not offer, with why; nil: none
	// (docs/policy.md).
	Waiting *release.Waiting
	Held    *release.Held
	// SkipHides: the component's skip (ComponentDetail.Skip) hides a
	// release from it now.
	SkipHides bool
	// Between is every release between the installed version and Update
	// (the newest release when none is offered), newest first, each with
	// what the policy makes of it: what an operator reads before updating.
	Between []release.ReleaseStatus
}

// readDependencies counts what site's component d brings into the site's
// tree and reads what in it needs attention under mode, in the detail's
// transaction; nothing when no tree was read.
func readDependencies(ctx context.Context, tx *store.Tx, site int64, d *store.ComponentDetail, mode readmodel.DevMode) error {
	tree, err := tx.TreeStateRow(ctx, site)
	if err != nil || tree == nil {
		return err
	}
	n, err := tx.ComponentDependencies(ctx, site, d.Code, d.Package)
	if err != nil {
		return err
	}
	d.Dependencies = &n
	d.DependencyCounts, d.DependencyFindings, err = tx.ComponentTreeFindings(ctx, site, d.Code, d.Package, mode)
	return err
}

// AdvisoryState is an advisory affecting the installed version and where
// its dismissal stands.
type AdvisoryState struct {
	release.AdvisoryMatch
	// Dismissed: a dismissal is in force; the advisory does not count.
	Dismissed bool
	// Dismissal is the standing dismissal, in force or not; nil: none.
	Dismissal *store.Dismissal
	// Changes says how the advisory differs from what was dismissed, when
	// it does: the reason a standing dismissal that has not expired is not
	// in force.
	Changes []AdvisoryChange
}

// The members of an advisory's fingerprint (AdvisoryChange.Member).
const (
	MemberSeverity = "severity"
	MemberAffected = "affected"
	MemberFixedIn  = "fixed_in"
)

// AdvisoryChange is one member of an advisory that is not what it was
// when dismissed. From and To are "" for an absent member (FixedIn "": no
// fix).
type AdvisoryChange struct {
	Member   string
	From, To string
}

// Detail reads one of the local site's components for its page
// (SiteDetail).
func (r *Reads) Detail(ctx context.Context, code string) (Detail, error) {
	return r.SiteDetail(ctx, store.LocalSite, code)
}

// SiteDetail reads one of site's components for its page; ErrNotFound
// when the site does not install it. It never parses or evaluates a document: it decodes the
// evaluation stored with the current result. It is read anew each time,
// nothing is cached: the component and, once evaluated, its standing
// dismissals, in one read-only transaction (store.ReadTx), so that a
// dismissal made or ended between the two reads cannot mix two moments
// on one page.
func (r *Reads) SiteDetail(ctx context.Context, site int64, code string) (Detail, error) {
	var d store.ComponentDetail
	var standing map[string]store.Dismissal
	err := r.store.ReadTx(ctx, func(tx *store.Tx) error {
		var err error
		if d, err = tx.ComponentDetail(ctx, site, code); err != nil {
			return err
		}
		if err = readDependencies(ctx, tx, site, &d, r.devMode); err != nil || !d.Evaluated || len(d.Evaluation) == 0 {
			return err
		}
		standing, err = tx.StandingDismissals(ctx, site, code)
		return err
	})
	if err != nil {
		return Detail{}, err
	}
	out := Detail{ComponentDetail: d}
	if out.OfferPolicy, err = release.ParsePolicyText(d.PolicyText); err != nil {
		return Detail{}, fmt.Errorf("policy of %q: %w", code, err)
	}
	if !d.Evaluated || len(d.Evaluation) == 0 {
		return out, nil
	}
	var ev release.Evaluation
	if err := json.Unmarshal(d.Evaluation, &ev); err != nil {
		return Detail{}, fmt.Errorf("stored evaluation of %q: %w", code, err)
	}
	// A release is a security release for the site when the offer says so
	// (ReleaseStatus.SecurityFix): the page's release lists, the releases
	// in between and the API say the one thing.
	for i := range ev.Releases {
		ev.Releases[i].Security = ev.Releases[i].Security || ev.Releases[i].SecurityFix
	}
	out.Releases = ev.Releases
	out.Update, out.SecurityRelease, out.BlockedUpdate = ev.Update, ev.SecurityRelease, ev.BlockedUpdate
	out.SecurityNeedsNewerCore = ev.SecurityNeedsNewerCore
	out.Withdrawn = ev.Withdrawn
	out.Waiting, out.Held, out.SkipHides = ev.Waiting, ev.Held, ev.Skipped != ""
	out.Between = between(&ev)
	if ev.Update != nil {
		out.UpdateVersion = ev.Update.Version
		out.UpdateCommand = readmodel.UpdateCommand(d.SourceURL, ev.Update.Version, ev.Update.URL)
	}
	if ev.Fix != nil {
		out.FixVersion, out.FixCommand = ev.Fix.Version, readmodel.UpdateCommand(d.SourceURL, ev.Fix.Version, ev.Fix.URL)
	}
	if len(d.RegistryFacts) > 0 {
		var facts readmodel.RegistryFacts
		if err := json.Unmarshal(d.RegistryFacts, &facts); err != nil {
			return Detail{}, fmt.Errorf("stored registry facts of %q: %w", code, err)
		}
		out.Registry = &facts
	}
	for _, a := range ev.Advisories {
		st := AdvisoryState{AdvisoryMatch: a, Dismissed: slices.Contains(d.Dismissed, a.ID)}
		if dm, ok := standing[a.ID]; ok {
			st.Dismissal = &dm
			st.Changes = advisoryChanges(dm.Dismissed, a.Advisory)
		}
		out.Advisories = append(out.Advisories, st)
		if ev.Fix != nil && !st.Dismissed && slices.Contains(ev.FixIDs, a.ID) {
			out.FixIDs = append(out.FixIDs, a.ID)
		}
	}
	return out, nil
}

// advisoryChanges compares an advisory with its fingerprint when it was
// dismissed, member by member, as upcheck_dismissal_in_force does.
func advisoryChanges(was store.Fingerprint, now release.Advisory) []AdvisoryChange {
	var out []AdvisoryChange
	for _, m := range []AdvisoryChange{
		{MemberSeverity, was.Severity, now.Severity},
		{MemberAffected, was.Affected, now.Affected},
		{MemberFixedIn, was.FixedIn, now.FixedIn},
	} {
		if m.From != m.To {
			out = append(out, m)
		}
	}
	return out
}

// between lists the releases from the offered update down to the one
// after the installed version (every weighed release newer than it when
// none is offered), newest first: those newer than the offered update
// are not in between (the page says why they wait or are held).
func between(ev *release.Evaluation) []release.ReleaseStatus {
	all := ev.Between()
	if ev.Update == nil {
		return all
	}
	for i, r := range all {
		if r.Version == ev.Update.Version {
			return all[i:]
		}
	}
	return all
}
