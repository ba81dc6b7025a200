package views

import (
	"fmt"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// CatalogProps is the plugin catalog, one page of it.
type CatalogProps struct {
	Layout LayoutProps
	// Site is the registered site whose catalog it is; "" for the local
	// site's (the content does not read Layout).
	Site string
	// Rows is the current page, in display order.
	Rows []readmodel.CatalogRow
	// Filter is one of readmodel.CatalogFilters (readmodel.FilterAll for all).
	Filter readmodel.Filter
	// Query is the search text (parameter "q"), matched by the handler.
	Query string
	// Page is 1-based; PageSize defaults to DefaultPageSize; Total counts
	// the components matching Filter and Query on all pages.
	Page, PageSize, Total int
	// Counts is how many components each filter shows with Query, by
	// filter value ("" for all); nil shows the filters without counts.
	Counts map[readmodel.Filter]int
	// MalwareRead: a feed that names malicious packages was read
	// (Summary.Malicious is not nil); ExploitedRead: the KEV catalogue was
	// (Summary.KnownExploited is not nil). Until then the empty malicious
	// and exploited pages say the feed was not read, not that none is.
	// The content does not read Layout: the handler sets these from it.
	MalwareRead, ExploitedRead bool
}

// A catalog row's states, as data-state names them.
const (
	rowSecurity  = "security"  // a security update, or a vulnerable version
	rowUpdate    = "update"    // an update
	rowProblem   = "problem"   // the source fails or is stale, a deprecated version, a trust downgrade
	rowUntracked = "untracked" // no update source
	rowUnchecked = "unchecked" // no current evaluation yet
	rowCurrent   = "current"   // up to date
)

// rowState is a catalog row's most urgent state, for data-state.
func rowState(r readmodel.CatalogRow) string {
	switch {
	case r.Security || r.Vulnerable:
		return rowSecurity
	case r.UpdateAvailable:
		return rowUpdate
	case rowErrorText(r) != "" || r.Stale || r.Deprecated != "" || r.ProvenanceLost != "" || r.NewPublisher != nil || r.PinDowngrade != nil:
		return rowProblem
	case r.SourceURL == "":
		return rowUntracked
	case !r.Evaluated:
		return rowUnchecked
	default:
		return rowCurrent
	}
}

// rowErrorText is the failure the catalog shows for a component and
// rowErrorKind its kind, as readmodel.ShownFailure says for every page.
func rowErrorText(r readmodel.CatalogRow) string {
	text, _ := readmodel.ShownFailure(r.LastError, r.LastErrorKind, r.EvalError)
	return text
}

func rowErrorKind(r readmodel.CatalogRow) string {
	_, kind := readmodel.ShownFailure(r.LastError, r.LastErrorKind, r.EvalError)
	return string(kind)
}

// rowBadges are a catalog row's statuses in words, the most urgent first.
// A row whose only news is a dismissed advisory is not a plain "Up to
// date": it says what was dismissed and until when, from now; what the
// policy held back follows the update or "Up to date" (withPolicyNotes).
func rowBadges(r readmodel.CatalogRow, now time.Time) []badge {
	var bs []badge
	if r.Malicious {
		bs = append(bs, badge{MaliciousTitle, toneDanger})
	}
	if r.KnownExploited {
		bs = append(bs, badge{"Exploited in the wild", toneDanger})
	}
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
	if r.ProvenanceLost != "" {
		bs = append(bs, badge{"Trust downgrade: " + r.ProvenanceLost + " lost provenance", toneWarn})
	}
	bs = append(bs, trustBadges(r)...)
	if len(r.Brings) > 0 {
		bs = append(bs, badge{bringsBadgeText(r.Brings), toneWarn})
	}
	if r.Deprecated != "" {
		bs = append(bs, badge{"Deprecated", toneWarn})
	}
	if r.UpdateAvailable {
		text := "Update available"
		if s := readmodel.FixText(r.Installed, r.FixVersion, r.UpdateVersion, nil); s != "" && (r.Security || r.Vulnerable) {
			// The smallest way out first, the newest beside it.
			text = upperFirst(s)
		} else if r.UpdateVersion != "" {
			text = "Update to " + readmodel.VersionText(r.Installed, r.UpdateVersion)
		}
		bs = append(bs, badge{text, toneInfo})
	}
	if r.NeedsNewerCore {
		text := "Needs a newer core"
		if r.RequiredCore != "" {
			text = upperFirst(RequiresCoreText(r.RequiredCore))
		}
		bs = append(bs, badge{text, toneWarn})
	}
	switch {
	case r.SourceURL == "":
		bs = append(bs, badge{"No update source", toneNeutral})
	case rowErrorText(r) != "":
		bs = append(bs, badge{"Check failing", toneWarn})
	}
	if r.Stale {
		bs = append(bs, badge{"Stale", toneWarn})
	}
	switch {
	case r.SourceURL != "" && r.LastSuccessAt == nil && rowErrorText(r) == "":
		bs = append(bs, badge{"Not checked yet", toneNeutral})
	case r.SourceURL != "" && r.LastSuccessAt == nil:
		bs = append(bs, badge{"Never read successfully", toneWarn})
	}
	return withPolicyNotes(withQuietBadges(bs, r, now), r)
}

// withQuietBadges ends a row's badges with what is said beside them or
// alone: what its dependencies need, and the advisories dismissed. A row
// with nothing else is "Up to date", never plain over a vulnerable or
// malicious package it brings in.
func withQuietBadges(bs []badge, r readmodel.CatalogRow, now time.Time) []badge {
	dismissed := dismissedText(r.Dismissed, r.DismissedUntil, now)
	tree, treeTone := readmodel.ComponentTreeText(r.TreeCounted, r.TreeMalicious), toneWarn
	if r.TreeMalicious > 0 {
		treeTone = toneDanger
	}
	switch {
	case len(bs) == 0 && tree != "":
		text := "Up to date · " + tree
		if dismissed != "" {
			text += " · " + dismissed
		}
		bs = append(bs, badge{text, treeTone})
	case len(bs) == 0 && dismissed != "":
		bs = append(bs, badge{"Up to date · " + dismissed, toneInfo})
	case len(bs) == 0:
		bs = append(bs, badge{"Up to date", toneOK})
	default:
		if tree != "" {
			bs = append(bs, badge{upperFirst(tree), treeTone})
		}
		if dismissed != "" {
			bs = append(bs, badge{upperFirst(dismissed), toneNeutral})
		}
	}
	return bs
}

// rowDeprecatedText is the catalog's line under a deprecated version's
// badges: the publisher's message, cut to 200 characters (the detail page
// has it whole; templ escapes it).
func rowDeprecatedText(r readmodel.CatalogRow) string {
	return "Deprecated by its publisher: " + cutText(r.Deprecated, 200)
}

// bringsBadgeText is the catalog's badge of what the offered update
// brings: its most pressing signal, and how many more.
func bringsBadgeText(s []readmodel.Signal) string {
	t := "Update brings: " + readmodel.SignalText(s[0])
	if len(s) > 1 {
		t += fmt.Sprintf(" (and %d more)", len(s)-1)
	}
	return t
}
