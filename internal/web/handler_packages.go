package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/views"
)

// The installed tree's packages (docs/npm.md): the Packages page and a
// package's page; api_packages.go is the same as JSON.

// maxPackageName bounds a package name, a cursor or a component code in a
// request: npm's names are 214 characters at most.
const maxPackageName = 512

// packagesQuery reads and checks the Packages page's and API's filter,
// component, search and cursor parameters, and per_page (1 to max,
// default def) when given, under the server's dev mode.
func (s *Server) packagesQuery(c echo.Context, def, max int) (store.PackageFilter, error) {
	f := store.PackageFilter{Filter: readmodel.PackageFilter(c.QueryParam(views.ParamPackageFilter)), DevMode: s.devMode,
		Component: c.QueryParam(views.ParamComponent), Search: c.QueryParam(views.ParamQuery), After: c.QueryParam(views.ParamAfter), Limit: def}
	if !f.Filter.Valid() {
		names := make([]string, 0, len(readmodel.PackageFilters)-1)
		for _, name := range readmodel.PackageFilters[1:] {
			names = append(names, string(name))
		}
		return f, echo.NewHTTPError(http.StatusBadRequest, views.ParamPackageFilter+" must be one of "+strings.Join(names, ", "))
	}
	if len(f.Search) > 200 {
		return f, echo.NewHTTPError(http.StatusBadRequest, "q is too long")
	}
	if len(f.Component) > maxPackageName || len(f.After) > maxPackageName {
		return f, echo.NewHTTPError(http.StatusBadRequest, "component and after are at most "+strconv.Itoa(maxPackageName)+" bytes")
	}
	if v := c.QueryParam("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > max {
			return f, echo.NewHTTPError(http.StatusBadRequest, "per_page must be between 1 and "+strconv.Itoa(max))
		}
		f.Limit = n
	}
	return f, nil
}

// packagesPage is the Packages page: pageSize packages a page.
func (s *Server) packagesPage(c echo.Context) error {
	f, err := s.packagesQuery(c, pageSize, pageSize)
	if err != nil {
		return err
	}
	page, err := s.reads.Packages(c.Request().Context(), siteOf(c).ID, f)
	if err != nil {
		return err
	}
	return renderOK(c, views.Packages(views.PackagesProps{Layout: layout(c), Site: viewSite(siteOf(c)), Rows: page.Rows, Counts: page.Counts, Filter: f.Filter,
		Component: f.Component, Query: f.Search, After: f.After, Next: page.Next, Tree: page.Tree}))
}

// readPackage reads the package the path names, escaped in one segment
// ("@types%2Fnode", the form views.PackagePath links to) or a scoped name
// plain in two ("@types/node"); 404 when the tree neither installs it nor
// did within its history, or when the first of two segments is no scope.
func (s *Server) readPackage(c echo.Context) (catalog.Package, error) {
	name, err := pathParam(c, "name")
	if err != nil {
		return catalog.Package{}, err
	}
	if c.Param("scope") != "" {
		scope, err := pathParam(c, "scope")
		if err != nil {
			return catalog.Package{}, err
		}
		if !strings.HasPrefix(scope, "@") || strings.Contains(scope, "/") || strings.Contains(name, "/") {
			return catalog.Package{}, echo.NewHTTPError(http.StatusNotFound, views.UnknownPackageText(scope+"/"+name))
		}
		name = scope + "/" + name
	}
	if len(name) > maxPackageName {
		return catalog.Package{}, echo.NewHTTPError(http.StatusBadRequest, "name is at most "+strconv.Itoa(maxPackageName)+" bytes")
	}
	p, err := s.reads.Package(c.Request().Context(), siteOf(c).ID, name, s.devMode)
	if errors.Is(err, store.ErrNotFound) {
		return catalog.Package{}, echo.NewHTTPError(http.StatusNotFound, views.UnknownPackageText(name)).WithInternal(err)
	}
	return p, err
}

// packagePage is one package's page.
func (s *Server) packagePage(c echo.Context) error {
	p, err := s.readPackage(c)
	if err != nil {
		return err
	}
	props := views.PackageProps{Layout: layout(c), Site: viewSite(siteOf(c)), Name: p.Name, Instances: p.Instances, History: p.History, Changes: p.Changes,
		Tree: p.Tree}
	props.CanManage = props.Layout.User.CanManage
	if f, ok := s.takeFlash(c, views.SitePackagePath(props.Site, p.Name)); ok {
		props.Notice, props.Error = f.Notice, f.Error
	}
	return renderOK(c, views.Package(props))
}
