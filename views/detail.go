package views

import (
	"strconv"

	"github.com/upcheck/upcheck/internal/readmodel"
)

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
	// Offer is what the policy makes of a release newer than the installed
	// version (release.ReleaseOffer: offered, superseded, waiting, held,
	// not_offered, skipped, needs_newer_core), OfferReason why one is not
	// offered, in words; "" for the others.
	Offer, OfferReason string
	// SoakSkipped says why a security fix is offered before the policy's
	// soak (readmodel.SoakSkippedText: the advisories it fixes); "" when
	// it skipped none.
	SoakSkipped string
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
	// ClearedBy is the oldest newer release it does not affect ("" none):
	// with no FixedIn, the page says that release is not affected.
	ClearedBy string
	// Dismissed: a dismissal is in force; the advisory does not count.
	Dismissed bool
	// Dismissal is the standing dismissal, in force or not (then the page
	// says why the advisory counts again); nil: none.
	Dismissal *AdvisoryDismissal
	// OSV is what the advisory says in OSV's terms (aliases, CVSS, dates,
	// references).
	OSV AdvisoryOSV
	// Intel is what the advisory feeds say of it.
	AdvisoryIntel
}

// DetailProps is one component's page: the read model's row of it
// (readmodel.DetailRow, rendered as it is) and its releases and
// advisories in the page's terms.
type DetailProps struct {
	Layout LayoutProps
	readmodel.DetailRow
	Releases []ReleaseRow
	// Advisories affecting the installed version, dismissed ones included.
	Advisories []AdvisoryRow
	// Withdrawn advisories whose range holds the installed version: listed
	// apart, they do not count.
	Withdrawn []AdvisoryRow
	// DismissForm refills the dismiss form the server refused.
	DismissForm DismissForm
	// CanManage shows the dismiss and undismiss buttons.
	CanManage bool
	// The newest security release (installable unless
	// SecurityNeedsNewerCore) and the newest release the installed core
	// cannot run (nil: none), as the headline names them.
	SecurityRelease *ReleaseRow
	BlockedRelease  *ReleaseRow
	// Policy is the component's policy; Waiting the newest release newer
	// than the update that has not soaked, Held the newest one the policy
	// does not offer (nil: none); Skip the component's skip (nil: none).
	Policy        DetailPolicy
	Waiting, Held *readmodel.HeldRelease
	Skip          *DetailSkip
	// Between is every release between the installed version and the
	// offered update (the newest release when none is offered), newest
	// first, with what the policy makes of each.
	Between []ReleaseRow
	// SkipForm is the skip section: the standing skip and the button that
	// ends it, and the form that skips the offered plain update
	// (detail_skip.go).
	SkipForm SkipProps
	// Approval is the approval section: what awaits an admin's approval
	// and the approvals standing.
	Approval ApprovalProps
}

// UnknownComponentText is the 404 of a component page whose code names no
// installed component: “nope” is what was asked for (templ escapes it).
func UnknownComponentText(code string) string {
	if r := []rune(code); len(r) > 80 {
		code = string(r[:79]) + "…"
	}
	return "No installed component has the code “" + code + "”."
}

// factsKnown is whether the detail page may list a component's releases
// and advisories, and say "none" when there are none: only from a current
// evaluation that worked. Otherwise nothing is known (notEvaluatedText
// says why), and the page must never read as "no known advisory".
func factsKnown(p DetailProps) bool {
	return p.Evaluated && !evalFailed(p)
}

// evalFailed: the component's document was read but could not be
// evaluated for it.
func evalFailed(p DetailProps) bool {
	return p.EvalError != ""
}

