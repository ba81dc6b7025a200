package views

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/static"
)

// CheckOutcome is how a "Check for updates" request ended, as the JSON API
// reports it (updatecheck.Result).
type CheckOutcome struct {
	// Status is completed, busy, cooldown, lease_lost (or "interrupted"),
	// skipped, cancelled or failed.
	Status                       string
	Fetched, NotModified, Failed int
	// RetryAfter is the cooldown left, in seconds.
	RetryAfter int
}

// CheckOutcomeMessage words a check outcome the way app.js does, so the
// no-JavaScript form post can show the same sentence as DashboardProps.Flash.
func CheckOutcomeMessage(o CheckOutcome) string {
	switch o.Status {
	case "completed":
		return fmt.Sprintf("Check completed: %s fetched, %d unchanged, %d failed.",
			countNoun(o.Fetched, "source", "sources"), o.NotModified, o.Failed)
	case "busy":
		return "A check is already running. Try again in a few minutes."
	case "lease_lost", "interrupted":
		return "The check was interrupted (it lost its lock) and will be retried."
	case "cooldown":
		return fmt.Sprintf("Checks are limited to one every 2 minutes. You can check again in %d s.", max(o.RetryAfter, 0))
	case "skipped":
		return "A check has already completed in this period, so nothing was fetched."
	case "cancelled":
		return "The check was cancelled because the server is shutting down. Try again in a moment."
	default:
		return "The check could not run. Try again later."
	}
}

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

func (l LayoutProps) now() time.Time {
	if l.Now.IsZero() {
		return time.Now()
	}
	return l.Now
}

