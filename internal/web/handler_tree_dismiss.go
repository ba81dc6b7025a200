package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/views"
)

// A tree's dismissals (docs/feeds.md "Dismissals"): an admin accepts an
// advisory's risk on one package of a site's installed tree, from the
// package's page or the API, for the site the route names (siteOf: the
// local site's routes and /sites/NAME/…); another site's tree is not
// covered.

// treeDismissParams reads the package (in one segment, a scoped name
// escaped: the form views.SitePackagePath links to) and the advisory id of
// the path.
func treeDismissParams(c echo.Context) (pkg, id string, err error) {
	if pkg, err = pathParam(c, "name"); err != nil {
		return "", "", err
	}
	if len(pkg) > maxPackageName {
		return "", "", echo.NewHTTPError(http.StatusBadRequest, "name is at most "+strconv.Itoa(maxPackageName)+" bytes")
	}
	if id, err = pathParam(c, "id"); err != nil {
		return "", "", err
	}
	if len(id) > readmodel.MaxAdvisoryID {
		return "", "", echo.NewHTTPError(http.StatusBadRequest,
			"No advisory has this id: an advisory id has at most "+strconv.Itoa(readmodel.MaxAdvisoryID)+" bytes.")
	}
	return pkg, id, nil
}

// treeDismissal dismisses, for the request's site, the advisory id on
// package pkg with reason and expires (a date, "" for no end); the words
// of a refusal (422) or the store's error.
func (s *Server) treeDismissal(c echo.Context, pkg, id, reason, expires string) (store.Dismissal, string, error) {
	p, _ := auth.PrincipalFrom(c)
	d := store.NewTreeDismissal{Site: siteOf(c).ID, Package: pkg, AdvisoryID: id, UserID: p.UserID, Reason: reason}
	var words string
	if d.ExpiresAt, words = parseExpiry(strings.TrimSpace(expires), time.Now()); words != "" {
		return store.Dismissal{}, words, nil
	}
	out, err := s.store.DismissTreeAdvisory(c.Request().Context(), d)
	if words := dismissErrorText(err); words != "" {
		return out, words, nil
	}
	return out, "", err
}

// noSuchTreeAdvisoryText is the 404 of an advisory no finding of the
// package lists on the site.
func noSuchTreeAdvisoryText(pkg, id string) string {
	return "No advisory “" + clip(id) + "” is a finding of “" + clip(pkg) + "” in this site's installed tree, so there is nothing to dismiss."
}

// treeDismiss is the package page's dismiss form: it redirects (303) to
// the package's page, with a notice or the refusal in words.
func (s *Server) treeDismiss(c echo.Context) error {
	pkg, id, err := treeDismissParams(c)
	if err != nil {
		return err
	}
	page := views.SitePackagePath(viewSite(siteOf(c)), pkg)
	_, words, err := s.treeDismissal(c, pkg, id, c.FormValue("reason"), c.FormValue("expires"))
	switch {
	case errors.Is(err, store.ErrNotFound):
		words = noSuchTreeAdvisoryText(pkg, id)
	case err != nil:
		return err
	}
	if words != "" {
		return s.redirectWithFlash(c, page, flash{Error: words})
	}
	return s.redirectWithFlash(c, page, flash{Notice: id + " is dismissed on " + pkg + "."})
}

// treeUndismiss is the package page's restore: the advisory counts again
// on the package there.
func (s *Server) treeUndismiss(c echo.Context) error {
	pkg, id, err := treeDismissParams(c)
	if err != nil {
		return err
	}
	page := views.SitePackagePath(viewSite(siteOf(c)), pkg)
	p, _ := auth.PrincipalFrom(c)
	switch err := s.store.UndismissTreeAdvisory(c.Request().Context(), siteOf(c).ID, pkg, id, p.UserID); {
	case errors.Is(err, store.ErrNotFound):
		return s.redirectWithFlash(c, page, flash{Error: noStandingTreeDismissalText(pkg, id)})
	case err != nil:
		return err
	}
	return s.redirectWithFlash(c, page, flash{Notice: id + " counts again on " + pkg + "."})
}

func noStandingTreeDismissalText(pkg, id string) string {
	return "The advisory “" + clip(id) + "” of “" + clip(pkg) + "” has no standing dismissal on this site."
}

// apiTreeDismiss is POST …/packages/{name}/advisories/{id}/dismissal: the
// form's dismissal, answered with the dismissal (201).
func (s *Server) apiTreeDismiss(c echo.Context) error {
	pkg, id, err := treeDismissParams(c)
	if err != nil {
		return err
	}
	var req dismissalRequest
	if err := decodeJSONBody(c, &req); err != nil {
		return err
	}
	out, words, err := s.treeDismissal(c, pkg, id, req.Reason, req.Expires)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return echo.NewHTTPError(http.StatusNotFound, noSuchTreeAdvisoryText(pkg, id)).WithInternal(err)
	case err != nil:
		return err
	case words != "":
		return echo.NewHTTPError(http.StatusUnprocessableEntity, words)
	}
	return c.JSON(http.StatusCreated, dismissalBody(out))
}

// apiTreeUndismiss is DELETE …/packages/{name}/advisories/{id}/dismissal:
// 204 when a standing dismissal was ended, 404 when none stands.
func (s *Server) apiTreeUndismiss(c echo.Context) error {
	pkg, id, err := treeDismissParams(c)
	if err != nil {
		return err
	}
	p, _ := auth.PrincipalFrom(c)
	switch err := s.store.UndismissTreeAdvisory(c.Request().Context(), siteOf(c).ID, pkg, id, p.UserID); {
	case errors.Is(err, store.ErrNotFound):
		return echo.NewHTTPError(http.StatusNotFound, noStandingTreeDismissalText(pkg, id)).WithInternal(err)
	case err != nil:
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
