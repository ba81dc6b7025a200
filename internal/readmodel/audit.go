package readmodel

import (
	"slices"
	"time"
)

// AuditKind is the kind of an audit log entry, the Audit log page's and
// GET /api/admin/audit's filter: judged in SQL from the action's first
// word (queries/audit_log.sql).
type AuditKind string

// The kinds, in the order the Audit log page offers them.
const (
	AuditKindDismissal AuditKind = "dismissal"
	AuditKindCheck     AuditKind = "check"
	AuditKindAccount   AuditKind = "account"
	// AuditKindTrust: a source's trusted or pinned keys changed.
	AuditKindTrust AuditKind = "trust"
	// AuditKindOther: anything else (a notification channel's change);
	// shown, not offered as a filter.
	AuditKindOther AuditKind = "other"
)

// AllAuditKinds are the kinds, in the order the page offers them, other
// last.
func AllAuditKinds() []AuditKind {
	return []AuditKind{AuditKindDismissal, AuditKindCheck, AuditKindAccount, AuditKindTrust, AuditKindOther}
}

// Filterable reports whether the audit log can be filtered by k: every
// kind but other.
func (k AuditKind) Filterable() bool {
	return k != AuditKindOther && slices.Contains(AllAuditKinds(), k)
}

// AuditAction is what an audit log entry records (audit_log.action). The
// values are stored: add actions, never rename one.
type AuditAction string

// The actions.
const (
	AuditAdvisoryDismiss   AuditAction = "advisory.dismiss"
	AuditAdvisoryUndismiss AuditAction = "advisory.undismiss"
	// AuditAdvisoryExpire is derived, never written: a dismissal whose
	// expiry passed while it stood.
	AuditAdvisoryExpire AuditAction = "advisory.expire"
	// AuditCheck is derived from check_runs, never written: a check.
	AuditCheck        AuditAction = "check"
	AuditUserCreate   AuditAction = "user.create"
	AuditUserPassword AuditAction = "user.password"
	// AuditUserLockout: the login throttle locked an account's sign-ins.
	AuditUserLockout AuditAction = "user.lockout"
	AuditTokenCreate AuditAction = "token.create"
	AuditTokenRevoke AuditAction = "token.revoke"
	// AuditSourceTrust: a source's trusted keys changed (a key statement).
	AuditSourceTrust AuditAction = "source.trust"
	// AuditSourcePin: the keys the manifest pins for a source changed.
	AuditSourcePin AuditAction = "source.pin"
	// AuditRegistryKeysPin: an npm registry's signing keys were pinned on
	// first sight; AuditRegistryKeysChange: it published other keys than
	// the pinned ones, which are pinned in their turn.
	AuditRegistryKeysPin    AuditAction = "registry.keys_pin"
	AuditRegistryKeysChange AuditAction = "registry.keys_change"
	AuditChannelAdd         AuditAction = "channel.add"
	AuditChannelRemove      AuditAction = "channel.remove"
	AuditChannelEnable      AuditAction = "channel.enable"
	AuditChannelDisable     AuditAction = "channel.disable"
	AuditChannelTest        AuditAction = "channel.test"
	// AuditComponentSkip and AuditComponentUnskip: a version of a
	// component was skipped, or its skip ended (docs/policy.md); kind
	// dismissal, as decisions about what to heed.
	AuditComponentSkip   AuditAction = "component.skip"
	AuditComponentUnskip AuditAction = "component.unskip"
	// AuditComponentApprove: an admin (or the manifest) approved what a
	// version of a component brings, an install script or a source
	// outside the registry, for a policy that holds it until then
	// (docs/policy.md "Approvals"); kind dismissal, as a skip.
	AuditComponentApprove AuditAction = "component.approve"
	// AuditComponentUnapprove: an approval the manifest declared ended
	// (the manifest no longer declares it).
	AuditComponentUnapprove AuditAction = "component.unapprove"
	// AuditSourceDowngrade: the trust of what a component would install
	// went down (docs/policy.md "Trust going down"): a manifest sync
	// lowered its source's pin, the offered npm version lost provenance,
	// or was published by an account new to the package.
	AuditSourceDowngrade AuditAction = "source.downgrade"
)

// AllAuditActions are the actions, grouped by kind.
func AllAuditActions() []AuditAction {
	return []AuditAction{AuditAdvisoryDismiss, AuditAdvisoryUndismiss, AuditAdvisoryExpire, AuditCheck,
		AuditUserCreate, AuditUserPassword, AuditUserLockout, AuditTokenCreate, AuditTokenRevoke,
		AuditSourceTrust, AuditSourcePin, AuditRegistryKeysPin, AuditRegistryKeysChange,
		AuditChannelAdd, AuditChannelRemove, AuditChannelEnable, AuditChannelDisable, AuditChannelTest,
		AuditComponentSkip, AuditComponentUnskip, AuditComponentApprove, AuditComponentUnapprove, AuditSourceDowngrade, AuditTreeExposed,
		AuditUserSites, AuditSiteAdd, AuditSiteRotate, AuditSiteRemove, AuditSitePush, AuditSitePolicy}
}

// AuditRow is one entry of the audit log, as the store reads it (an
// audit_log row, a dismissal whose expiry passed while it stood, or a
// check) and as the Audit log page, its CSV and GET /api/admin/audit show
// it.
type AuditRow struct {
	At time.Time
	// Kind is an AuditKind.
	Kind string
	// Action is the audit action (advisory.dismiss, advisory.undismiss,
	// advisory.expire, user.create, …) or "check".
	Action string
	// Actor is who acted: an email, or an Actor* for checks; "" when
	// nobody did (an expiry, a command-line account change).
	Actor string
	// Component and Advisory are a dismissal's.
	Component, Advisory string
	// Reason is a dismissal's (for an undone one, the reason it had had).
	Reason    string
	ExpiresAt *time.Time
	// Trigger and Status are a check's.
	Trigger, Status string
	// Detail is the entry's JSON: the audit row's own, a check's counts.
	Detail []byte
	// DetailText is Detail in words ("name: ci") for the page, for the
	// entries it does not word itself; set by the page's handler.
	DetailText string
}
