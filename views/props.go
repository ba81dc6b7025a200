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
	NavHistory   NavItem = "history"
	NavSources   NavItem = "sources"
	NavNotify    NavItem = "notifications"
	NavAudit     NavItem = "audit"
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
	// CanAudit is the audit.can_view permission: the Audit log's entry in
	// the navigation.
	CanAudit bool
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
	// Now is the time relative times are computed from ("3 hours ago");
	// the zero value means time.Now().
	Now time.Time
}

// LoginProps is the login page. It has no layout: nobody is signed in.
type LoginProps struct {
	// Error is shown above the form, e.g. "Wrong email or password."
	Error string
	// Email refills the email field after a failed attempt.
	Email string
	// Next is the local path to return to after logging in; posted back as
	// the hidden field "next". The handler must check it is a local path.
	Next string
	// CSRFToken is posted back as csrf_token; it may be empty.
	CSRFToken string
	// Asset as in LayoutProps; nil uses static.Path.
	Asset func(name string) string
}

// DashboardProps is the dashboard: the updates widget (from
// Layout.Summary) and, for managers, the "Check for updates" button.
type DashboardProps struct {
	Layout LayoutProps
	// CanManage shows the check button (plugins.can_manage).
	CanManage bool
	// Flash is the outcome of a check posted without JavaScript, shown in
	// the same live region app.js writes to; CheckOutcomeMessage words it.
	Flash string
	// FlashTone is its notice's tone (CheckOutcomeTone).
	FlashTone string
	// Cooldown is the least time between two manual checks in force
	// (updatecheck.Checker.Cooldown), which the page's words name; 0
	// words the production one, readmodel.ManualCooldown.
	Cooldown time.Duration
}

// CatalogRow is one installed component in the catalog.
type CatalogRow struct {
	Code      string
	Name      string
	Installed string
	// Latest is the newest version the source publishes; "" when unknown.
	Latest string
	// UpdateVersion is the version the available update installs.
	UpdateVersion   string
	UpdateAvailable bool
	// Security: a newer release is a security release (also when it needs a
	// newer core; NeedsNewerCore then says so).
	Security bool
	// Vulnerable: the installed version is affected by an advisory.
	Vulnerable bool
	// VulnerableNoFix: at least one such advisory has no fixed version yet.
	VulnerableNoFix bool
	// NeedsNewerCore: a newer release exists that the installed core cannot
	// run; RequiredCore is its requirement, e.g. ">=1.8.0".
	NeedsNewerCore bool
	RequiredCore   string
	// ReleaseURL is the release notes of the update; SourceURL the update
	// source ("" for a component nobody publishes updates for).
	ReleaseURL string
	SourceURL  string
	// LastSuccessAt is the last successful fetch of this component's source;
	// nil: never. LastAttemptAt is the last attempt, successful or not.
	LastSuccessAt *time.Time
	LastAttemptAt *time.Time
	// LastError is the last failure of the source or of the evaluation:
	// the technical text, shown behind the sentence of its kind.
	LastError string
	// LastErrorKind (a readmodel.ErrorKind) and LastErrorArg word it.
	LastErrorKind, LastErrorArg string
	// Stale: 48 hours without a successful read of the source since the
	// component was installed or the source last succeeded, or its
	// document has expired (the read model decides, upcheck_stale).
	Stale bool
	// Evaluated: the row's update facts come from a current evaluation.
	Evaluated bool
	// SecuritySince is the exposure clock: since when this site has known
	// of the component's oldest open security problem; nil: none.
	SecuritySince *time.Time
	// Dismissed counts its advisories whose dismissal is in force;
	// DismissedUntil is the soonest end among them (nil: none ends).
	Dismissed      int
	DismissedUntil *time.Time
}

// CatalogProps is the plugin catalog, one page of it.
type CatalogProps struct {
	Layout LayoutProps
	// Rows is the current page, in display order.
	Rows []CatalogRow
	// Filter is one of the Filter* constants ("" for all).
	Filter string
	// Query is the search text (parameter "q"), matched by the handler.
	Query string
	// Page is 1-based; PageSize defaults to DefaultPageSize; Total counts
	// the components matching Filter and Query on all pages.
	Page, PageSize, Total int
	// Counts is how many components each filter shows with Query, by
	// filter value ("" for all); nil shows the filters without counts.
	Counts map[string]int
}

