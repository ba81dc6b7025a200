// Package readmodel holds what the read model (the views component_state
// and source_state, judged by the database when read)
// condenses for the AdminCP: the update summary.
//
// It is plain data with JSON tags and imports nothing of the application,
// so one value travels the whole way: store fills it from one statement,
// catalog caches it, web returns it as the JSON of
// GET /api/admin/plugins/updates/summary and hands it to the pages, views
// renders it and metrics exports it: the badge, the alert, the widget, the
// API and /metrics read one value and cannot drift apart. The rows the
// pages list (rows.go) travel the same way.
//
// It is also upcheck's vocabulary, as rivertype is River's: every word the
// packages share is a named string type defined here once, with its
// constants and its list (CheckStatus and AllCheckStatuses, Trigger,
// EventType, AuditKind, AuditAction, ErrorKind, TrustState, SourceKind,
// ChannelKind, ChannelEvents, DeliveryState, Severity), and so is every
// threshold. TestVocabulariesMatchSQL and
// TestThresholdsMatchSQL hold them to their SQL twins.
package readmodel

import "time"

// Summary is the stored state condensed: the JSON of
// GET /api/admin/plugins/updates/summary (docs/design.md section 4), and
// what the navigation badge, the security alert and the dashboard widget
// show. Times are UTC.
type Summary struct {
	// Components counts installed components; the core counts as one.
	Components int `json:"components"`
	// UpdatesAvailable counts components whose current evaluation found an
	// installable update.
	UpdatesAvailable int `json:"updates_available"`
	// Waiting counts components whose current evaluation has a release
	// waiting for its soak (docs/policy.md): not offered yet, so not in
	// UpdatesAvailable, which counts the offered updates only.
	Waiting int `json:"waiting"`
	// SecurityUpdates counts components with a newer security release
	// (also when it needs a newer core).
	SecurityUpdates int `json:"security_updates"`
	// Vulnerable counts components whose installed version is affected by
	// an advisory nobody dismissed.
	Vulnerable int `json:"vulnerable"`
	// FailingSources counts sources in use whose last fetch did not give a
	// usable document.
	FailingSources int `json:"failing_sources"`
	// UntrustedSources counts sources in use whose trust needs a look
	// (the view source_state's untrusted): the document expires
	// within 7 days (or has expired), or the last fetch was refused for
	// its signature, its key statement or a rollback.
	UntrustedSources int `json:"untrusted_sources"`
	// UnsignedSources counts sources in use for which the manifest pins no
	// key (the view source_state's unsigned): nothing proves who
	// wrote their documents, whatever untrusted_sources says.
	UnsignedSources int `json:"unsigned_sources"`
	// Deprecated counts components whose installed version its publisher
	// deprecated (npm packages: versions[v].deprecated).
	Deprecated int `json:"deprecated"`
	// TrustDowngrades counts components whose trust went down
	// (docs/policy.md "Trust going down"): the newest offered version was
	// published without the provenance the installed version has, or by
	// an account that published none of the package's earlier versions,
	// or a manifest sync lowered the trust of the source's pinned keys.
	TrustDowngrades int `json:"trust_downgrades"`
	// Brings counts components whose offered npm update brings a signal
	// (docs/npm.md "What an update brings"): a new install script, an
	// exotic source, a lower trust, a young dependency, a burst.
	Brings int `json:"brings"`
	// KnownExploited counts components affected by an open advisory that
	// the KEV catalogue lists as exploited in the wild, nil while
	// ExploitedReadAt is nil: the KEV catalogue was never read, so no
	// advisory is known to be exploited and none may be said to be none.
	// Malicious counts those matched by an open advisory saying the
	// package is malicious (docs/feeds.md), nil while MalwareReadAt is
	// nil: no advisory feed that names malicious packages was ever read.
	KnownExploited *int `json:"known_exploited"`
	Malicious      *int `json:"malicious"`
	// ExploitedReadAt is when a feed that can say an advisory is exploited
	// in the wild (kev: FeedKind.NamesExploited) last completed a sync;
	// nil: none ever did (upcheck_exploited_read_at).
	ExploitedReadAt *time.Time `json:"exploited_read_at"`
	// MalwareReadAt is when a feed that can name malicious packages (osv,
	// osv-api: FeedKind.NamesMalware) last completed a sync; nil: none
	// ever did (upcheck_malware_read_at).
	MalwareReadAt *time.Time `json:"malware_read_at"`
	// Stale counts components whose source has gone 48 hours without a
	// successful read since the component was installed or the source last
	// succeeded, or whose document has expired (upcheck_stale, a SQL
	// function). A component installed a minute ago whose source failed is not
	// stale: it was never read successfully (NeverSucceeded).
	Stale int `json:"stale"`
	// OldestSuccessAt is the oldest last successful fetch of a source in
	// use; nil while any component with a source has none.
	OldestSuccessAt *time.Time `json:"oldest_success_at"`
	// LastCheck is the latest check that ran; nil: none has.
	LastCheck *LastCheck `json:"last_check"`
	// CheckRunning: some instance holds the check lease now.
	CheckRunning bool `json:"check_running"`
	// NotificationsFailing counts notifications not delivered whose last
	// attempt failed: retrying, or failed for good and waiting for a retry
	// by hand. It and the pending counts are of the channels told of the
	// site alone (upcheck_channel_only_of), not the fleet's.
	NotificationsFailing int `json:"notifications_failing"`
	// NotificationsPending counts notifications not delivered yet, and
	// OldestPendingSeconds is how long the oldest of them has waited (0:
	// none), on the database clock.
	NotificationsPending int     `json:"notifications_pending"`
	OldestPendingSeconds float64 `json:"oldest_pending_seconds"`
	// AttentionTotal counts the components that need attention
	// (upcheck_needs_attention, the one definition): a security problem, a
	// trust downgrade or a deprecated installed version. It is the
	// navigation badge, and the total of the catalog's attention filter.
	// Attention names the first AttentionLimit of them, most urgent first
	// (AttentionKinds), never nil; AttentionMore counts the others.
	AttentionTotal int             `json:"attention_total"`
	Attention      []AttentionItem `json:"attention"`
	AttentionMore  int             `json:"attention_more"`
	// OldestSecuritySince is the exposure clock of the summary: since when
	// this site has known of the oldest security problem still open (nil:
	// none), and OldestSecuritySeconds how long ago that is on the database
	// clock (0: none).
	OldestSecuritySince   *time.Time `json:"oldest_security_since"`
	OldestSecuritySeconds float64    `json:"oldest_security_seconds"`
	// NeverSucceeded is the first component, by name, whose update source
	// has never been read successfully (nil: none), the reason
	// OldestSuccessAt is nil.
	NeverSucceeded *ComponentRef `json:"never_succeeded"`
	// NextCheckAt is when this process's schedule fires next, on its clock;
	// nil when no schedule runs in it.
	NextCheckAt *time.Time `json:"next_check_at"`
	// InputRefusals lists the site's inputs (the lockfile or the manifest)
	// that serve read and refused, by input. While one is
	// listed, the installed components are those of the last input
	// accepted.
	InputRefusals InputRefusals `json:"input_refusals"`
	// TreePackages counts the package instances of the installed tree as
	// last read (every package the lockfile installs, the components'
	// own included), and TreeReadAt is when it was read; both nil while no
	// tree was ever read (a site whose manifest lists its components, or a
	// lockfile not synced yet): then the dependencies are not checked
	// (DependenciesNotCheckedText), and nothing may read as safe.
	TreePackages *int       `json:"tree_packages"`
	TreeReadAt   *time.Time `json:"tree_read_at"`
	// TreeCounts counts what in the installed tree needs attention
	// (upcheck_tree_attention under UPCHECK_LOCKFILE_DEV, the one
	// definition), by kind; nil while no tree was ever read (TreePackages
	// nil): the dependencies are not checked, and no 0 may read as safe.
	// TreeAttention names the first AttentionLimit of its items, most
	// urgent first (TreeKinds), never nil; TreeAttentionMore counts the
	// others.
	TreeCounts        *TreeCounts        `json:"tree_counts"`
	TreeAttention     TreeAttentionItems `json:"tree_attention"`
	TreeAttentionMore int                `json:"tree_attention_more"`
}

