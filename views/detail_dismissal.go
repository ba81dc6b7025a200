// Dismissals on the detail page: who accepted an advisory's risk, when,
// why and until when, and, when a dismissal no longer holds, why the
// advisory counts again, in words.

package views

import (
	"strconv"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// AdvisoryDismissal is the standing dismissal of an advisory, in force or
// not (AdvisoryRow.Dismissed says whether it is).
type AdvisoryDismissal struct {
	// By is the email of who dismissed it; "" when nobody did (a script).
	By     string
	At     time.Time
	Reason string
	// ExpiresAt nil: no expiry.
	ExpiresAt *time.Time
	// Expired: the expiry has passed (the read model judged it).
	Expired bool
	// Changes is how the advisory differs from what was dismissed.
	Changes []AdvisoryChange
	// FromManifest: the manifest declares it; the page offers no way to
	// end or replace it (store.ErrFromManifest).
	FromManifest bool
}

// manifestDismissalText is why the page offers no way to end or replace a
// dismissal the manifest declares.
const manifestDismissalText = "From the manifest: it cannot be undone here. Change the manifest to end or replace it."

// The members of an advisory that a dismissal fingerprints
// (AdvisoryChange.Member).
const (
	ChangeSeverity = "severity"
	ChangeAffected = "affected"
	ChangeFixedIn  = "fixed_in"
)

// AdvisoryChange is one member of an advisory that is not what it was
// when dismissed; "" is an absent member (for ChangeFixedIn: no fix).
type AdvisoryChange struct {
	Member   string
	From, To string
}

// DismissForm refills a dismiss form the server refused, with why.
type DismissForm struct {
	// AdvisoryID is the advisory whose form this is; "" for none.
	AdvisoryID string
	Reason     string
	// Expires is the date as typed, "2026-12-31" from a date input.
	Expires string
	// Error says what to correct, in plain words.
	Error string
}

// changeText words one change: "severity raised from medium to high",
// "the advisory now affects versions before 2.5.0 (it said it affects
// versions before 2.4.0)", "a fix was published: 2.4.1". Ranges are in
// words (shared_ranges.go), never as the publisher wrote them.
func changeText(c AdvisoryChange) string {
	switch c.Member {
	case ChangeSeverity:
		from, to := readmodel.Severity(c.From).Rank(), readmodel.Severity(c.To).Rank() // 0: cannot be ordered
		switch {
		case c.From == "":
			return "a severity was given: " + c.To
		case c.To == "":
			return "the severity was withdrawn (it was " + c.From + ")"
		case from > 0 && to > from:
			return "severity raised from " + c.From + " to " + c.To
		case to > 0 && from > to:
			return "severity lowered from " + c.From + " to " + c.To
		}
		return "severity changed from " + c.From + " to " + c.To
	case ChangeAffected:
		switch {
		case c.From == "":
			return "the advisory now says it " + AffectedText(c.To)
		case c.To == "":
			return "the advisory no longer says which versions it affects (it said it " + AffectedText(c.From) + ")"
		}
		return "the advisory now " + AffectedText(c.To) + " (it said it " + AffectedText(c.From) + ")"
	case ChangeFixedIn:
		switch {
		case c.From == "":
			return "a fix was published: " + c.To
		case c.To == "":
			return "the fix was withdrawn (it was " + c.From + ")"
		}
		return "the fixed version changed from " + c.From + " to " + c.To
	}
	return c.Member + " changed"
}

// byText is who dismissed an advisory: their email, or "a script".
func byText(by string) string {
	if by == "" {
		return "a script (no user)"
	}
	return by
}

// untilText is until when a dismissal holds. A dismissal made on the page
// ends at midnight UTC after the date picked, which reads as "the end of"
// that date.
func untilText(t *time.Time) string {
	if t == nil {
		return "No expiry: until someone restores it or the advisory changes"
	}
	return expiredOnText(*t)
}

// reopenedText says why an advisory with a standing dismissal counts
// again: the expiry passed, or the advisory changed since.
func reopenedText(d AdvisoryDismissal) string {
	when := readmodel.DateText(d.At)
	if d.FromManifest {
		d.By = "the manifest"
	}
	switch {
	case d.Expired && d.ExpiresAt != nil:
		return "Counts again: the dismissal by " + byText(d.By) + " on " + when + " expired on " +
			expiredOnText(*d.ExpiresAt) + "."
	case len(d.Changes) > 0:
		parts := make([]string, len(d.Changes))
		for i, c := range d.Changes {
			parts[i] = changeText(c)
		}
		return "Counts again: the advisory changed since " + byText(d.By) + " dismissed it on " + when + ": " +
			strings.Join(parts, "; ") + "."
	}
	return "Counts again: the dismissal by " + byText(d.By) + " on " + when + " no longer holds."
}

// expiredOnText is when an expiry passed: the date picked for a dismissal
// made on the page, otherwise the exact time.
func expiredOnText(t time.Time) string {
	u := t.UTC()
	if u.Hour() == 0 && u.Minute() == 0 && u.Second() == 0 && u.Nanosecond() == 0 {
		return "the end of " + readmodel.DateText(u.Add(-time.Hour)) + " (UTC)"
	}
	return readmodel.TimeText(u)
}

// advisoryRowCtx is what an advisory row needs of its page.
type advisoryRowCtx struct {
	Site      string // the registered site whose component it is; "": the local site
	Index     int    // the row's position, for unique field ids
	CanManage bool
	CSRFToken string
	Now       time.Time
	Form      DismissForm
}

// fieldID is the prefix of the ids of the row's form fields.
func (rc advisoryRowCtx) fieldID() string {
	return "dismiss-" + strconv.Itoa(rc.Index)
}

// dateInput is a date as a date input's value and min, "2026-12-31".
func dateInput(t time.Time) string {
	return t.UTC().Format("2006-01-02")
}