// ReleaseRow is one published release of a component, newest first.
type ReleaseRow struct {
	Version string
	// Released is display text, e.g. "2026-11-20".
	Released string
	Security bool
	// Severity is critical, high, medium or low (security releases).
	Severity     string
	Summary      string
	URL          string
	RequiresCore string
	// Installable: the installed core satisfies RequiresCore.
	Installable bool
}

// AdvisoryRow is one advisory affecting the installed version.
type AdvisoryRow struct {
	ID       string
	Severity string
	Summary  string
	URL      string
	// Affected is the vulnerable version range, e.g. "<2.4.0" (optional).
	Affected string
	// FixedIn is the first fixed version; NoFix: none published yet.
	FixedIn string
	NoFix   bool
	// Dismissed: a dismissal is in force; the advisory does not count.
	Dismissed bool
	// Dismissal is the standing dismissal, in force or not (then the page
	// says why the advisory counts again); nil: none.
	Dismissal *AdvisoryDismissal
	// OSV is what the advisory says in OSV's terms (aliases, CVSS, dates,
	// references).
	OSV AdvisoryOSV
}

// DetailProps is one component's page: its releases and advisories.
type DetailProps struct {
	Layout    LayoutProps
	Code      string
	Name      string
	Installed string
	Latest    string
	SourceURL string
	// Offline: SourceURL is an offline source ("offline:NAME"), never
	// fetched: its documents are imported.
	Offline  bool
	Releases []ReleaseRow
	// Advisories affecting the installed version, dismissed ones included.
	Advisories []AdvisoryRow
	// Withdrawn advisories whose range holds the installed version: listed
	// apart, they do not count.
	Withdrawn []AdvisoryRow
	// DismissForm refills the dismiss form the server refused.
	DismissForm DismissForm
	// CanManage shows the dismiss and undismiss buttons.
	CanManage     bool
	LastSuccessAt *time.Time
	// LastError is the technical text of the last failure; LastErrorKind (a
	// readmodel.ErrorKind) and LastErrorArg word it.
	LastError                   string
	LastErrorKind, LastErrorArg string
	// EvalFailed: the stored document could not be evaluated for this
	// component (LastError may be its source's, which fails too).
	EvalFailed bool
	// Stale: 48 hours without a successful read of the source since the
	// component was installed or the source last succeeded, or its
	// document has expired (the read model decides, upcheck_stale).
	Stale bool
	// Evaluated: a result from the current installed versions and the
	// stored document exists. Without one, nothing is known: the page says
	// so instead of "no advisory".
	Evaluated bool
	// The headline's facts, meaningful only when Evaluated: the read
	// model's flags,
	UpdateAvailable, Security, Vulnerable, VulnerableNoFix, NeedsNewerCore bool
	// the installable update (""), the newest security release
	// (SecurityInstallable: the installed core runs it) and the newest
	// release the installed core cannot run (nil: none).
	UpdateVersion       string
	SecurityRelease     *ReleaseRow
	SecurityInstallable bool
	BlockedRelease      *ReleaseRow
	// CoreInstalled is the installed core's version ("" when unknown).
	CoreInstalled string
	// SecuritySince is the exposure clock; nil: no open security problem.
	SecuritySince *time.Time
}

// RunRow is one check in the history.
type RunRow struct {
	ID int64
	// Trigger is scheduled, manual or operator.
	Trigger string
	// Actor is who asked: a user's email, or one of readmodel.Actor*.
	Actor string
	// Status is running, completed, completed_with_failures, busy,
	// cooldown, skipped, lease_lost, connection_lost, cancelled, failed or
	// abandoned (an import whose document was refused is
	// completed_with_failures, and reads "Refused").
	Status string
	// Repeats counts the refusals folded into this row (the same status,
	// trigger and actor in a row): 1 for a single run. FirstStartedAt is
	// the first of them; StartedAt the latest.
	Repeats        int
	FirstStartedAt time.Time
	StartedAt      time.Time
	FinishedAt     *time.Time
	DurationMS     int64
	// Source counts of a check that ran. Skipped counts the sources whose
	// outcome was not written because the check stopped first; Unwritten
	// is how many of them had been fetched (the others were not).
	Fetched, NotModified, Failed, Skipped, Unwritten int
	Error                                            string
}

