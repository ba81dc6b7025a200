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

// The fleet (docs/design.md "The fleet"): the Fleet page and the impact
// page; api_fleet.go is the same as JSON. Every read names only the sites
// the principal may see (fleetScope).

// fleetQuery reads and checks the Fleet page's and API's order, filter,
// search and page, and per_page (1 to max, default def) when given.
func (s *Server) fleetQuery(c echo.Context, def, max int) (store.FleetFilter, int, error) {
	f := store.FleetFilter{Scope: fleetScope(c), Sort: readmodel.FleetSort(c.QueryParam(views.ParamSort)),
		Filter: readmodel.FleetFilter(c.QueryParam(views.ParamPackageFilter)), DevMode: s.devMode, StaleAfter: s.fleetStaleAfter()}
	if !f.Sort.Valid() {
		return f, 0, echo.NewHTTPError(http.StatusBadRequest, views.ParamSort+" must be one of "+joinNames(readmodel.FleetSorts[1:]))
	}
	if !f.Filter.Valid() {
		return f, 0, echo.NewHTTPError(http.StatusBadRequest, views.ParamPackageFilter+" must be one of "+joinNames(readmodel.FleetFilters[1:]))
	}
	lp, err := siteListQuery(c, def, max)
	if err != nil {
		return f, 0, err
	}
	f.Search, f.Offset, f.Limit = lp.Search, lp.Offset, lp.Limit
	return f, lp.Page, nil
}

// siteList is a page of a list of sites as asked: its search (a part of
// a site's name or owner), its page (from 1) and its size, and the rows
// before it.
type siteList struct {
	Search              string
	Page, Limit, Offset int
}

// siteListQuery reads and checks the search (q), page and per_page (1 to
// max, default def) of a list of sites: the Fleet's and the Sites
// section's, pages and API alike.
func siteListQuery(c echo.Context, def, max int) (siteList, error) {
	lp := siteList{Search: c.QueryParam(views.ParamQuery), Page: 1, Limit: def}
	if len(lp.Search) > 200 {
		return lp, echo.NewHTTPError(http.StatusBadRequest, "q is too long")
	}
	if v := c.QueryParam("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > max {
			return lp, echo.NewHTTPError(http.StatusBadRequest, "per_page must be between 1 and "+strconv.Itoa(max))
		}
		lp.Limit = n
	}
	if v := c.QueryParam(views.ParamPage); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxSiteListPage {
			return lp, echo.NewHTTPError(http.StatusBadRequest, "page must be between 1 and "+strconv.Itoa(maxSiteListPage))
		}
		lp.Page = n
	}
	lp.Offset = (lp.Page - 1) * lp.Limit
	return lp, nil
}

// maxSiteListPage bounds the page number: 100,000 sites at 50 a page.
const maxSiteListPage = 2000

// joinNames lists the non-empty names of a vocabulary: "name, pushed, …".
func joinNames[T ~string](names []T) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = string(n)
	}
	return strings.Join(out, ", ")
}

// fleetPage is the Fleet page: pageSize sites a page, and the totals.
func (s *Server) fleetPage(c echo.Context) error {
	f, page, err := s.fleetQuery(c, pageSize, pageSize)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	rows, err := s.reads.Fleet(ctx, f)
	if err != nil {
		return err
	}
	sum, err := s.reads.FleetSummary(ctx, f.Scope, f)
	if err != nil {
		return err
	}
	// The content depends on nothing of the user's but its sites, which
	// the reads are of: it is rendered once a second for every request
	// that shows the same.
	l := layout(c)
	p := views.FleetProps{Rows: rows.Rows, Summary: sum, Sort: f.Sort, Filter: f.Filter, Query: f.Search, Page: page, More: rows.More}
	key := fleetFragmentKey{read: rows.Read, summary: sum, sort: f.Sort, filter: f.Filter, query: f.Search, page: page, more: rows.More,
		second: l.Now.Unix()}
	content, err := s.fleetFragments.get(key, func() ([]byte, error) {
		return renderBytes(ctx, views.FleetContent(p, l.Now))
	})
	if err != nil {
		return err
	}
	return renderOK(c, views.Fleet(l, rawHTML(content)))
}

// fleetImpactQuery reads the impact's advisory, or package and range:
// asked false when none is given (the form alone).
func fleetImpactQuery(c echo.Context) (q catalog.FleetImpactQuery, asked bool, err error) {
	q = catalog.FleetImpactQuery{Advisory: strings.TrimSpace(c.QueryParam(views.ParamAdvisory)),
		Package: strings.TrimSpace(c.QueryParam(views.ParamPackage)), Range: strings.TrimSpace(c.QueryParam(views.ParamRange))}
	switch {
	case q.Advisory == "" && q.Package == "":
		if q.Range != "" {
			return q, false, echo.NewHTTPError(http.StatusBadRequest, "a range needs a package")
		}
		return q, false, nil
	case q.Advisory != "" && (q.Package != "" || q.Range != ""):
		return q, false, echo.NewHTTPError(http.StatusBadRequest, "ask for an advisory or a package, not both")
	case len(q.Advisory) > maxPackageName || len(q.Package) > maxPackageName || len(q.Range) > maxPackageName:
		return q, false, echo.NewHTTPError(http.StatusBadRequest, "advisory, package and range are at most "+strconv.Itoa(maxPackageName)+" bytes")
	}
	return q, true, nil
}

// readFleetImpact answers q for the principal's sites; a range npm's
// syntax cannot read is a 400.
func (s *Server) readFleetImpact(c echo.Context, q catalog.FleetImpactQuery) (readmodel.FleetImpact, error) {
	im, err := s.reads.FleetImpact(c.Request().Context(), fleetScope(c), q)
	if errors.Is(err, catalog.ErrBadRange) {
		return im, echo.NewHTTPError(http.StatusBadRequest, "range: "+err.Error()).WithInternal(err)
	}
	return im, err
}

// fleetImpactPage is the impact page: the form, and the answer when asked.
func (s *Server) fleetImpactPage(c echo.Context) error {
	q, asked, err := fleetImpactQuery(c)
	if err != nil {
		return err
	}
	props := views.FleetImpactProps{Layout: layout(c), Asked: asked, Advisory: q.Advisory, Package: q.Package, Range: q.Range}
	if asked {
		if props.Impact, err = s.readFleetImpact(c, q); err != nil {
			return err
		}
	}
	return renderOK(c, views.FleetImpact(props))
}

// fleetScope is the sites the request's principal may see (auth.Sites):
// every site, or only its own; a request without a principal sees none.
func fleetScope(c echo.Context) store.FleetScope {
	p, ok := auth.PrincipalFrom(c)
	if !ok {
		return store.FleetScope{Limited: true}
	}
	return store.FleetScope{Limited: p.Sites.Limited(), IDs: p.Sites.IDs()}
}

// fleetStaleAfter is UPCHECK_SITE_STALE_AFTER in effect
// (readmodel.SiteStaleAfter).
func (s *Server) fleetStaleAfter() time.Duration {
	return readmodel.SiteStaleAfter(s.siteStaleAfter)
}