// TreeTotal is TreeCounts.Total, 0 while no tree was read: for sums and
// thresholds (the badge, the banner's tone), never for words that say
// how many there are.
func (s Summary) TreeTotal() int {
	if s.TreeCounts == nil {
		return 0
	}
	return s.TreeCounts.Total
}

// MaliciousCount is Malicious, 0 while no feed that names malicious
// packages was read: for sums and thresholds, never for words that say
// how many there are.
func (s Summary) MaliciousCount() int {
	if s.Malicious == nil {
		return 0
	}
	return *s.Malicious
}

// KnownExploitedCount is KnownExploited, 0 while the KEV catalogue was
// not read: for sums and thresholds, never for words that say how many
// there are.
func (s Summary) KnownExploitedCount() int {
	if s.KnownExploited == nil {
		return 0
	}
	return *s.KnownExploited
}

// AttentionLimit is how many components Summary.Attention names.
const AttentionLimit = 5

// AttentionItem is one component that needs action.
type AttentionItem struct {
	Code      string `json:"code"`
	Name      string `json:"name"`
	Installed string `json:"installed"`
	// UpdateVersion is the installable update; nil: none.
	UpdateVersion *string `json:"update_version"`
	// Kind is the most urgent of its problems: malicious (a known
	// malicious package), known_exploited (an open advisory exploited in
	// the wild), vulnerable_no_fix (an open advisory with no fixed
	// version), security (a newer security release), vulnerable,
	// provenance_lost, new_publisher, pin_downgrade (trust downgrades) or
	// deprecated.
	Kind AttentionKind `json:"kind"`
	// SecurityRelease is the newest security release newer than the
	// installed version, installable or not; nil: none.
	SecurityRelease *ReleaseRef `json:"security_release"`
	// Advisory is the most urgent open advisory affecting the installed
	// version (no fix first, then by severity); nil: none.
	Advisory *AdvisoryRef `json:"advisory"`
	// SecuritySince is since when this site has known of its oldest open
	// security problem.
	SecuritySince *time.Time `json:"security_since"`
	// Deprecated is the publisher's deprecation message of the installed
	// version; nil: not deprecated.
	Deprecated *string `json:"deprecated"`
	// ProvenanceLost is the newer version published without the provenance
	// the installed one has; nil: none.
	ProvenanceLost *string `json:"provenance_lost"`
	// NewPublisher is the offered version published by an account new to
	// the package; nil: none.
	NewPublisher *NewPublisher `json:"new_publisher"`
	// PinDowngrade is the manifest sync that lowered the trust of the
	// source's pinned keys, while shown (PinDowngradeShown); nil: none.
	PinDowngrade *PinDowngrade `json:"pin_downgrade"`
	// Brings is the most pressing signal of what the offered update
	// brings (KindBrings; docs/npm.md "What an update brings"); nil: none.
	Brings *Signal `json:"brings"`
}

