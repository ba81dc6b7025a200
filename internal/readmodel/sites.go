package readmodel

import "time"

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

// SiteComponentsNotReadText is what a registered site's pages and its
// summary say of its components: only its installed tree is read, so no
// count of updates may stand there, and nothing may read as up to date.
const SiteComponentsNotReadText = "Components not read: upcheck reads a registered site's installed tree only, " +
	"not its components, their updates or its policy yet, so what they need is not known."