// countNoun is "1 source" or "3 sources".
func countNoun(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// pick is one or many by n.
func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// updatesAvailableText is the navigation badge's words for screen readers.
func updatesAvailableText(n int) string {
	return countNoun(n, "update available", "updates available")
}

// needsAttention is whether the security alert shows.
func needsAttention(s readmodel.Summary) bool {
	return s.SecurityUpdates+s.Vulnerable > 0
}

// securityAlertText is the security alert's sentence, e.g. "2 security
// updates and 1 vulnerable component need attention."
func securityAlertText(security, vulnerable int) string {
	var parts []string
	if security > 0 {
		parts = append(parts, countNoun(security, "security update", "security updates"))
	}
	if vulnerable > 0 {
		parts = append(parts, countNoun(vulnerable, "vulnerable component", "vulnerable components"))
	}
	verb := "need"
	if len(parts) == 1 && (security == 1 || vulnerable == 1) {
		verb = "needs"
	}
	return strings.Join(parts, " and ") + " " + verb + " attention."
}

// staleText is the widget's stale warning.
func staleText(n int) string {
	return fmt.Sprintf("%s not been checked successfully for over 48 hours.",
		countNoun(n, "component has", "components have"))
}

// isoTime is the datetime attribute of a <time> element.
func isoTime(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}

// absTime is a time for a tooltip or a table, always in UTC.
func absTime(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// relTime is t relative to now: "just now", "5 minutes ago", "in 3 days";
// beyond 30 days the date itself.
func relTime(now, t time.Time) string {
	d := now.Sub(t)
	future := d < 0
	if future {
		d = -d
	}
	var s string
	switch {
	case d < time.Minute:
		if future {
			return "in under a minute"
		}
		return "just now"
	case d < time.Hour:
		s = countNoun(int(d/time.Minute), "minute", "minutes")
	case d < 24*time.Hour:
		s = countNoun(int(d/time.Hour), "hour", "hours")
	case d < 30*24*time.Hour:
		s = countNoun(int(d/(24*time.Hour)), "day", "days")
	default:
		return t.UTC().Format("2 Jan 2006")
	}
	if future {
		return "in " + s
	}
	return s + " ago"
}

// durationText is a run's duration: "850 ms", "4.2 s", "2 min 5 s".
func durationText(ms int64) string {
	switch {
	case ms < 1000:
		return strconv.FormatInt(ms, 10) + " ms"
	case ms < 60_000:
		return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + " s"
	default:
		s := ms / 1000
		return fmt.Sprintf("%d min %d s", s/60, s%60)
	}
}

// tone is a badge's colour; the badge's words always say the same thing.
type tone string

const (
	toneOK      tone = "ok"
	toneInfo    tone = "info"
	toneWarn    tone = "warn"
	toneDanger  tone = "danger"
	toneNeutral tone = "neutral"
)

// badge is a short status in words.
type badge struct {
	Text string
	Tone tone
}

// runStatus words a check's status: a label and a short reason.
func runStatus(status string) (label, reason string, t tone) {
	switch status {
	case "completed":
		return "Completed", "", toneOK
	case "running":
		return "Running", "in progress now", toneInfo
	case "busy":
		return "Busy", "another check was running", toneNeutral
	case "cooldown":
		return "Cooldown", "too soon after the last manual check", toneNeutral
	case "skipped":
		return "Skipped", "this period’s check had already completed", toneNeutral
	case "lease_lost", "interrupted":
		return "Interrupted", "it lost its lock before finishing", toneWarn
	case "cancelled":
		return "Cancelled", "the server was shutting down", toneWarn
	case "failed":
		return "Failed", "", toneDanger
	case "abandoned":
		return "Abandoned", "the server stopped before it finished", toneWarn
	case "":
		return "Unknown", "", toneNeutral
	default:
		return status, "", toneNeutral
	}
}

// ranChecks is whether a run ended after fetching, so its counts and
// duration mean something: not for refused runs (busy, cooldown, skipped),
// nor for one still running or abandoned before it could record them.
func ranChecks(status string) bool {
	switch status {
	case "busy", "cooldown", "skipped", "running", "abandoned":
		return false
	}
	return true
}

// triggerLabel words what started a check.
func triggerLabel(trigger string) string {
	switch trigger {
	case "scheduled":
		return "Scheduled"
	case "manual":
		return "Manual"
	case "operator":
		return "Command line"
	default:
		return trigger
	}
}

// lastCheckFinished is when the last check that ran ended; nil: none has.
func lastCheckFinished(lc *readmodel.LastCheck) *time.Time {
	if lc == nil {
		return nil
	}
	return lc.FinishedAt
}

// lastCheckNote is the widget's note on the last check, "completed, manual
// check"; "" when there is nothing to say.
func lastCheckNote(lc *readmodel.LastCheck) string {
	if lc == nil || lc.FinishedAt == nil || lc.Status == "" {
		return ""
	}
	return lastCheckText(lc.Status, lc.Trigger)
}

// lastCheckText words a check's status and trigger: "completed, manual
// check".
func lastCheckText(status, trigger string) string {
	label, _, _ := runStatus(status)
	s := strings.ToLower(label)
	if trigger != "" {
		s += ", " + strings.ToLower(triggerLabel(trigger)) + " check"
	}
	return s
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

// severityBadge words a severity; an unknown or empty one stays visible.
func severityBadge(sev string) badge {
	switch strings.ToLower(sev) {
	case "critical":
		return badge{"Critical", toneDanger}
	case "high":
		return badge{"High", toneDanger}
	case "medium", "moderate":
		return badge{"Medium", toneWarn}
	case "low":
		return badge{"Low", toneNeutral}
	case "":
		return badge{"Severity not given", toneNeutral}
	default:
		return badge{sev, toneNeutral}
	}
}

// rowBadges are a catalog row's statuses in words, the most urgent first.
func rowBadges(r CatalogRow) []badge {
	var bs []badge
	if r.Security {
		bs = append(bs, badge{"Security update", toneDanger})
	}
	if r.Vulnerable {
		if r.VulnerableNoFix {
			bs = append(bs, badge{"Vulnerable, no fix yet", toneDanger})
		} else {
			bs = append(bs, badge{"Vulnerable", toneDanger})
		}
	}
	if r.UpdateAvailable {
		text := "Update available"
		if r.UpdateVersion != "" {
			text = "Update to " + r.UpdateVersion
		}
		bs = append(bs, badge{text, toneInfo})
	}
	if r.NeedsNewerCore {
		text := "Needs a newer core"
		if r.RequiredCore != "" {
			text = "Needs core " + r.RequiredCore
		}
		bs = append(bs, badge{text, toneWarn})
	}
	switch {
	case r.SourceURL == "":
		bs = append(bs, badge{"No update source", toneNeutral})
	case r.LastError != "":
		bs = append(bs, badge{"Check failing", toneWarn})
	}
	if r.Stale {
		bs = append(bs, badge{"Stale", toneWarn})
	}
	if r.SourceURL != "" && r.LastSuccessAt == nil && r.LastError == "" {
		bs = append(bs, badge{"Not checked yet", toneNeutral})
	}
	if len(bs) == 0 {
		bs = append(bs, badge{"Up to date", toneOK})
	}
	return bs
}

// rowState is a catalog row's most urgent state, for data-state.
func rowState(r CatalogRow) string {
	switch {
	case r.Security || r.Vulnerable:
		return "security"
	case r.UpdateAvailable:
		return "update"
	case r.LastError != "" || r.Stale:
		return "problem"
	case r.SourceURL == "":
		return "untracked"
	case !r.Evaluated:
		return "unchecked"
	default:
		return "current"
	}
}

// sourceRank orders sources: failing, then stale or expired, then never
// fetched, then healthy.
func sourceRank(s SourceRow, now time.Time) int {
	switch {
	case s.Failing:
		return 0
	case s.LastSuccessAt == nil:
		return 2
	case s.Stale:
		return 1
	default:
		return 3
	}
}

// sortedSources is the sources in display order; the props stay untouched.
func sortedSources(src []SourceRow, now time.Time) []SourceRow {
	out := slices.Clone(src)
	slices.SortStableFunc(out, func(a, b SourceRow) int {
		return cmp.Compare(sourceRank(a, now), sourceRank(b, now))
	})
	return out
}

// sourceBadges are a source's states in words.
func sourceBadges(s SourceRow, now time.Time) []badge {
	var bs []badge
	if s.Failing {
		text := "Failing"
		if s.ConsecutiveFailures > 0 {
			text += ", " + countNoun(s.ConsecutiveFailures, "time", "times") + " in a row"
		}
		bs = append(bs, badge{text, toneDanger})
	}
	switch {
	case s.LastSuccessAt == nil && s.Failing:
		bs = append(bs, badge{"Never fetched successfully", toneWarn})
	case s.Expired:
		bs = append(bs, badge{"Document expired", toneWarn})
	case s.Stale && s.LastSuccessAt != nil:
		bs = append(bs, badge{"Stale", toneWarn})
	}
	if len(bs) == 0 {
		if s.LastSuccessAt == nil {
			return []badge{{"Not fetched yet", toneNeutral}}
		}
		return []badge{{"Healthy", toneOK}}
	}
	return bs
}

// failingCount counts failing sources for the page's summary line.
func failingCount(src []SourceRow) int {
	n := 0
	for _, s := range src {
		if s.LastError != "" || s.ConsecutiveFailures > 0 {
			n++
		}
	}
	return n
}

// signatureBadge words a source's signature state.
func signatureBadge(state string) badge {
	switch state {
	case "verified":
		return badge{"Verified", toneOK}
	case "unsigned", "":
		return badge{"Unsigned", toneNeutral}
	default:
		return badge{state, toneNeutral}
	}
}

// pager is the catalog's pagination, computed from its props.
type pager struct {
	Page, Pages    int
	From, To       int
	Total          int
	Filter, Query  string
	Links          []pageLink
	HasPrev, HasNx bool
}

// pageLink is one page number, or a gap ("…") between numbers.
type pageLink struct {
	Number int
	Gap    bool
}

func newPager(p CatalogProps) pager {
	size := p.PageSize
	if size <= 0 {
		size = DefaultPageSize
	}
	total := max(p.Total, 0)
	pages := max((total+size-1)/size, 1)
	page := min(max(p.Page, 1), pages)
	pg := pager{Page: page, Pages: pages, Total: total, Filter: p.Filter, Query: p.Query}
	if total > 0 {
		pg.From = (page-1)*size + 1
		pg.To = min(page*size, total)
	}
	pg.HasPrev, pg.HasNx = page > 1, page < pages
	// The first, the last, and two either side of the current page.
	last := 0
	for n := 1; n <= pages; n++ {
		if n != 1 && n != pages && (n < page-2 || n > page+2) {
			continue
		}
		if last != 0 && n > last+1 {
			pg.Links = append(pg.Links, pageLink{Gap: true})
		}
		pg.Links = append(pg.Links, pageLink{Number: n})
		last = n
	}
	return pg
}

func (pg pager) url(page int) string {
	return CatalogPath(pg.Filter, pg.Query, page)
}

// showingText is "Showing 1–50 of 3,000".
func (pg pager) showingText() string {
	if pg.Total == 0 {
		return "Showing 0 of 0"
	}
	return "Showing " + thousands(pg.From) + "–" + thousands(pg.To) + " of " + thousands(pg.Total)
}

// thousands groups the digits of a count: 3000 is "3,000".
func thousands(n int) string {
	s := strconv.Itoa(max(n, 0))
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// filterOption is one catalog filter link.
type filterOption struct {
	Value, Label string
}

var filterOptions = []filterOption{
	{FilterAll, "All"},
	{FilterUpdates, "Updates"},
	{FilterSecurity, "Security"},
	{FilterVulnerable, "Vulnerable"},
	{FilterFailing, "Failing checks"},
}

// filterNoun is what the current filter shows, for the count line.
func filterNoun(f string, n int) string {
	switch f {
	case FilterUpdates:
		return pick(n, "component", "components") + " with an update"
	case FilterSecurity:
		return pick(n, "component", "components") + " with a security update"
	case FilterVulnerable:
		return pick(n, "vulnerable component", "vulnerable components")
	case FilterFailing:
		return pick(n, "component whose", "components whose") + " check is failing"
	default:
		return pick(n, "component", "components")
	}
}

// countText is the catalog's count line: "Showing 1–50 of 3,000
// components with an update matching “blog”".
func countText(pg pager) string {
	s := "No " + filterNoun(pg.Filter, 0)
	switch {
	case pg.Total == 0:
	case pg.From == pg.To:
		s = "Showing " + thousands(pg.From) + " of " + thousands(pg.Total) + " " + filterNoun(pg.Filter, pg.Total)
	default:
		s = pg.showingText() + " " + filterNoun(pg.Filter, pg.Total)
	}
	if pg.Query != "" {
		s += " matching “" + pg.Query + "”"
	}
	return s
}

// runCountsText is what a check did with the sources.
func runCountsText(r RunRow) string {
	s := fmt.Sprintf("%d fetched, %d unchanged, %d failed", r.Fetched, r.NotModified, r.Failed)
	if r.Skipped > 0 {
		s += fmt.Sprintf(", %d not started", r.Skipped)
	}
	return s
}

// errorText is an error page's default title and message.
func errorText(status int) (title, message string) {
	switch status {
	case 400:
		return "Bad request", "The request could not be understood. Go back and try again."
	case 401:
		return "Please log in", "Your session has ended. Log in again to continue."
	case 403:
		return "Access denied", "Your account is not allowed to do this. Ask an administrator if you need access."
	case 404:
		return "Page not found", "There is nothing at this address. It may have been removed, or the link may be wrong."
	case 503:
		return "Temporarily unavailable", "upcheck cannot answer right now, usually because its database cannot be reached. Try again in a minute."
	default:
		return "Something went wrong", "The server could not complete the request. Try again in a minute; if it keeps happening, the server log says why."
	}
}

// nameOr is a component's display name, its code when it has none.
func nameOr(name, code string) string {
	if name != "" {
		return name
	}
	return code
}

// catalogEmptyText explains an empty catalog page in words that fit what
// was asked for.
func catalogEmptyText(p CatalogProps) string {
	switch {
	case p.Query != "":
		return "No components match “" + p.Query + "”."
	case p.Total > 0:
		// Past the last page, e.g. an old link after components were removed.
		return "This page is empty; the list is shorter than that now."
	}
	switch p.Filter {
	case FilterUpdates:
		return "No component has an update available."
	case FilterSecurity:
		return "No component has a security update."
	case FilterVulnerable:
		return "No installed version is affected by a known advisory."
	case FilterFailing:
		return "No component’s check is failing."
	default:
		return "No components are installed yet. List them in the manifest and run “upcheck components sync”."
	}
}

// sourcesTotalText is "5 sources".
func sourcesTotalText(n int) string {
	return countNoun(n, "source", "sources")
}

// sourceState is a source's rank as a word, for data-state.
func sourceState(s SourceRow, now time.Time) string {
	return [...]string{"failing", "stale", "unfetched", "healthy"}[sourceRank(s, now)]
}

// notEvaluatedText says why nothing is known about a component that has no
// current evaluation.
func notEvaluatedText(p DetailProps) string {
	switch {
	case p.LastSuccessAt == nil && p.LastError != "":
		return "Unknown: the update source has never been read successfully, so nothing is known about releases or advisories for this version."
	case p.LastSuccessAt == nil:
		return "Unknown: the update source has not been read yet. The next check will fetch it."
	default:
		return "Unknown: the installed version (or the core's) changed, or the pinned key did, since the source was last read; the next check evaluates it."
	}
}