// HistoryProps is the check history, newest first.
type HistoryProps struct {
	Layout LayoutProps
	Runs   []RunRow
}

// SourceRow is one update source's health.
type SourceRow struct {
	URL string
	// Components counts the installed components it serves.
	Components          int
	LastSuccessAt       *time.Time
	LastAttemptAt       *time.Time
	LastError           string
	ConsecutiveFailures int
	// Stale, Expired and Failing are the read model's (source_state).
	Stale, Expired, Failing bool
	// ExpiresAt is the stored document's own expiry, shown as it is; the
	// read model judges it (Expired, Stale, and ExpiresSoon: not expired,
	// and expiring within readmodel.ExpiryWarning, on the database clock).
	ExpiresAt   *time.Time
	ExpiresSoon bool
	// SignatureState is a readmodel.TrustState.
	SignatureState string
	// LastErrorKind (a readmodel.ErrorKind) and LastErrorArg word
	// LastError, the technical text.
	LastErrorKind, LastErrorArg string
	// Trust (source_state, migration 00016): Pinned when the manifest pins
	// keys for the source; TrustedCount keys are trusted now (the pin's,
	// or those a key statement endorsed: KeyVersion, 0 for none);
	// VerifiedBy are the short forms of the keys that verified the stored
	// document, whose sequence is Sequence; Untrusted is the read model's.
	Pinned       bool
	TrustedCount int
	KeyVersion   int64
	Sequence     *int64
	VerifiedBy   []string
	Untrusted    bool
	// Offline: an "offline:NAME" source, never fetched; its documents are
	// imported (source_state.offline).
	Offline bool
}

// SourceHealthProps is the source health page. The template lists failing
// sources first, then stale or expired ones, then those never fetched, then
// healthy ones, keeping the given order within each group.
type SourceHealthProps struct {
	Layout  LayoutProps
	Sources []SourceRow
}

// ErrorProps is an error page (403, 404, 500, 503). It shows no user data,
// so it can be rendered when the session or the database is unavailable.
type ErrorProps struct {
	Status int
	// Title and Message default to plain words for Status when empty.
	Title   string
	Message string
	// Asset as in LayoutProps; nil uses static.Path.
	Asset func(name string) string
}

// ChannelRow is one notification channel.
type ChannelRow struct {
	ID   int64
	Name string
	Kind string // webhook, slack, email
	// Target is the channel's URL or addresses as the reader may see them
	// (notify.ShownTarget): masked, never whole.
	Target string
	// Events is security or all.
	Events         string
	Enabled        bool
	DisabledReason string
	CreatedAt      time.Time
}

// DeliveryRow is one queued event and how its delivery stands.
type DeliveryRow struct {
	ID          string
	ChannelName string
	Type        string
	Subject     string // what the event is about, from its key
	State       string // pending, delivered, failed
	Attempts    int
	LastError   string
	LastAttempt *time.Time
	// NextAttempt is when a pending delivery is tried again (nil: at once,
	// or not at all).
	NextAttempt *time.Time
	CreatedAt   time.Time
	// Held: pending, held while its channel is disabled; enabling the
	// channel sends it.
	Held bool
}

// ChannelForm is the add-a-channel form's fields.
type ChannelForm struct {
	Kind, URL, To, Events, Name string
}

// NotificationsProps is the Notifications page.
type NotificationsProps struct {
	Layout     LayoutProps
	CanManage  bool
	Channels   []ChannelRow
	Deliveries []DeliveryRow
	// NewSecret is the signing secret of the webhook channel just added,
	// shown this once.
	NewSecret string
	// NewTarget is the full URL (or the addresses) of the channel just
	// added, shown this once; the table shows targets masked.
	NewTarget string
	// FormError says why a channel could not be added, in plain words.
	FormError string
	// Form is what the refused form said, to fill it in again.
	Form ChannelForm
	// Notice confirms an action ("Test event queued").
	Notice string
}
