package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/upcheck/upcheck/internal/db"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// Audit actions written by this package.
const (
	AuditAdvisoryDismiss   = readmodel.AuditAdvisoryDismiss
	AuditAdvisoryUndismiss = readmodel.AuditAdvisoryUndismiss
	// AuditAdvisoryExpire is never written: the audit log derives it from
	// a standing dismissal whose expiry passed (AuditEvents).
	AuditAdvisoryExpire = readmodel.AuditAdvisoryExpire
)

// NewDismissal is an admin's acceptance of an advisory's risk for one
// component. The caller has checked Reason (not blank, at most
// MaxReasonLength characters, ReasonValid) and ExpiresAt (in the future,
// not after MaxExpiry); DismissAdvisory and the database refuse them
// otherwise.
type NewDismissal struct {
	// Site is the site whose component it is (sites.id).
	Site             int64
	Code, AdvisoryID string
	// UserID 0: no user (a script).
	UserID int64
	Reason string
	// ExpiresAt nil: until restored, or until the advisory changes.
	ExpiresAt *time.Time
}

// MaxReasonLength is the longest reason the database keeps, in characters.
const MaxReasonLength = 500

// MaxExpiry is the latest expiry a dismissal may have: midnight UTC at the
// end of 30 Dec 9999. The audit log and the API write times as JSON, which
// has no year after 9999.
var MaxExpiry = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// What is wrong with a dismissal, checked before it is written and by the
// table's constraints (which map to the same errors).
var (
	ErrReasonRequired = errors.New("a dismissal needs a reason")
	ErrReasonTooLong  = fmt.Errorf("a dismissal's reason is limited to %d characters", MaxReasonLength)
	ErrExpiryPassed   = errors.New("a dismissal's expiry must be in the future")
	ErrExpiryTooFar   = errors.New("a dismissal's expiry is after the last day upcheck keeps (MaxExpiry)")
	// ErrReasonControl: the reason holds a control character other than a
	// line break or a tab (PostgreSQL keeps no NUL), or is not UTF-8.
	ErrReasonControl = errors.New("a dismissal's reason holds a control character or is not UTF-8")
)

// ReasonValid reports whether reason holds only text: UTF-8, no control
// character but line breaks and tabs. Reasons are shown on pages, in the
// audit log and its CSV, and kept in text columns.
func ReasonValid(reason string) bool {
	return utf8.ValidString(reason) && !strings.ContainsFunc(reason, func(r rune) bool {
		return unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t'
	})
}

// Fingerprint is what an advisory said when it was dismissed; "" for a
// member it did not have (FixedIn "": no fix).
type Fingerprint struct {
	Severity, Affected, FixedIn string
}

// Dismissal is a standing decision about one advisory of one component,
// whether or not it is in force.
type Dismissal struct {
	ID         int64
	AdvisoryID string
	// By is the email of who dismissed it, as it was then; "" when nobody
	// (a script).
	By        string
	At        time.Time
	Reason    string
	ExpiresAt *time.Time
	// Dismissed is the advisory as it was dismissed.
	Dismissed Fingerprint
	// InForce: the read model leaves the advisory out now. Expired: the
	// expiry has passed (on the database clock). A standing dismissal that
	// is neither has an advisory that changed since.
	InForce, Expired bool
	// FromManifest: the manifest declares it; it is changed there, not in
	// the AdminCP (ErrFromManifest).
	FromManifest bool
}

// fromManifest reports whether a decision the manifest declares is among
// ended: an admin may not end it.
func fromManifest(ended []db.DismissalEndRow) bool {
	for _, e := range ended {
		if e.FromManifest {
			return true
		}
	}
	return false
}

