package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/upcheck/upcheck/internal/store"
)

// Dismissals are the admins' decisions about advisories: a dismissal
// accepts the risk of one advisory for one installed component, for a
// reason and perhaps until a date; ending it makes the advisory count
// again. Both are audited, and both change what the read model reads, so
// they tell the reads (Reads.Changed).
type Dismissals struct {
	store *store.Store
	reads *Reads
}

// NewDismissals returns the dismissals of st, telling r of each change
// (nil: no cache to tell).
func NewDismissals(st *store.Store, r *Reads) *Dismissals {
	return &Dismissals{store: st, reads: r}
}

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
func (ds *Dismissals) Dismiss(ctx context.Context, d store.NewDismissal) (store.Dismissal, error) {
	if _, err := ds.store.Component(ctx, d.Site, d.Code); err != nil {
		return store.Dismissal{}, err
	}
	d.Reason = strings.TrimSpace(d.Reason)
	defer ds.reads.Changed()
	out, err := ds.store.DismissAdvisory(ctx, d)
	if errors.Is(err, store.ErrNotFound) {
		return store.Dismissal{}, fmt.Errorf("%w: %q of %q", ErrNoSuchAdvisory, d.AdvisoryID, d.Code)
	}
	if err == nil {
		ds.countSite(ctx, d.Site)
	}
	return out, err
}

// countSite counts the site's components again for the fleet
// (store.Store.RefreshSiteComponentCounts) once a dismissal of one of them
// committed. The dismissal stands whatever becomes of the count: a count
// that failed is made again at the site's next refresh (every check).
func (ds *Dismissals) countSite(ctx context.Context, site int64) {
	_ = ds.store.RefreshSiteComponentCounts(ctx, []int64{site})
}

// ErrNoSuchAdvisory means the component's current result lists no such
// advisory: there is nothing to dismiss.
var ErrNoSuchAdvisory = errors.New("no such advisory affects the component now")

// Undismiss ends the standing dismissal of an advisory of site's
// component (in force, expired or re-opened alike), audited; the advisory
// counts again. ErrNotFound when the component is not installed.
func (ds *Dismissals) Undismiss(ctx context.Context, site int64, code, advisoryID string, userID int64) error {
	if _, err := ds.store.Component(ctx, site, code); err != nil {
		return err
	}
	defer ds.reads.Changed()
	if err := ds.store.UndismissAdvisory(ctx, site, code, advisoryID, userID); err != nil {
		return err
	}
	ds.countSite(ctx, site)
	return nil
}
