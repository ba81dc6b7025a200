package updatecheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// Dismiss accepts the risk of an advisory for an installed component, with
// a reason and an optional expiry, audited. The dismissal records the
// advisory as the component's current result lists it; it is in force
// while it stands, its expiry has not passed and the advisory still says
// the same (store.Fingerprint), all judged by the read model when it
// reads, so the badge and the alert follow at once and nothing needs to
// run when a dismissal expires or its advisory changes.
//
// The reason is trimmed; store.ErrReasonRequired, store.ErrReasonTooLong
// and store.ErrExpiryPassed say what is wrong with the input; ErrNotFound
// means the component is not installed, ErrNoSuchAdvisory that no such
// advisory affects it now (or nothing is known about it).
func (c *Checker) Dismiss(ctx context.Context, d store.NewDismissal) (store.Dismissal, error) {
	if _, err := c.store.Component(ctx, d.Code); err != nil {
		return store.Dismissal{}, err
	}
	d.Reason = strings.TrimSpace(d.Reason)
	defer c.summary.invalidate()
	out, err := c.store.DismissAdvisory(ctx, d)
	if errors.Is(err, store.ErrNotFound) {
		return store.Dismissal{}, fmt.Errorf("%w: %q of %q", ErrNoSuchAdvisory, d.AdvisoryID, d.Code)
	}
	return out, err
}

// ErrNoSuchAdvisory means the component's current result lists no such
// advisory: there is nothing to dismiss.
var ErrNoSuchAdvisory = errors.New("no such advisory affects the component now")

// Undismiss ends the standing dismissal of an advisory (in force, expired
// or re-opened alike), audited; the advisory counts again. ErrNotFound
// when the component is not installed.
func (c *Checker) Undismiss(ctx context.Context, code, advisoryID string, userID int64) error {
	if _, err := c.store.Component(ctx, code); err != nil {
		return err
	}
	defer c.summary.invalidate()
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
	// Withdrawn advisories whose range holds the installed version: they
	// do not count, the page lists them as withdrawn.
	Withdrawn []updatedoc.AdvisoryMatch
	// Update is the installable update, SecurityRelease the newest
	// security release (SecurityNeedsNewerCore: not installable on the
	// installed core), BlockedUpdate the newest release the installed core
	// cannot run; nil when none, or not evaluated. They head the page.
	Update, SecurityRelease, BlockedUpdate *updatedoc.Release
	SecurityNeedsNewerCore                 bool
}

// AdvisoryState is an advisory affecting the installed version and where
// its dismissal stands.
type AdvisoryState struct {
	updatedoc.AdvisoryMatch
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
	standing, err := c.store.StandingDismissals(ctx, code)
	if err != nil {
		return Detail{}, err
	}
	out.Releases = ev.Releases
	out.Update, out.SecurityRelease, out.BlockedUpdate = ev.Update, ev.SecurityRelease, ev.BlockedUpdate
	out.SecurityNeedsNewerCore = ev.SecurityNeedsNewerCore
	out.Withdrawn = ev.Withdrawn
	for _, a := range ev.Advisories {
		st := AdvisoryState{AdvisoryMatch: a, Dismissed: slices.Contains(d.Dismissed, a.ID)}
		if dm, ok := standing[a.ID]; ok {
			st.Dismissal = &dm
			st.Changes = advisoryChanges(dm.Dismissed, a.Advisory)
		}
		out.Advisories = append(out.Advisories, st)
	}
	return out, nil
}

// advisoryChanges compares an advisory with its fingerprint when it was
// dismissed, member by member, as upcheck_dismissal_in_force does.
func advisoryChanges(was store.Fingerprint, now updatedoc.Advisory) []AdvisoryChange {
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