// DismissAdvisory records a dismissal of the advisory as the component's
// current result lists it (its fingerprint), replacing the one standing
// before it, which is kept as history; the audit row commits in the same
// transaction. ErrNotFound when the component is not installed or its
// current result lists no such advisory.
func (s *Store) DismissAdvisory(ctx context.Context, d NewDismissal) (Dismissal, error) {
	switch {
	case strings.TrimSpace(d.Reason) == "":
		return Dismissal{}, ErrReasonRequired
	case utf8.RuneCountInString(d.Reason) > MaxReasonLength:
		return Dismissal{}, ErrReasonTooLong
	case !ReasonValid(d.Reason):
		return Dismissal{}, ErrReasonControl
	case d.ExpiresAt != nil && d.ExpiresAt.After(MaxExpiry):
		return Dismissal{}, ErrExpiryTooFar
	}
	var out Dismissal
	err := s.WithTx(ctx, func(tx *Tx) error {
		if _, err := tx.q.DismissalLockComponent(ctx, tx.tx, db.DismissalLockComponentParams{Site: d.Site, Code: d.Code}); err != nil {
			return fmt.Errorf("dismiss advisory: component %q: %w", d.Code, err)
		}
		// Named by an alias: the dismissal is of the advisory as listed.
		switch id, err := tx.q.AdvisoryListedID(ctx, tx.tx, db.AdvisoryListedIDParams{Site: d.Site, ComponentCode: d.Code, AdvisoryID: d.AdvisoryID}); {
		case err == nil:
			d.AdvisoryID = id
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("dismiss advisory: %w", err)
		}
		ended, err := tx.q.DismissalEnd(ctx, tx.tx, db.DismissalEndParams{How: "replaced", Site: d.Site, ComponentCode: d.Code, AdvisoryID: d.AdvisoryID})
		if err != nil {
			return fmt.Errorf("dismiss advisory: end the standing one: %w", err)
		}
		if fromManifest(ended) {
			return ErrFromManifest
		}
		r, err := tx.q.DismissalCreate(ctx, tx.tx, db.DismissalCreateParams{
			Site: d.Site, UserID: optionalID(d.UserID), Reason: d.Reason, ExpiresAt: d.ExpiresAt, ComponentCode: d.Code,
			AdvisoryID: d.AdvisoryID,
		})
		if err != nil {
			return fmt.Errorf("dismiss advisory %q of %q: %w", d.AdvisoryID, d.Code, dismissalConstraint(err))
		}
		out = Dismissal{ID: r.ID, AdvisoryID: d.AdvisoryID, By: deref(r.UserEmail), At: r.DismissedAt, Reason: d.Reason,
			ExpiresAt: d.ExpiresAt, Dismissed: Fingerprint{Severity: r.Severity, Affected: r.Affected, FixedIn: r.FixedIn}, InForce: true}
		detail := map[string]any{"component": d.Code, "advisory": d.AdvisoryID, "dismissal": r.ID, "reason": d.Reason,
			"expires_at": d.ExpiresAt, "severity": r.Severity, "affected": r.Affected, "fixed_in": r.FixedIn, "by": deref(r.UserEmail)}
		if len(ended) > 0 {
			detail["replaced"] = ended[0].ID
		}
		return tx.auditSiteAppend(ctx, d.UserID, AuditAdvisoryDismiss, d.Site, detail)
	})
	return out, err
}

// UndismissAdvisory ends the standing dismissal of an advisory of site's
// component, in force or not, keeping it as history, audited in the same
// transaction. Nothing happens, unaudited, when none stands.
func (s *Store) UndismissAdvisory(ctx context.Context, site int64, code, advisoryID string, userID int64) error {
	return s.WithTx(ctx, func(tx *Tx) error {
		if _, err := tx.q.DismissalLockComponent(ctx, tx.tx, db.DismissalLockComponentParams{Site: site, Code: code}); err != nil &&
			!errors.Is(mapError(err), ErrNotFound) {
			return fmt.Errorf("undismiss advisory: %w", err)
		}
		ended, err := tx.q.DismissalEnd(ctx, tx.tx, db.DismissalEndParams{How: "undone", Site: site, ComponentCode: code, AdvisoryID: advisoryID})
		if err != nil {
			return fmt.Errorf("undismiss advisory: %w", err)
		}
		if fromManifest(ended) {
			return ErrFromManifest // rolled back: it stands
		}
		if len(ended) == 0 {
			return nil
		}
		return tx.auditSiteAppend(ctx, userID, AuditAdvisoryUndismiss, site,
			map[string]any{"component": code, "advisory": advisoryID, "dismissal": ended[0].ID, "reason": ended[0].Reason})
	})
}

// StandingDismissals returns the standing dismissals of the advisories of
// site's component, in force or not, by advisory id.
func (e *Executor) StandingDismissals(ctx context.Context, site int64, code string) (map[string]Dismissal, error) {
	rows, err := e.q.DismissalStandingList(ctx, e.dbtx, db.DismissalStandingListParams{Site: site, ComponentCode: code})
	if err != nil {
		return nil, mapError(fmt.Errorf("list dismissals of %q: %w", code, err))
	}
	out := make(map[string]Dismissal, len(rows))
	for _, r := range rows {
		out[r.AdvisoryID] = Dismissal{ID: r.ID, AdvisoryID: r.AdvisoryID, By: r.ByEmail, At: r.DismissedAt, Reason: r.Reason,
			ExpiresAt: r.ExpiresAt, Dismissed: Fingerprint{Severity: r.Severity, Affected: r.Affected, FixedIn: r.FixedIn},
			InForce: r.InForce, Expired: r.Expired, FromManifest: r.FromManifest}
	}
	return out, nil
}

// dismissalConstraint maps the table's checks to the errors that say
// which input was wrong: an expiry judged in the future by the caller may
// have passed by the database's clock.
func dismissalConstraint(err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != pgerrcode.CheckViolation {
		return err
	}
	switch pgErr.ConstraintName {
	case "advisory_dismissals_reason":
		return fmt.Errorf("%w: %w", ErrReasonRequired, err)
	case "advisory_dismissals_reason_length":
		return fmt.Errorf("%w: %w", ErrReasonTooLong, err)
	case "advisory_dismissals_expiry":
		return fmt.Errorf("%w: %w", ErrExpiryPassed, err)
	}
	return err
}
