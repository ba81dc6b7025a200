package readmodel

// The catalog's ranks, what needs action first: the SQL function
// upcheck_catalog_rank gives them, the catalog orders by them (then by
// lower-cased name, then code) and the API's keyset cursor carries them.
// TestCatalogRanksMatchSQL holds the range to the function for every
// combination of its flags: a rank added on one side only fails there.
const (
	// RankMalicious: an open advisory says the package is malicious.
	RankMalicious = 0
	// RankKnownExploited: an open advisory is exploited in the wild.
	RankKnownExploited = 1
	// RankSecurity: a security update or a vulnerable version.
	RankSecurity = 2
	// RankUpdate: an installable update.
	RankUpdate = 3
	// RankUnknown: the check fails, is stale or has not evaluated the
	// component yet.
	RankUnknown = 4
	// RankUpToDate: evaluated, nothing to do.
	RankUpToDate = 5
	// RankNoSource: nobody publishes updates for the component.
	RankNoSource = 6

	// CatalogRankMin and CatalogRankMax bound every rank
	// upcheck_catalog_rank gives: the cursor accepts exactly these.
	CatalogRankMin = RankMalicious
	CatalogRankMax = RankNoSource
)

// IsCatalogRank reports whether r is a rank upcheck_catalog_rank gives.
func IsCatalogRank(r int) bool { return r >= CatalogRankMin && r <= CatalogRankMax }