// notEvaluatedText says why nothing is known about a component that has no
// current evaluation, or one that could not be made: the detail page's
// headline says it, once (unknownFactsText points back to it).
func notEvaluatedText(p DetailProps) string {
	switch {
	case p.Evaluated && evalFailed(p):
		return "Unknown: the publisher’s document was read, but this component could not be evaluated from it (see the problem below), so nothing is known about its releases or advisories."
	case p.LastSuccessAt == nil && p.Offline():
		return "Unknown: the offline update source is waiting for its first import, so nothing is known about releases or advisories for this version. An admin imports its document from Source health."
	case p.LastSuccessAt == nil && failureText(p) != "":
		return "Unknown: the update source has never been read successfully, so nothing is known about releases or advisories for this version."
	case p.LastSuccessAt == nil:
		return "Unknown: the update source has not been read yet. The next check will fetch it."
	default:
		return "Unknown: the installed version (or the core's) changed, or the pinned key did, since the source was last read; the next check evaluates it."
	}
}

// unknownFactsText stands where the detail page would list a component's
// releases or advisories when none is known: the headline has said why
// (notEvaluatedText), so this says only that none is known.
func unknownFactsText(p DetailProps, what string) string {
	if p.SourceURL == "" {
		return "No " + what + " are known: the component has no update source."
	}
	return "No " + what + " are known, for the reason given at the top of the page."
}

// failureText is the failure the page shows (DetailRow.ShownFailure):
// the source's technical text, else why the document could not be
// evaluated; "" when neither failed.
func failureText(p DetailProps) string {
	text, _ := p.ShownFailure()
	return text
}

// failureKind is the kind of the failure the page shows.
func failureKind(p DetailProps) string {
	_, kind := p.ShownFailure()
	return string(kind)
}

// lastErrorConsequence says what a component's failed check leaves the
// page with: the last good document; "" when nothing is known, which the
// headline already says (notEvaluatedText).
func lastErrorConsequence(p DetailProps) string {
	if !factsKnown(p) {
		return ""
	}
	return "What you see below comes from the last document that was fetched successfully."
}

// staleNoticeText is the detail page's stale warning. For a source never
// read the headline says that nothing is known; this adds for how long.
func staleNoticeText(p DetailProps) string {
	if p.LastSuccessAt == nil {
		return "More than " + staleAgeText + " have passed since this component was installed without a successful read of its update source."
	}
	return "This component has not been checked successfully for over " + staleAgeText + ", so newer releases or advisories may be missing."
}

// severityBadge words a severity by its rank (readmodel.Severity.Rank:
// "moderate" is Medium); an unknown or empty one stays visible.
func severityBadge(sev string) badge {
	switch readmodel.Severity(sev).Rank() {
	case readmodel.SeverityCritical.Rank():
		return badge{"Critical", toneDanger}
	case readmodel.SeverityHigh.Rank():
		return badge{"High", toneDanger}
	case readmodel.SeverityMedium.Rank():
		return badge{"Medium", toneWarn}
	case readmodel.SeverityLow.Rank():
		return badge{"Low", toneNeutral}
	}
	if sev == "" {
		return badge{"Severity not given", toneNeutral}
	}
	return badge{sev, toneNeutral}
}

// openReleases is how many releases the detail page lists unfolded; a
// longer list is folded under its count (releasesSummary), so that a
// package hundreds of releases behind keeps its advisories and its offer
// in sight.
const openReleases = 10

// releasesSummary is the releases list's summary: "All 173 releases".
func releasesSummary(p DetailProps) string {
	if len(p.Releases) == 1 {
		return "1 release"
	}
	return "All " + thousands(len(p.Releases)) + " releases"
}

// maxListed bounds each list of versions on the detail page (every
// release, the releases in between, the refused versions): a package of
// 100,000 versions must not make a page of a hundred megabytes. The newest
// are listed, and notListedText says how many are not.
const maxListed = 200

// listed is the newest maxListed of rows (newest first).
func listed[T any](rows []T) []T {
	return rows[:min(len(rows), maxListed)]
}

// notListedText says how many of n versions the page leaves out ("" when
// none): "The 99,800 older ones are not listed here."
func notListedText(n int) string {
	if n <= maxListed {
		return ""
	}
	return "Only the newest " + strconv.Itoa(maxListed) + " are listed here; the " + thousands(n-maxListed) + " older ones are not."
}
