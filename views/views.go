// Package views holds upcheck's templ templates: one layout, one props struct
// per page, no database or HTTP calls inside a template.
//
// Files are grouped by page (pageGroups, shared_groups_test.go): a page's template,
// props, sentences and badges are its NAME.templ, NAME.go and NAME_*.go
// (detail.templ, detail.go, detail_headline.go, …), its tests NAME*_test.go;
// what several pages share is in layout*, shared_* and this file.
//
// Every page is a function of its props alone. The handlers (internal/web)
// read the store, put what they found into the page's props and render,
// for example:
//
//	views.Dashboard(views.DashboardProps{Layout: lp, CanManage: true}).Render(ctx, w)
//
// Props are plain values: strings, numbers, bools, times, rows of those,
// and the Asset function. The update summary is readmodel.Summary itself,
// the value the JSON API returns, not a copy, and the rows the pages list
// are readmodel's rows as store filled them. So this package imports of
// the application only internal/readmodel (plain data) and the static
// assets it links to, and nothing but internal/web imports it (see
// TestImports). Relative times ("3 hours ago") are computed from
// LayoutProps.Now, which makes a render deterministic in tests.
//
// Elements that tests assert carry a data-testid attribute; the names are
// part of the contract with the browser tests and with static/js/app.js,
// which finds the navigation badge, the security alert, the dashboard widget
// and the check outcome by them. Keep them stable.
package views

import (
	"net/url"
	"strconv"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The AdminCP's URLs as the templates link to them; app.js receives the API
// paths through data attributes. internal/web/routes.go registers the same
// paths written out (so that one file lists the whole surface), and some
// handlers redirect to them by their text: a path changed here must be
// changed there too.
const (
	PathLogin     = "/login"
	PathLogout    = "/logout"
	PathDashboard = "/admin"
	PathCatalog   = "/admin/plugins"
	PathHistory   = "/admin/history"
	PathSources   = "/admin/sources"
	// PathNotifications lists the notification channels and deliveries;
	// admins add, test and remove channels and retry failed deliveries.
	PathNotifications = "/admin/notifications"
	// PathCheck is the no-JavaScript "Check for updates" form: POST, then
	// redirect to the dashboard with the outcome as DashboardProps.Flash.
	PathCheck = "/admin/plugins/updates/check"
	// PathAPICheck and PathAPISummary are the JSON endpoints app.js calls.
	PathAPICheck   = "/api/admin/plugins/updates/check"
	PathAPISummary = "/api/admin/plugins/updates/summary"
	// PathAPICatalog is the catalog as JSON, for scripts.
	PathAPICatalog = "/api/admin/plugins/updates"
)

// CSRFField is the name of the hidden form field that carries the CSRF
// token in every form that posts; app.js sends the same token in the
// X-CSRF-Token header, read from <meta name="csrf-token">.
const CSRFField = "csrf_token"

// The catalog's query parameters; its filters are readmodel's
// (readmodel.CatalogFilters).
const (
	ParamFilter = "status"
	ParamQuery  = "q"
	ParamPage   = "page"
)

// DefaultPageSize is used when CatalogProps.PageSize is not positive.
const DefaultPageSize = 50

// ComponentPath is the detail page of one of the local site's components
// (SiteComponentPath).
func ComponentPath(code string) string {
	return SiteComponentPath("", code)
}

// AdvisoryDismissPath is where a manager POSTs to dismiss advisory id for
// site's component code ("": the local site's).
func AdvisoryDismissPath(site, code, id string) string {
	return SiteComponentPath(site, code) + "/advisories/" + url.PathEscape(id) + "/dismiss"
}

// AdvisoryUndismissPath is where a manager POSTs to bring a dismissed
// advisory of site's component back.
func AdvisoryUndismissPath(site, code, id string) string {
	return SiteComponentPath(site, code) + "/advisories/" + url.PathEscape(id) + "/undismiss"
}

// CatalogPath is the local site's catalog URL for a filter, a search
// query and a page (SiteCatalogPath).
func CatalogPath(filter readmodel.Filter, query string, page int) string {
	return SiteCatalogPath("", filter, query, page)
}

// SiteCatalogPath is a site's catalog URL for a filter, a search query
// and a page (1-based; page 1 and empty values are left out of the URL).
func SiteCatalogPath(site string, filter readmodel.Filter, query string, page int) string {
	v := url.Values{}
	if filter != "" {
		v.Set(ParamFilter, string(filter))
	}
	if query != "" {
		v.Set(ParamQuery, query)
	}
	if page > 1 {
		v.Set(ParamPage, strconv.Itoa(page))
	}
	if len(v) == 0 {
		return siteCatalogBase(site)
	}
	return siteCatalogBase(site) + "?" + v.Encode()
}
