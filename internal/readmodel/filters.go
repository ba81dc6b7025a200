package readmodel

import "slices"

// The catalog's filters, as the page's and the API's status parameter
// names them: each defined once, over the read model's flags
// (store.CatalogEntry), and read by the store, the pages and the API.
const (
	// FilterAll shows every installed component.
	FilterAll = ""
	// FilterAttention: what needs attention, as the summary counts it
	// (Summary.AttentionTotal; upcheck_needs_attention, the one
	// definition): a security problem, a trust downgrade or a deprecated
	// installed version.
	FilterAttention = "attention"
	// FilterUpdates: an installable update.
	FilterUpdates = "updates"
	// FilterSecurity: a security update.
	FilterSecurity = "security"
	// FilterVulnerable: affected by an advisory nobody dismissed.
	FilterVulnerable = "vulnerable"
	// FilterFailing: the last check of the component failed.
	FilterFailing = "failing"
	// FilterStale: the source has gone StaleAge without a successful read
	// (Summary.Stale), or its document expired.
	FilterStale = "stale"
	// FilterDismissed: an advisory of the current result is dismissed.
	FilterDismissed = "dismissed"
	// FilterKnownExploited: an open advisory is known exploited (KEV).
	FilterKnownExploited = "exploited"
	// FilterMalicious: an open advisory says the package is malicious.
	FilterMalicious = "malicious"
	// FilterWaiting: the offered update is held back by a soak: a release
	// newer than it waits for its soak (docs/policy.md), as the summary's
	// waiting counts.
	FilterWaiting = "waiting"
	// FilterSkipped: a skip hides a release newer than the installed
	// version (the catalog row's skipped).
	FilterSkipped = "skipped"
)

// CatalogFilters are the catalog's filters in the order the page offers
// them; FilterAll first.
var CatalogFilters = []string{FilterAll, FilterAttention, FilterMalicious, FilterKnownExploited, FilterUpdates,
	FilterSecurity, FilterVulnerable, FilterWaiting, FilterSkipped, FilterFailing, FilterStale, FilterDismissed}

// IsCatalogFilter reports whether status names a catalog filter.
func IsCatalogFilter(status string) bool {
	return slices.Contains(CatalogFilters, status)
}
