package readmodel

import "slices"

// Filter is one of the catalog's filters, as the page's and the API's
// status parameter names it ("" for all): each defined once, with its
// predicate (Shows) over the read model's flags, and read by the catalog,
// the store, the pages and the API.
type Filter string

// The catalog's filters.
const (
	// FilterAll shows every installed component.
	FilterAll Filter = ""
	// FilterAttention: what needs attention, as the summary counts it
	// (Summary.AttentionTotal; upcheck_needs_attention, the one
	// definition): a security problem, a trust downgrade or a deprecated
	// installed version.
	FilterAttention Filter = "attention"
	// FilterUpdates: an installable update.
	FilterUpdates Filter = "updates"
	// FilterSecurity: a security update.
	FilterSecurity Filter = "security"
	// FilterVulnerable: affected by an advisory nobody dismissed.
	FilterVulnerable Filter = "vulnerable"
	// FilterFailing: the last check of the component failed.
	FilterFailing Filter = "failing"
	// FilterStale: the source has gone StaleAge without a successful read
	// (Summary.Stale), or its document expired.
	FilterStale Filter = "stale"
	// FilterDismissed: an advisory of the current result is dismissed.
	FilterDismissed Filter = "dismissed"
	// FilterKnownExploited: an open advisory is known exploited (KEV).
	FilterKnownExploited Filter = "exploited"
	// FilterMalicious: an open advisory says the package is malicious.
	FilterMalicious Filter = "malicious"
	// FilterWaiting: the offered update is held back by a soak: a release
	// newer than it waits for its soak (docs/policy.md), as the summary's
	// waiting counts.
	FilterWaiting Filter = "waiting"
	// FilterSkipped: a skip hides a release newer than the installed
	// version (the catalog row's skipped).
	FilterSkipped Filter = "skipped"
)

// CatalogFilters are the catalog's filters in the order the page offers
// them; FilterAll first.
var CatalogFilters = []Filter{FilterAll, FilterAttention, FilterMalicious, FilterKnownExploited, FilterUpdates,
	FilterSecurity, FilterVulnerable, FilterWaiting, FilterSkipped, FilterFailing, FilterStale, FilterDismissed}

// Valid reports whether f is one of CatalogFilters.
func (f Filter) Valid() bool {
	return slices.Contains(CatalogFilters, f)
}

// Shows reports whether the filter shows r: the one definition of each
// filter, over the read model's flags (component_state, read by
// CatalogRead; TestFiltersMatchSQL holds each to the summary's count
// where the summary counts it). An unknown filter shows nothing.
func (f Filter) Shows(r *CatalogRow) bool {
	switch f {
	case FilterAll:
		return true
	case FilterAttention:
		return r.NeedsAttention
	case FilterUpdates:
		return r.UpdateAvailable
	case FilterSecurity:
		return r.Security
	case FilterVulnerable:
		return r.Vulnerable
	case FilterFailing:
		return r.Failing
	case FilterStale:
		return r.Stale
	case FilterDismissed:
		return r.Dismissed > 0
	case FilterKnownExploited:
		return r.KnownExploited
	case FilterMalicious:
		return r.Malicious
	case FilterWaiting:
		return r.Waiting != nil
	case FilterSkipped:
		return r.Skipped != nil
	}
	return false
}

// SummaryCount is the summary's count of what the filter shows (the
// dashboard's figure that links to it), from the summary's own SQL; ok is
// false for a filter the summary does not count.
func (f Filter) SummaryCount(s *Summary) (n int, ok bool) {
	switch f {
	case FilterAll:
		return s.Components, true
	case FilterAttention:
		return s.AttentionTotal, true
	case FilterUpdates:
		return s.UpdatesAvailable, true
	case FilterSecurity:
		return s.SecurityUpdates, true
	case FilterVulnerable:
		return s.Vulnerable, true
	case FilterStale:
		return s.Stale, true
	case FilterWaiting:
		return s.Waiting, true
	case FilterKnownExploited:
		if s.KnownExploited != nil {
			return *s.KnownExploited, true
		}
	case FilterMalicious:
		if s.Malicious != nil {
			return *s.Malicious, true
		}
	}
	return 0, false
}