// AttentionKind is why a component needs attention (AttentionItem.Kind),
// as the summary's SQL names it: one of AttentionKinds.
type AttentionKind string

// The kinds of AttentionItem, most urgent first.
const (
	// KindMalicious: an open advisory says the installed package is
	// malicious: remove it.
	KindMalicious AttentionKind = "malicious"
	// KindKnownExploited: an open advisory is exploited in the wild (KEV).
	KindKnownExploited  AttentionKind = "known_exploited"
	KindVulnerableNoFix AttentionKind = "vulnerable_no_fix"
	KindSecurity        AttentionKind = "security"
	KindVulnerable      AttentionKind = "vulnerable"
	// KindProvenanceLost: the newest offered version lost the provenance
	// the installed one has (a trust downgrade).
	KindProvenanceLost AttentionKind = "provenance_lost"
	// KindNewPublisher: the offered version was published by an account
	// that published none of the package's earlier versions.
	KindNewPublisher AttentionKind = "new_publisher"
	// KindPinDowngrade: a manifest sync lowered the trust of the source's
	// pinned keys (a lower threshold, keys no longer pinned).
	KindPinDowngrade AttentionKind = "pin_downgrade"
	// KindBrings: the offered update brings a signal (Signal: a new
	// install script, an exotic source, a lower trust, a young
	// dependency, a burst), ranked by its most pressing one (SignalRank).
	KindBrings AttentionKind = "brings"
	// KindDeprecated: the installed version is deprecated by its publisher.
	KindDeprecated AttentionKind = "deprecated"
)

// NewPublisher is a version published by an account (npm's _npmUser)
// that published none of the package's earlier versions.
type NewPublisher struct {
	Version string `json:"version"`
	Account string `json:"account"`
}

// PinDowngrade is a manifest sync that lowered the trust of a source's
// pinned keys: what it did, in words (pin_downgrades.reason: "the
// manifest requires 1 signature where it required 2"), and when.
type PinDowngrade struct {
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// PinDowngradeText says a pin downgrade as every page words it.
func PinDowngradeText(reason string) string {
	if reason == "" {
		return "the manifest lowered the trust of this source's keys"
	}
	return "the manifest lowered the trust of this source's keys: " + reason
}

// ReleaseRef is a release as the summary names it.
type ReleaseRef struct {
	Version  string `json:"version"`
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	// Installable: the installed core runs it (otherwise a newer core is
	// needed first).
	Installable bool `json:"installable"`
}

// AdvisoryRef is an advisory as the summary names it.
type AdvisoryRef struct {
	ID       string `json:"id"`
	Summary  string `json:"summary"`
	Severity string `json:"severity"`
	// FixedIn is the first fixed version; nil: no fix yet.
	FixedIn *string `json:"fixed_in"`
	// ClearedBy is the oldest release newer than the installed version
	// that the advisory does not affect (nil: none), the way out of an
	// advisory that names no fixed version, a malicious one among them.
	ClearedBy *string `json:"cleared_by"`
	// KnownExploited: the KEV catalogue lists it, and KEVDue is the due
	// date KEV sets (YYYY-MM-DD; nil: none); Malicious: it says the
	// package is malicious.
	KnownExploited bool    `json:"known_exploited"`
	KEVDue         *string `json:"kev_due"`
	Malicious      bool    `json:"malicious"`
}

// ComponentRef names a component.
type ComponentRef struct {
	Code string `json:"code"`
	Name string `json:"name"`
}

// LastCheck is the latest check that ran: refused attempts (busy,
// cooldown, skipped) and one still running do not count.
type LastCheck struct {
	// Status is how it ended: neither refused nor running.
	Status CheckStatus `json:"status"`
	// Trigger is what started it; never TriggerImport.
	Trigger Trigger `json:"trigger"`
	// Actor is who started it: a user's email, or one of the Actor*
	// constants (the demo's first check is ActorDemo).
	Actor      string     `json:"actor"`
	FinishedAt *time.Time `json:"finished_at"`
}
