package views

import (
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// NavItem names the navigation entry a page belongs to; the layout marks it
// with aria-current="page".
type NavItem string

// The navigation entries.
const (
	NavNone      NavItem = ""
	NavDashboard NavItem = "dashboard"
	NavPlugins   NavItem = "plugins"
	NavPackages  NavItem = "packages"
	NavHistory   NavItem = "history"
	NavSources   NavItem = "sources"
	NavNotify    NavItem = "notifications"
	NavAudit     NavItem = "audit"
	NavFleet     NavItem = "fleet"
)

// User is the signed-in user as the layout shows them.
type User struct {
	Email string
	// Role is "admin" or "viewer"; other values are shown as they are.
	Role string
	// CanManage is the plugins.can_manage permission.
	CanManage bool
	// CanManageTokens is tokens.can_manage: the API tokens section.
	CanManageTokens bool
	// CanManageUsers is sites.can_manage with every site in view: the
	// Users section, where who sees what is set.
	CanManageUsers bool
	// CanAudit is the audit.can_view permission: the Audit log's entry in
	// the navigation.
	CanAudit bool
	// NoLocalSite: the user is limited to sites among which the local site
	// is not (docs/design.md "Who sees what"); the local site's pages are
	// not linked, and answer 404.
	NoLocalSite bool
}

// LayoutProps is what every signed-in page shares.
type LayoutProps struct {
	// Title is the page title; pages fill in their own when it is empty.
	Title string
	User  User
	// CSRFToken is rendered in <meta name="csrf-token"> for app.js and in
	// every form that posts (including the logout form).
	CSRFToken string
	// Nav is the active navigation entry; pages fill in their own when it
	// is empty.
	Nav NavItem
	// Summary is the request's one update summary, the value the JSON API
	// returns; the navigation badge, the security alert and the dashboard
	// widget all read it, so they never disagree.
	Summary readmodel.Summary
	// Asset returns the fingerprinted URL of a static file such as
	// "css/app.css"; nil uses static.Path.
	Asset func(name string) string
	// Site is the registered site the page is about; "" for the local
	// site's pages and those about no one site. The local site's alerts
	// are not shown on a registered site's pages.
	Site string
	// SiteNav is the kind of a registered site's page (its overview:
	// NavSites, its catalog, its Packages), marked in the site's own
	// navigation; Nav is then NavSites.
	SiteNav NavItem
	// Sites is the site switcher (the sites the user may see, the local
	// one first; shown when more than one), SitesMore: there are more
	// than it names.
	Sites     []SiteSwitch
	SitesMore bool
	// Now is the time relative times are computed from ("3 hours ago");
	// the zero value means time.Now().
	Now time.Time
}

// home is where the brand leads: the dashboard, or the Sites section for a
// user who may not see the local site.
func (u User) home() string {
	if u.NoLocalSite {
		return PathAdminSites
	}
	return PathDashboard
}
