// Helpers of the layout that every signed-in page shares: its title and
// navigation entry, its clock and its asset URLs.

package views

import (
	"time"

	"github.com/upcheck/upcheck/static"
)

// assetURL is the URL of a static file through the page's Asset function.
func assetURL(asset func(string) string, name string) string {
	if asset == nil {
		return static.Path(name)
	}
	return asset(name)
}

// withPage fills in a page's own navigation entry and title.
func withPage(l LayoutProps, nav NavItem, title string) LayoutProps {
	if l.Nav == NavNone {
		l.Nav = nav
	}
	if l.Title == "" {
		l.Title = title
	}
	return l
}

// now is the render's clock: LayoutProps.Now, or time.Now() when unset.
func (l LayoutProps) now() time.Time {
	if l.Now.IsZero() {
		return time.Now()
	}
	return l.Now
}

// The navigation badge's words: what its number counts.
const (
	attentionBadgeOne  = "component needs attention"
	attentionBadgeMany = "components need attention"
)

// attentionBadgeText is the navigation badge's words for its tooltip and
// screen readers: "3 components need attention".
func attentionBadgeText(n int) string {
	return countNoun(n, attentionBadgeOne, attentionBadgeMany)
}

// roleLabel words a role.
func roleLabel(role string) string {
	switch role {
	case "admin":
		return "Administrator"
	case "viewer":
		return "Viewer"
	default:
		return role
	}
}
