package views

import (
	"net/url"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// A registered site's pages (docs/design.md "A site's pages"): the local
// site's pages scoped to the site, under PathSitePages/NAME; the local
// site keeps today's URLs, so every path helper here gives those for the
// site "" (the local one).

// PathSitePages is where a registered site's pages live:
// /sites/NAME (its overview), /sites/NAME/plugins (its catalog),
// /sites/NAME/plugins/CODE (a component's page and its forms),
// /sites/NAME/packages, /sites/NAME/packages/PACKAGE, /sites/NAME/sources
// and /sites/NAME/history.
const PathSitePages = "/sites"

// PathAPISitePages is where a registered site's JSON lives:
// /api/sites/NAME/summary, /api/sites/NAME/plugins/updates (its
// catalog), /api/sites/NAME/plugins/CODE (a component, its skip, approve
// and dismissals), /api/sites/NAME/packages,
// /api/sites/NAME/packages/PACKAGE, /api/sites/NAME/sources and
// /api/sites/NAME/history.
const PathAPISitePages = "/api/sites"

// SitePath is a site's overview: the dashboard for the local site ("").
func SitePath(site string) string {
	if site == "" {
		return PathDashboard
	}
	return PathSitePages + "/" + url.PathEscape(site)
}

// sitePackagesBase is a site's Packages page without a query.
func sitePackagesBase(site string) string {
	if site == "" {
		return PathPackages
	}
	return SitePath(site) + "/packages"
}

// siteCatalogBase is a site's catalog (its Plugins page) without a query.
func siteCatalogBase(site string) string {
	if site == "" {
		return PathCatalog
	}
	return SitePath(site) + "/plugins"
}

// SiteSourcesPath is a site's Sources page (Source health): the local
// site's PathSources for "".
func SiteSourcesPath(site string) string {
	if site == "" {
		return PathSources
	}
	return SitePath(site) + "/sources"
}

// SiteComponentPath is the detail page of one of site's components.
func SiteComponentPath(site, code string) string {
	return siteCatalogBase(site) + "/" + url.PathEscape(code)
}

// SitePackagesPath is a site's Packages page for a filter, a component, a
// search and a cursor; empty values are left out of the URL.
func SitePackagesPath(site string, filter readmodel.PackageFilter, component, query, after string) string {
	v := url.Values{}
	for _, kv := range [][2]string{{ParamPackageFilter, string(filter)}, {ParamComponent, component}, {ParamQuery, query}, {ParamAfter, after}} {
		if kv[1] != "" {
			v.Set(kv[0], kv[1])
		}
	}
	if len(v) == 0 {
		return sitePackagesBase(site)
	}
	return sitePackagesBase(site) + "?" + v.Encode()
}

// SitePackagePath is one package's page on a site; a scoped name's slash
// is escaped ("@types%2Fnode").
func SitePackagePath(site, name string) string {
	return sitePackagesBase(site) + "/" + url.PathEscape(name)
}

// SiteProps is a registered site's overview: its push, and its tree's
// counts as the Fleet page counts them.
type SiteProps struct {
	Layout LayoutProps
	// Row is the site's row of the fleet (its counts, its push).
	Row readmodel.FleetRow
	// Components says the site's components' counts in words
	// (readmodel.SiteComponentsText).
	Components string
	// Policy is the site's own update policy (site_policy.go).
	Policy SitePolicyProps
	// Refusal is the site's refused push that stands; nil when its last
	// push was accepted.
	Refusal *readmodel.InputRefusal
}

// sitePage fills in a site's page's navigation entry and title: a
// registered site's pages belong to the Sites section, whatever their
// kind, so that the local site's entries are not marked on them.
func sitePage(l LayoutProps, site string, nav NavItem, title string) LayoutProps {
	if site != "" {
		l.SiteNav = nav
		nav = NavSites
		title += " · " + site
	}
	return withPage(l, nav, title)
}

// siteNavItems are a registered site's pages, as its navigation
// (siteNav) lists them: its overview, its catalog, its Packages page,
// its Sources and its history.
func siteNavItems(site string) []siteNavItem {
	return []siteNavItem{
		{NavSites, "Overview", SitePath(site)},
		{NavPlugins, "Plugins", siteCatalogBase(site)},
		{NavPackages, "Packages", sitePackagesBase(site)},
		{NavSources, "Sources", SiteSourcesPath(site)},
		{NavHistory, "History", SiteHistoryPath(site, 1)},
	}
}

// siteNavItem is one entry of a registered site's navigation: the kind of
// page it marks, its label and where it leads.
type siteNavItem struct {
	Nav   NavItem
	Label string
	Href  string
}

// SiteSwitch is one site in the layout's site switcher: its name and the
// page of the current kind there (its overview when it has none of that
// kind); Current marks the site the page is about.
type SiteSwitch struct {
	Name    string
	Href    string
	Current bool
}

// SiteSwitchLimit is how many registered sites the switcher names; past
// it, it links to the Fleet page, so that a page of a fleet of 10,000
// sites names a few.
const SiteSwitchLimit = 20

// siteTreeClearText stands under a registered site's counts when its
// tree needs nothing: what was read, not that the site is up to date.
const siteTreeClearText = "Nothing in its installed tree needs attention as the feeds last read it."

// siteSwitcherLabel is the switcher's summary: "Site: acme", or "Sites"
// on a page about no one site (the Fleet page).
func siteSwitcherLabel(sites []SiteSwitch) string {
	for _, s := range sites {
		if s.Current {
			return "Site: " + s.Name
		}
	}
	return "Sites"
}

// siteRowPath is where a site's name leads in the Sites section and on
// the Fleet page: its overview, the dashboard for the local site.
func siteRowPath(name string, local bool) string {
	if local {
		return SitePath("")
	}
	return SitePath(name)
}

// TreeDismissPath is where a package page's form dismisses an advisory
// on the package, on site ("" the local site).
func TreeDismissPath(site, name, advisoryID string) string {
	return SitePackagePath(site, name) + "/advisories/" + url.PathEscape(advisoryID) + "/dismiss"
}

// TreeUndismissPath is where a package page's form ends that dismissal.
func TreeUndismissPath(site, name, advisoryID string) string {
	return SitePackagePath(site, name) + "/advisories/" + url.PathEscape(advisoryID) + "/undismiss"
}
