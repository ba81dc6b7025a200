package readmodel

import (
	"time"

	"github.com/google/uuid"
)

// The rows the AdminCP lists, each defined once: store fills them from the
// read model's views (and the notification tables), web hands them to
// views unchanged, views words them and the API encodes them (web's
// api_rows.go, one JSON type per row, where the JSON names differ).

// CatalogRow is one installed component as the read model
// (component_state) sees it: every flag is derived there, when read.
type CatalogRow struct {
	Code, Name, Installed string
	// SourceURL is the update source; "" for a component nobody publishes
	// updates for. SourceKind is its kind (SourceKindOf; "" without a
	// source), Package the npm package it names ("" for other kinds).
	SourceURL  string
	SourceKind SourceKind
	Package    string
	// Evaluated: a result evaluated from the current inputs exists; the
	// update facts below come from it.
	Evaluated bool
	// Latest is the newest version the source publishes, UpdateVersion the
	// installable update, RequiredCore the core range the newest release
	// needs when the installed core cannot run it; "" when none.
	Latest, UpdateVersion, RequiredCore string
	// UpdateAvailable: an installable update exists. Security: a newer
	// release is a security release (also when it needs a newer core).
	UpdateAvailable, Security bool
	// Vulnerable: an advisory nobody dismissed affects the installed
	// version; VulnerableNoFix: one of them has no fixed version yet.
	Vulnerable, VulnerableNoFix bool
	// KnownExploited: one of them is in the KEV catalogue; Malicious: one
	// of them says the package is malicious (docs/feeds.md).
	KnownExploited, Malicious bool
	// TreeCounted counts the package versions in the component's
	// dependencies (the installed packages that bring it in) that need
	// attention under UPCHECK_LOCKFILE_DEV (upcheck_tree_attention, the
	// one definition), TreeMalicious those of them a malicious-package
	// record names; 0 while no tree was read (ComponentTreeText words
	// them).
	TreeCounted, TreeMalicious int
	// NeedsNewerCore: a newer release exists that the installed core
	// cannot run. Stale: 48 hours without a successful read of the source
	// since the component was installed or the source last succeeded, or
	// its document has expired (upcheck_stale). Failing: the source's
	// last fetch did not give a usable document (upcheck_failing).
	NeedsNewerCore, Stale, Failing bool
	// NeedsAttention is the database's judgement (upcheck_needs_attention,
	// the one definition the summary counts by): FilterAttention shows
	// the row. Left out of the row's JSON, as store.CatalogEntry left it
	// out before it moved here (the API writes rows of its own).
	NeedsAttention bool `json:"-"`
	// Advisories is a JSON array: the advisories no admin dismissed.
	Advisories []byte
	// ReleaseURL is the release notes of the update.
	ReleaseURL string
	// UpdateCommand is how to install the update (UpdateCommand): the npm
	// command, or the release's URL; "" when there is no update.
	UpdateCommand string
	// FixVersion is the oldest release the policy offers and the installed
	// core runs that clears every advisory such a release clears, and
	// FixCommand how to install it; "" when none (docs/policy.md).
	FixVersion, FixCommand string
	// Deprecated is the publisher's deprecation message of the installed
	// version; "" when it is not deprecated. ProvenanceLost is the newest
	// offered version when it was published without the provenance the
	// installed version has (a trust downgrade); "" when none.
	Deprecated, ProvenanceLost string
	// LastSuccessAt and LastAttemptAt are the source's fetches; nil: never.
	LastSuccessAt, LastAttemptAt *time.Time
	// LastError is the source's last fetch error (technical text),
	// LastErrorKind (an ErrorKind) and LastErrorArgs word it.
	LastError     string
	LastErrorKind string
	LastErrorArgs FailureArgs
	// EvalError is why the stored document could not be evaluated.
	EvalError string
	// SecuritySince is the exposure clock (component_exposure): since when
	// this site has known of its oldest open security problem; nil: none.
	SecuritySince *time.Time
	// Dismissed counts the advisories of the current result whose
	// dismissal is in force; DismissedUntil is the soonest end among those
	// that end (nil: none ends).
	Dismissed      int
	DismissedUntil *time.Time
	// Policy is the component's policy (components.policy: the canonical
	// JSON of release.Policy); "" offers every release at once.
	Policy string
	// What the policy held back, from the current result (nil: nothing, or
	// not evaluated): the newest release waiting for its soak, the newest
	// one the policy does not offer (held by the hold range, or outside
	// the tier), and the skip when it hid a release.
	Waiting *WaitingRelease
	Held    *HeldRelease
	Skipped *SkippedVersion
	// NewPublisher is the offered version when an account new to the
	// package published it (the current result); PinDowngrade a manifest
	// sync that lowered the source's trust, while shown (evaluated or
	// not). Nil: none. Trust downgrades, as ProvenanceLost.
	NewPublisher *NewPublisher
	PinDowngrade *PinDowngrade
	// Brings are the signals of what the offered npm update brings
	// (RegistryFacts.Brings), most pressing first; nil: none.
	Brings []Signal
}

