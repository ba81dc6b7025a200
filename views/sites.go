package views

import (
	"net/url"
	"strconv"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// PathAdminSites is the Sites section of the AdminCP: the sites the
// signed-in user may see, a form to register one, and each registered
// site's rotate and remove (docs/design.md "Many sites").
const PathAdminSites = "/admin/sites"

// NavSites is the navigation entry of the Sites section.
const NavSites NavItem = "sites"

// SiteRotatePath is the rotation of a site's push token: a GET asks
// (views.Confirm), whose form POSTs there with confirmed=yes.
func SiteRotatePath(name string) string {
	return PathAdminSites + "/" + url.PathEscape(name) + "/rotate"
}

// SiteRemovePath is the removal of a registered site, asked the same way.
func SiteRemovePath(name string) string {
	return PathAdminSites + "/" + url.PathEscape(name) + "/remove"
}

// SitesPath is the Sites section searched for query (a part of a site's
// name or owner; "" for every site), at page (from 1).
func SitesPath(query string, page int) string {
	v := url.Values{}
	if query != "" {
		v.Set(ParamQuery, query)
	}
	if page > 1 {
		v.Set(ParamPage, strconv.Itoa(page))
	}
	if len(v) == 0 {
		return PathAdminSites
	}
	return PathAdminSites + "?" + v.Encode()
}

// SiteRow is one site as the section lists it: never its push token.
type SiteRow struct {
	Name  string
	Owner string
	// Local is the site upcheck runs beside: no token, never removed.
	Local     bool
	CreatedAt time.Time
	PushedAt  *time.Time
	Stale     bool
}

// SiteForm is what the add form is refilled with after a refusal.
type SiteForm struct {
	Name, Owner string
}

// SitesProps is the Sites section.
type SitesProps struct {
	Layout LayoutProps
	// Sites is one page of the sites: PageSize a page, Page from 1, of
	// Total whose name or owner holds Query.
	Sites    []SiteRow
	Query    string
	Page     int
	PageSize int
	Total    int
	// CanManage is sites.can_manage: each site's rotate and remove.
	CanManage bool
	// CanAdd is sites.can_manage with every site in view: the add form (a
	// user limited to some sites would not see the site it added).
	CanAdd bool
	// NewToken is the push token just made (add or rotate), shown this
	// once; NewTokenSite is the site it pushes for.
	NewToken     string
	NewTokenSite string
	// FormError says why a site was not added; Form refills the form.
	FormError string
	Form      SiteForm
	// Notice confirms an action; NoticeError is a refusal.
	Notice      string
	NoticeError string
	// StaleAfter is UPCHECK_SITE_STALE_AFTER, for the page's words.
	StaleAfter time.Duration
}

// sitePushText is a site's push in readmodel's words.
func sitePushText(s SiteRow, now time.Time) string {
	if s.Local {
		return readmodel.SiteLocalPushText
	}
	return readmodel.SitePushText(now, s.PushedAt, s.Stale)
}

// sitesLead says what a site is and how stale is judged.
func sitesLead(staleAfter time.Duration) string {
	return "A site pushes its lockfile with a push token of its own (PUT /api/sites/NAME/lockfile, or upcheck site push from its deploy hook). " +
		"The token is shown once, when it is made; upcheck keeps only its hash. A site that has not pushed for " +
		readmodel.SpanText(readmodel.SiteStaleAfter(staleAfter)) + " is " + readmodel.SiteStaleText + "."
}

// sitesEmptyText says why the page lists no site.
func sitesEmptyText(p SitesProps) string {
	switch {
	case p.Query != "" && p.Total == 0:
		return "No site you may see has “" + p.Query + "” in its name or owner."
	case p.Total > 0:
		return "No site on this page: there are " + thousands(p.Total) + " " + pick(p.Total, "site", "sites") + "."
	}
	return "No site you may see."
}
