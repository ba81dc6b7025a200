package views

import (
	"net/url"
	"strings"
)

// PathUsers is the Users section of the AdminCP: every account and the
// sites each may see, set by an admin who sees every site
// (docs/design.md "Who sees what").
const PathUsers = "/admin/users"

// NavUsers is the navigation entry of the Users section.
const NavUsers NavItem = "users"

// UserSitesPath is the form that sets a user's sites; it posts there.
func UserSitesPath(email string) string {
	return PathUsers + "/" + url.PathEscape(email) + "/sites"
}

// UserRow is one account as the Users section lists it.
type UserRow struct {
	Email    string
	Role     string
	Disabled bool
	// Limited: the user sees only Sites; otherwise every site.
	Limited bool
	Sites   []string
}

// UsersProps is the Users section.
type UsersProps struct {
	Layout LayoutProps
	Users  []UserRow
	// Notice confirms a change; NoticeError is a refusal.
	Notice      string
	NoticeError string
}

// UserSiteChoice is one site of the form, checked when the user may see
// it.
type UserSiteChoice struct {
	Name, Owner string
	Checked     bool
}

// UserSitesProps is the form that sets a user's sites: every site, or
// the sites checked.
type UserSitesProps struct {
	Layout  LayoutProps
	User    UserRow
	Choices []UserSiteChoice
}

// userSitesText is a user's sites in words: "every site", or their
// names.
func userSitesText(u UserRow) string {
	if !u.Limited {
		return "every site"
	}
	if len(u.Sites) == 0 {
		return "no site"
	}
	return strings.Join(u.Sites, ", ")
}