// RunRow is one row of the check history: one run, or refusals folded
// together (Repeats of them, the first started at FirstStartedAt; the
// other fields are the newest one's).
type RunRow struct {
	ID int64
	// Trigger is scheduled, manual or operator; Actor who asked: a user's
	// email, or one of the Actor* constants.
	Trigger, Actor string
	// Status is running, completed, completed_with_failures, busy,
	// cooldown, skipped, lease_lost, connection_lost, cancelled, failed or
	// abandoned (ShownRunStatus says how a refused import reads).
	Status, Error  string
	Repeats        int
	FirstStartedAt time.Time
	StartedAt      time.Time
	FinishedAt     *time.Time
	DurationMS     int64
	// Source counts of a check that ran. Skipped counts the sources whose
	// outcome was not written because the check stopped first.
	Fetched, NotModified, Failed, Skipped int
	// Unwritten: of Skipped, the sources fetched whose outcome was not
	// written (the others were never started).
	Unwritten int
}

// SourceRow is one source a site's components use as the read model
// (site_source_state) sees it.
type SourceRow struct {
	URL string
	// Kind is the source's kind (SourceKindOf); Package the npm package an
	// npm source names ("" for other kinds).
	Kind    SourceKind
	Package string
	// Registry is the npm registry's URL (no credentials), RegistryKeys
	// the ids of the signing keys pinned for it ("" and nil for other
	// kinds, or a registry that publishes none), KeysChangedAt when they
	// last changed after first sight (nil: never).
	Registry      string
	RegistryKeys  []string
	KeysChangedAt *time.Time
	// Components counts the installed components it serves.
	Components int
	// HasDocument: a valid document was received once.
	HasDocument                  bool
	LastSuccessAt, LastAttemptAt *time.Time
	// LastError is the technical text of the last failure; LastErrorKind
	// (an ErrorKind) and LastErrorArgs word it.
	LastError           string
	LastErrorKind       string
	LastErrorArgs       FailureArgs
	ConsecutiveFailures int
	// ExpiresAt is the stored document's own expiry, shown as it is; the
	// read model judges it (Expired, Stale).
	ExpiresAt               *time.Time
	Expired, Stale, Failing bool
	// ExpiresSoon: the document has not expired and expires within
	// ExpiryWarning, judged on the database clock.
	ExpiresSoon bool
	// SignatureState is a readmodel.TrustState.
	SignatureState string
	// Trust (source_state, source_trust): the pin (canonical text, ""
	// for none), how many keys are trusted now, the key statement they
	// came from (0: the pin's own), the stored document's sequence and
	// the short forms of the keys that verified it, and source_state's
	// untrusted and unsigned (nothing proves who wrote its documents).
	Pin          string
	TrustedCount int
	KeyVersion   int64
	Sequence     *int64
	VerifiedBy   []string
	Untrusted    bool
	Unsigned     bool
	// Offline: an "offline:NAME" source, never fetched; its documents come
	// by import (source_state.offline).
	Offline bool
}

// ChannelRow is a notification channel.
type ChannelRow struct {
	ID   int64
	Name string
	// Kind is webhook, slack or email.
	Kind string
	// Target is the URL, or comma-separated addresses: a credential, shown
	// only through notify.ShownTarget.
	Target string
	// Events is security or all.
	Events string
	// MinEPSS is the least EPSS probability (0 to 1) an unfixed advisory
	// must have to be sent; nil: every one. Known-exploited and malicious
	// package events are always sent.
	MinEPSS        *float64
	Enabled        bool
	DisabledReason string
	CreatedAt      time.Time
	// Scope is which sites the channel is told of (ChannelScope).
	Scope ChannelScope
	// SiteIDs and Sites are a ScopeSites channel's sites, by name; empty
	// for the other scopes.
	SiteIDs []int64
	Sites   []string
}

// DeliveryRow is one queued notification event and how its delivery
// stands, as the operator sees it.
type DeliveryRow struct {
	ID                     uuid.UUID
	ChannelID              int64
	ChannelName, Type, Key string
	// State is pending, delivered or failed.
	State                      string
	Attempts                   int
	LastError                  string
	LastAttemptAt, DeliveredAt *time.Time
	// NextAttemptAt: pending after a failed attempt, when it is tried
	// again.
	NextAttemptAt *time.Time
	CreatedAt     time.Time
	// MessageID is the email message the event is sent in; uuid.Nil for
	// webhook and slack events, and email events not yet gathered.
	MessageID uuid.UUID
	// HeldAt is when a pending event was held because its channel was
	// disabled; nil when it is not held. Enabling the channel sends it.
	HeldAt *time.Time
}
