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

// CatalogProps is the plugin catalog, one page of it.
type CatalogProps struct {
	Layout LayoutProps
	// Rows is the current page, in display order.
	Rows []readmodel.CatalogRow
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

// HistoryProps is the check history, newest first.
type HistoryProps struct {
	Layout LayoutProps
	Runs   []readmodel.RunRow
}

// SourceHealthProps is the source health page. The template lists failing
// sources first, then stale or expired ones, then those never fetched, then
// healthy ones, keeping the given order within each group.
type SourceHealthProps struct {
	Layout  LayoutProps
	Sources []readmodel.SourceRow
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

// ChannelForm is the add-a-channel form's fields.
type ChannelForm struct {
	Kind, URL, To, Events, Name string
}

// NotificationsProps is the Notifications page.
type NotificationsProps struct {
	Layout     LayoutProps
	CanManage  bool
	Channels   []readmodel.ChannelRow
	Deliveries []readmodel.DeliveryRow
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
