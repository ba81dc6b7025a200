// The Audit log page: dismissals, checks and account changes in one list,
// newest first, and the words for each entry.

package views

import (
	"encoding/json"
	"net/url"
	"strconv"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The Audit log page and its CSV export (admins only).
const (
	PathAudit    = "/admin/audit"
	PathAuditCSV = "/admin/audit.csv"
	// ParamKind filters the audit log by kind (readmodel.AuditKind); ParamPage pages it.
	ParamKind = "kind"
)

// auditKinds are the filter's options, in order.
var auditKinds = []struct{ Value, Label string }{
	{"", "All"},
	{string(readmodel.AuditKindDismissal), "Dismissals"},
	{string(readmodel.AuditKindCheck), "Checks"},
	{string(readmodel.AuditKindAccount), "Accounts and tokens"},
	{string(readmodel.AuditKindTrust), "Trusted keys"},
}

// AuditProps is the Audit log page, one page of it.
type AuditProps struct {
	Layout LayoutProps
	Rows   []readmodel.AuditRow
	// Kind is the filter, a readmodel.AuditKind or "".
	Kind string
	// Page is 1-based; Total counts the entries of Kind on every page.
	Page, PageSize, Total int
}

// AuditPath is the audit log's URL for a kind and a page (1-based; page
// 1 and the empty kind are left out).
func AuditPath(kind string, page int) string {
	return auditURL(PathAudit, kind, page)
}

// AuditCSVPath is the CSV export of every entry of a kind.
func AuditCSVPath(kind string) string {
	return auditURL(PathAuditCSV, kind, 0)
}

func auditURL(path, kind string, page int) string {
	v := url.Values{}
	if kind != "" {
		v.Set(ParamKind, kind)
	}
	if page > 1 {
		v.Set(ParamPage, strconv.Itoa(page))
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// auditWhat words an entry: "Dismissed ACME-2 for gallery".
// auditSite is the registered site an entry about a component names (its
// detail's "site", written for a registered site's skip, approval or
// dismissal); "" for the local site's.
func auditSite(r readmodel.AuditRow) string {
	var d struct {
		Site string `json:"site"`
	}
	if json.Unmarshal(r.Detail, &d) != nil {
		return ""
	}
	return d.Site
}

// auditOnSite names the registered site of an entry about its component
// after what was done (" on the site acme"); "" for the local site's.
func auditOnSite(r readmodel.AuditRow) string {
	if site := auditSite(r); site != "" {
		return " on the site " + site
	}
	return ""
}

func auditWhat(r readmodel.AuditRow) string {
	switch readmodel.AuditAction(r.Action) {
	case readmodel.AuditAdvisoryDismiss:
		return "Dismissed " + r.Advisory + " for " + r.Component
	case readmodel.AuditAdvisoryUndismiss:
		return "Restored " + r.Advisory + " for " + r.Component + ": the dismissal was undone"
	case readmodel.AuditAdvisoryExpire:
		return "The dismissal of " + r.Advisory + " for " + r.Component + " expired"
	case readmodel.AuditCheck:
		return runStatus(readmodel.ShownRunStatus(r.Status, r.Trigger)).Label + " (" + originLabel(r.Trigger, r.Actor) + ")"
	case readmodel.AuditUserCreate:
		return "Account created"
	case readmodel.AuditUserPassword:
		return "Password changed"
	case readmodel.AuditTokenCreate:
		return "API token created"
	case readmodel.AuditTokenRevoke:
		return "API token revoked"
	case readmodel.AuditUserLockout:
		return "Sign-ins locked after too many failed attempts"
	case readmodel.AuditSourceTrust:
		return "Trusted keys of an update source changed"
	case readmodel.AuditSourcePin:
		return "Pinned keys of an update source changed"
	case readmodel.AuditRegistryKeysPin:
		return "Signing keys of an npm registry pinned on first sight"
	case readmodel.AuditRegistryKeysChange:
		return "Signing keys of an npm registry changed"
	case readmodel.AuditTreeExposed:
		return "A version the site had installed is named by an advisory"
	case readmodel.AuditChannelAdd:
		return "Notification channel added"
	case readmodel.AuditChannelRemove:
		return "Notification channel deleted"
	case readmodel.AuditChannelEnable:
		return "Notification channel enabled"
	case readmodel.AuditChannelDisable:
		return "Notification channel disabled"
	case readmodel.AuditChannelTest:
		return "Test notification sent to a channel"
	case readmodel.AuditComponentSkip:
		return "Skipped a version of " + r.Component
	case readmodel.AuditComponentUnskip:
		return "Ended the skip of a version of " + r.Component
	case readmodel.AuditComponentApprove:
		return "Approved what a version of " + r.Component + " brings"
	case readmodel.AuditComponentUnapprove:
		return "Ended an approval of what a version of " + r.Component + " brings"
	case readmodel.AuditUserSites:
		return "Sites an account may see changed"
	case readmodel.AuditSiteAdd:
		return "Site registered"
	case readmodel.AuditSiteRotate:
		return "Push token of a site replaced"
	case readmodel.AuditSiteRemove:
		return "Site removed"
	case readmodel.AuditSitePush:
		return "Site pushed its lockfile"
	case readmodel.AuditSitePolicy:
		return "Update policy of a site changed"
	case readmodel.AuditSourceDowngrade:
		return "Trust went down for what " + orSource(r.Component) + " would install"
	}
	return r.Action
}

// orSource names a component, or its source when the entry names none
// (a pin change names the source).
func orSource(component string) string {
	if component == "" {
		return "an update source's components"
	}
	return component
}

// auditWhy is an entry's detail in words: a dismissal's reason and expiry,
// a check's counts, an account change's fields.
func auditWhy(r readmodel.AuditRow) string {
	switch readmodel.AuditAction(r.Action) {
	case readmodel.AuditAdvisoryDismiss:
		return "Reason: “" + r.Reason + "”. Until: " + untilText(r.ExpiresAt) + "."
	case readmodel.AuditAdvisoryUndismiss:
		if r.Reason == "" {
			return ""
		}
		return "It had been dismissed because: “" + r.Reason + "”."
	case readmodel.AuditAdvisoryExpire:
		return "Reason given: “" + r.Reason + "”. The advisory counts again."
	}
	return r.DetailText
}

// auditActor is who acted, in words.
func auditActor(r readmodel.AuditRow) string {
	return AuditActorText(r.Actor, r.Action)
}

// AuditActorText is who acted in an audit entry, in the words of the
// history (readmodel.ActorText), for the page and its CSV alike: an entry
// with no actor was made from the command line, except those upcheck made
// itself (an expiry, a lockout, a registry's keys read by a check), which
// say so.
func AuditActorText(actor, action string) string {
	switch {
	case actor != "":
		return readmodel.ActorText(actor)
	case action == string(readmodel.AuditAdvisoryExpire):
		return "upcheck, when the expiry passed"
	case action == string(readmodel.AuditUserLockout):
		return "upcheck’s login throttle"
	case action == string(readmodel.AuditRegistryKeysPin) || action == string(readmodel.AuditRegistryKeysChange):
		return "a check, reading the registry’s keys"
	case action == string(readmodel.AuditTreeExposed):
		return "upcheck, matching the tree’s history against the feeds"
	case action == string(readmodel.AuditSitePush):
		return "the site’s deploy step, with its push token"
	}
	return readmodel.ActorText(readmodel.ActorCLI)
}

// auditKindLabel names a kind in the table.
func auditKindLabel(kind string) string {
	switch readmodel.AuditKind(kind) {
	case readmodel.AuditKindDismissal:
		return "Dismissal"
	case readmodel.AuditKindCheck:
		return "Check"
	case readmodel.AuditKindAccount:
		return "Account"
	case readmodel.AuditKindTrust:
		return "Trusted keys"
	}
	return "Other"
}

// auditPages is the number of pages, at least 1.
func (p AuditProps) pages() int {
	size := p.PageSize
	if size <= 0 {
		size = DefaultPageSize
	}
	return max((p.Total+size-1)/size, 1)
}

// auditShowing is "Showing 51–100 of 230 entries".
func (p AuditProps) showing() string {
	size := p.PageSize
	if size <= 0 {
		size = DefaultPageSize
	}
	if p.Total == 0 || len(p.Rows) == 0 {
		return "No entries"
	}
	from := (max(p.Page, 1)-1)*size + 1
	return "Showing " + thousands(from) + "–" + thousands(from+len(p.Rows)-1) + " of " + thousands(p.Total) + " " + pick(p.Total, "entry", "entries")
}
