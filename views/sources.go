package views

import (
	"cmp"
	"slices"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// SourceHealthProps is the source health page. The template lists failing
// sources first, then stale or expired ones, then those never fetched, then
// healthy ones, keeping the given order within each group.
type SourceHealthProps struct {
	Layout  LayoutProps
	Sources []readmodel.SourceRow
	// Feeds are the advisory feeds that have synced at least once.
	Feeds []readmodel.FeedRow
}

// sourcesTotalText is "5 sources".
func sourcesTotalText(n int) string {
	return countNoun(n, "source", "sources")
}

// sourceState is a source's state, most urgent first: the page lists
// sources in this order, and data-state carries its name.
type sourceState int

const (
	sourceFailing   sourceState = iota // the last fetch gave no usable document
	sourceStale                        // stale or expired, not failing
	sourceUnfetched                    // never fetched successfully, not failing
	sourceHealthy
)

// String is the state's name in data-state.
func (s sourceState) String() string {
	return [...]string{"failing", "stale", "unfetched", "healthy"}[s]
}

// sourceStateOf is a source's state. Failing and stale are the read
// model's flags; no time is judged here.
func sourceStateOf(s readmodel.SourceRow) sourceState {
	switch {
	case s.Failing:
		return sourceFailing
	case s.LastSuccessAt == nil:
		return sourceUnfetched
	case s.Stale:
		return sourceStale
	default:
		return sourceHealthy
	}
}

// sortedSources is the sources in display order, by state, keeping the
// given order within one; the props stay untouched.
func sortedSources(src []readmodel.SourceRow) []readmodel.SourceRow {
	out := slices.Clone(src)
	slices.SortStableFunc(out, func(a, b readmodel.SourceRow) int {
		return cmp.Compare(sourceStateOf(a), sourceStateOf(b))
	})
	return out
}

// failingCount counts failing sources for the page's summary line, by the
// read model's flag, as the order and the badges do.
func failingCount(src []readmodel.SourceRow) int {
	n := 0
	for _, s := range src {
		if s.Failing {
			n++
		}
	}
	return n
}

// sourceBadges are a source's states in words.
func sourceBadges(s readmodel.SourceRow) []badge {
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
	case s.Stale:
		// Never read, not failing: waiting (an offline source for its
		// import) for more than the stale age since it was installed.
		bs = append(bs, badge{"Stale: nothing read in the " + staleAgeText + " since it was installed", toneWarn})
	}
	if len(bs) == 0 {
		switch {
		case s.LastSuccessAt == nil && s.Offline:
			return []badge{{"Waiting for its first import", toneNeutral}}
		case s.LastSuccessAt == nil:
			return []badge{{"Not fetched yet", toneNeutral}}
		}
		bs = append(bs, badge{"Healthy", toneOK})
	}
	if s.Offline {
		bs = append(bs, badge{"Offline: imported, never fetched", toneNeutral})
	}
	if s.KeysChangedAt != nil {
		bs = append(bs, badge{"Registry keys changed", toneWarn})
	}
	return bs
}

// signatureBadge words a source's signature state.
func signatureBadge(state string) badge {
	switch readmodel.TrustState(state) {
	case readmodel.TrustVerified:
		return badge{"Verified", toneOK}
	case readmodel.TrustUnsigned, "":
		return badge{"Unsigned", toneNeutral}
	default:
		return badge{state, toneNeutral}
	}
}
