package readmodel

import (
	"fmt"
	"time"
)

// The audit actions of sites (docs/design.md "Many sites"); kind other.
const (
	// AuditSiteAdd: a site was registered (detail: its name, owner).
	AuditSiteAdd AuditAction = "site.add"
	// AuditSiteRotate: a site's push token was replaced; the old one
	// stopped working.
	AuditSiteRotate AuditAction = "site.rotate"
	// AuditSiteRemove: a registered site was removed, its installed tree
	// and history with it.
	AuditSiteRemove AuditAction = "site.remove"
	// AuditSitePush: a site pushed its lockfile and it was accepted.
	AuditSitePush AuditAction = "site.push"
	// AuditSitePolicy: a registered site's update policy changed (detail:
	// the site, the policy before and after, as JSON, "" the default).
	AuditSitePolicy AuditAction = "site.policy"
	// AuditUserSites: the sites a user may see changed (limited to some,
	// or every site again); kind account.
	AuditUserSites AuditAction = "user.sites"
)

// DefaultSiteStaleAfter is how long a registered site may go without a
// push before it is stale (UPCHECK_SITE_STALE_AFTER).
const DefaultSiteStaleAfter = 7 * 24 * time.Hour

// SiteLocalPushText stands where a registered site's push is said, for the
// site upcheck runs beside: it pushes nothing, upcheck reads its
// configuration's manifest or lockfile itself.
const SiteLocalPushText = "read by upcheck itself (the site it runs beside)"

// SitePushText is a registered site's last push in words, as every page,
// list and message says it: "never pushed", "last push 9 days ago", with
// ": stale" after it when the site is stale (no push for
// UPCHECK_SITE_STALE_AFTER; a site that never pushed counts from its
// registration).
func SitePushText(now time.Time, pushedAt *time.Time, stale bool) string {
	s := "never pushed"
	if pushedAt != nil {
		s = "last push " + AgoText(now, *pushedAt)
	}
	if stale {
		s += ": " + SiteStaleText
	}
	return s
}

// SiteStaleText is the word for a stale site, alone (a column, a filter).
const SiteStaleText = "stale"

// SiteStaleAfter is the stale-after setting in effect: UPCHECK_SITE_STALE_AFTER
// (config.Config.SiteStaleAfter), or DefaultSiteStaleAfter when unset (0).
func SiteStaleAfter(setting time.Duration) time.Duration {
	if setting <= 0 {
		return DefaultSiteStaleAfter
	}
	return setting
}

// SiteComponentsText is what a registered site's pages and its summary
// say of its components (its direct dependencies, read from its pushes
// and checked with the fleet's): how many there are, and how many are
// offered an update and a security update (the summary's counts, read
// for the site); unread says that one of them was never read, so that no
// count reads as up to date. Its catalog is not a page of the site's yet.
func SiteComponentsText(components, updates, security int, unread bool) string {
	plural := func(n int, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %s", n, many)
	}
	switch {
	case components == 0:
		return "Components: none (no direct dependency pushed)."
	case unread:
		return "Components: " + plural(components, "direct dependency", "direct dependencies") +
			", not all checked yet: what they need is not known."
	}
	return "Components: " + plural(components, "direct dependency", "direct dependencies") + ", " +
		plural(updates, "update", "updates") + " offered, " + plural(security, "security update", "security updates") + "."
}
