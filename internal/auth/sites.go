package auth

import (
	"slices"

	"github.com/upcheck/upcheck/internal/store"
)

// Sites is which sites a principal may see: every site (the zero value),
// or only those listed. A user limited to some sites sees those; an API
// token sees what its owner sees, narrowed to its own list when it has
// one.
type Sites struct {
	limited bool
	ids     []int64 // sorted, no duplicates; never changed after it is made
}

// AllSites is every site: a principal that is not limited.
func AllSites() Sites { return Sites{} }

// OnlySites is the sites ids and no other (none: no site at all).
func OnlySites(ids ...int64) Sites {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	return Sites{limited: true, ids: slices.Compact(ids)}
}

// Has reports whether site id is among them.
func (s Sites) Has(id int64) bool {
	if !s.limited {
		return true
	}
	_, ok := slices.BinarySearch(s.ids, id)
	return ok
}

// Limited reports whether these are only some sites (IDs), not every one.
func (s Sites) Limited() bool { return s.limited }

// IDs are the sites of a limited set, sorted; nil when not limited. The
// slice is the caller's to keep.
func (s Sites) IDs() []int64 {
	if !s.limited {
		return nil
	}
	return slices.Clone(s.ids)
}

// sitesOf is what a principal sees from its user's limit and its token's
// (the zero SiteLimit for a session): where both allow.
func sitesOf(user, token store.SiteLimit) Sites {
	switch {
	case user.Limited && token.Limited:
		var both []int64
		for _, id := range token.IDs {
			if slices.Contains(user.IDs, id) {
				both = append(both, id)
			}
		}
		return OnlySites(both...)
	case user.Limited:
		return OnlySites(user.IDs...)
	case token.Limited:
		return OnlySites(token.IDs...)
	}
	return AllSites()
}
