package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// maxPackagesPage bounds one page of GET /api/admin/packages, as
// maxPageSize bounds the catalog's.
const maxPackagesPage = maxPageSize

// apiPackages is GET /api/admin/packages: the installed packages, one per
// name, with the page's filter, component and search, per_page (1–500,
// default 100) and the keyset cursor after: "next" of the page before.
// tree is null while no tree was read: the dependencies are not checked.
func (s *Server) apiPackages(c echo.Context) error {
	f, err := s.packagesQuery(c, 100, maxPackagesPage)
	if err != nil {
		return err
	}
	page, err := s.reads.Packages(c.Request().Context(), siteOf(c).ID, f)
	if err != nil {
		return err
	}
	var next *string
	if page.Next != "" {
		next = &page.Next
	}
	rows := page.Rows
	if rows == nil {
		rows = []readmodel.PackageRow{}
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, map[string]any{"packages": rows, "total": page.Counts.Of(f.Filter), "per_page": f.Limit, "next": next,
		"tree": page.Tree})
}

// apiPackage is GET /api/admin/packages/{name}: every installed instance
// of the package with the paths that reach it, the versions the tree
// installed over time, and what each lockfile change that installed one
// brought.
func (s *Server) apiPackage(c echo.Context) error {
	p, err := s.readPackage(c)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	changes := p.Changes
	if changes == nil {
		changes = []readmodel.PackageChange{}
	}
	return c.JSON(http.StatusOK, map[string]any{"name": p.Name, "instances": p.Instances, "history": p.History, "changes": changes,
		"tree": p.Tree})
}
