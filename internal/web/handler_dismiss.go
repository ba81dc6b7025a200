package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/views"
)

// dismiss accepts an advisory's risk with a reason and an optional expiry
// date, from the detail page's form. A refused form is answered with the
// page again (422), the form open and refilled and the error in words; an
// accepted one redirects to the page's advisories.
func (s *Server) dismiss(c echo.Context) error {
	code, id, err := advisoryParams(c)
	if err != nil {
		return err
	}
	form := views.DismissForm{AdvisoryID: id, Reason: c.FormValue("reason"), Expires: strings.TrimSpace(c.FormValue("expires"))}
	p, _ := auth.PrincipalFrom(c)
	d := store.NewDismissal{Site: siteOf(c).ID, Code: code, AdvisoryID: id, UserID: p.UserID, Reason: form.Reason}
	if d.ExpiresAt, form.Error = parseExpiry(form.Expires, time.Now()); form.Error == "" {
		_, err = s.dismissals.Dismiss(c.Request().Context(), d)
		form.Error = dismissErrorText(err)
	}
	if form.Error != "" {
		return s.renderDetail(c, http.StatusUnprocessableEntity, form)
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, componentPath(c, code)+"#advisories")
}

// undismiss ends the standing dismissal: the advisory counts again.
func (s *Server) undismiss(c echo.Context) error {
	code, id, err := advisoryParams(c)
	if err != nil {
		return err
	}
	p, _ := auth.PrincipalFrom(c)
	if err := s.dismissals.Undismiss(c.Request().Context(), siteOf(c).ID, code, id, p.UserID); errors.Is(err, store.ErrFromManifest) {
		return s.renderDetail(c, http.StatusUnprocessableEntity, views.DismissForm{AdvisoryID: id, Error: dismissalFromManifestText})
	} else if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, componentPath(c, code)+"#advisories")
}

// dismissalFromManifestText is why a dismissal the manifest declares is
// neither ended nor replaced in the AdminCP (store.ErrFromManifest).
const dismissalFromManifestText = "The manifest declares this dismissal, so it is reviewed with the site’s code: change it in the manifest, and sync the components."

// advisoryParams are the component code and the advisory id of a
// dismissal's path.
func advisoryParams(c echo.Context) (code, id string, err error) {
	if code, err = pathParam(c, "code"); err != nil {
		return "", "", err
	}
	if id, err = pathParam(c, "id"); err != nil {
		return "", "", err
	}
	// The limit is every advisory id's (an update document's, an OSV
	// record's): every advisory a page lists can be dismissed, and no
	// request names a longer id.
	if len(id) > readmodel.MaxAdvisoryID {
		return "", "", echo.NewHTTPError(http.StatusBadRequest,
			"No advisory has this id: an advisory id has at most "+strconv.Itoa(readmodel.MaxAdvisoryID)+" bytes.")
	}
	return code, id, nil
}

// parseExpiry reads the form's expiry date ("2026-12-31", as a date input
// sends it; "" for none). The dismissal holds to the end of that day, UTC:
// it expires at the next midnight UTC. Today is allowed; a day before
// today, or one after store.MaxExpiry, is refused, in words.
func parseExpiry(date string, now time.Time) (*time.Time, string) {
	if date == "" {
		return nil, ""
	}
	day, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return nil, "The expiry date is not a date. Pick one in the calendar, or write it as year-month-day, such as " +
			now.UTC().AddDate(0, 1, 0).Format(time.DateOnly) + "."
	}
	end := day.AddDate(0, 0, 1)
	if !end.After(now) {
		return nil, expiryPassedText
	}
	if end.After(store.MaxExpiry) {
		return nil, expiryTooFarText
	}
	return &end, ""
}

// expiryTooFarText refuses a date past store.MaxExpiry.
var expiryTooFarText = "The expiry date is too far off: pick a day up to " + readmodel.DateText(store.MaxExpiry.AddDate(0, 0, -1)) +
	", or leave it empty to dismiss the advisory until someone restores it."

// reasonControlText refuses a reason that is not plain text.
const reasonControlText = "The reason holds a control character (or bytes that are not text): write it as plain text; line breaks are fine."

const expiryPassedText = "The expiry date has passed. Pick today or a later day, or leave it empty to dismiss the advisory until someone restores it."

// dismissErrorText words why a dismissal was refused; "" when it was not,
// or when the error is not the operator's to correct (it is then answered
// as any other error).
func dismissErrorText(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, store.ErrReasonRequired):
		return "Give a reason for dismissing this advisory: it is shown with the dismissal and kept in the audit log."
	case errors.Is(err, store.ErrReasonTooLong):
		return "The reason is too long: keep it to " + strconv.Itoa(store.MaxReasonLength) + " characters."
	case errors.Is(err, store.ErrExpiryPassed):
		return expiryPassedText
	case errors.Is(err, store.ErrExpiryTooFar):
		return expiryTooFarText
	case errors.Is(err, store.ErrReasonControl):
		return reasonControlText
	case errors.Is(err, catalog.ErrNoSuchAdvisory):
		return "This advisory no longer affects the installed version, so there is nothing to dismiss. The page now shows what holds."
	case errors.Is(err, store.ErrFromManifest):
		return dismissalFromManifestText
	}
	return ""
}

// advisoryRow is an advisory as the detail page shows it, with where its
// dismissal stands.
func advisoryRow(a catalog.AdvisoryState) views.AdvisoryRow {
	row := views.AdvisoryRow{ID: a.ID, Severity: a.Severity, Summary: a.Summary, URL: a.URL, Affected: a.Affected,
		FixedIn: a.FixedIn, NoFix: a.NoFix, ClearedBy: a.ClearedBy, Dismissed: a.Dismissed, OSV: advisoryOSV(a.Advisory), AdvisoryIntel: advisoryIntel(a.AdvisoryMatch)}
	if d := a.Dismissal; d != nil {
		row.Dismissal = &views.AdvisoryDismissal{By: d.By, At: d.At, Reason: d.Reason, ExpiresAt: d.ExpiresAt, Expired: d.Expired,
			FromManifest: d.FromManifest}
		for _, ch := range a.Changes {
			row.Dismissal.Changes = append(row.Dismissal.Changes, views.AdvisoryChange{Member: changeMember[ch.Member], From: ch.From, To: ch.To})
		}
	}
	return row
}

// changeMember names a fingerprint member for the views.
var changeMember = map[string]string{
	catalog.MemberSeverity: views.ChangeSeverity,
	catalog.MemberAffected: views.ChangeAffected,
	catalog.MemberFixedIn:  views.ChangeFixedIn,
}
