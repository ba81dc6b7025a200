// The catalog's pager, filters and the sentences that count what a page
// shows ("Showing 1–50 of 3,000 components with an update").

package views

import (
	"strconv"
	"strings"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// pager is a list's numbered pagination (the catalog's, the Sites
// section's), computed from its page, page size and total.
type pager struct {
	Page, Pages    int
	From, To       int
	Total          int
	Links          []pageLink
	HasPrev, HasNx bool
	// path is the list's URL at a page; testID names the pagination.
	path   func(page int) string
	testID string
}

// pageLink is one page number, or a gap ("…") between numbers.
type pageLink struct {
	Number int
	Gap    bool
}

// newPager is the catalog's pager.
func newPager(p CatalogProps) pager {
	return pagerOf(p.Page, p.PageSize, p.Total, func(n int) string { return SiteCatalogPath(p.Site, p.Filter, p.Query, n) }, "catalog-pagination")
}

// pagerOf places page among the pages of total rows, size a page
// (DefaultPageSize when not positive): a page number out of range is
// clamped to the first or last page. path is the list's URL at a page;
// testID the pagination's data-testid.
func pagerOf(page, size, total int, path func(int) string, testID string) pager {
	if size <= 0 {
		size = DefaultPageSize
	}
	total = max(total, 0)
	pages := max((total+size-1)/size, 1)
	page = min(max(page, 1), pages)
	pg := pager{Page: page, Pages: pages, Total: total, path: path, testID: testID}
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
	return pg.path(page)
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
	Value readmodel.Filter
	Label string
}

// filterLabel is a filter link's words, with its count when known:
// "Security (1)".
func filterLabel(f filterOption, counts map[readmodel.Filter]int) string {
	n, ok := counts[f.Value]
	if !ok {
		return f.Label
	}
	return f.Label + " (" + thousands(n) + ")"
}

var filterOptions = []filterOption{
	{readmodel.FilterAll, "All"},
	{readmodel.FilterAttention, "Needs attention"},
	{readmodel.FilterMalicious, "Malicious"},
	{readmodel.FilterKnownExploited, "Exploited in the wild"},
	{readmodel.FilterUpdates, "Updates"},
	{readmodel.FilterSecurity, "Security"},
	{readmodel.FilterVulnerable, "Vulnerable"},
	{readmodel.FilterWaiting, "Waiting for a soak"},
	{readmodel.FilterSkipped, "Skipped"},
	{readmodel.FilterFailing, "Failing checks"},
	{readmodel.FilterStale, "Stale"},
	{readmodel.FilterDismissed, "Dismissed advisories"},
}

// shownFilters are the filters the page offers: the malicious, exploited,
// waiting and skipped ones only while a component is so (or one is
// chosen), since most sites never have one (waiting and skipped need a
// policy's soak or a skip).
func shownFilters(p CatalogProps) []filterOption {
	out := make([]filterOption, 0, len(filterOptions))
	for _, f := range filterOptions {
		if occasionalFilter(f.Value) && p.Counts[f.Value] == 0 && p.Filter != f.Value {
			continue
		}
		out = append(out, f)
	}
	return out
}

// occasionalFilter reports whether the page offers the filter only while
// it shows a component (shownFilters).
func occasionalFilter(f readmodel.Filter) bool {
	switch f {
	case readmodel.FilterMalicious, readmodel.FilterKnownExploited, readmodel.FilterWaiting, readmodel.FilterSkipped:
		return true
	}
	return false
}

// filterNoun is what the current filter shows, for the count line.
func filterNoun(f readmodel.Filter, n int) string {
	switch f {
	case readmodel.FilterAttention:
		return pick(n, "component that needs", "components that need") + " attention"
	case readmodel.FilterMalicious:
		return pick(n, "known malicious package", "known malicious packages")
	case readmodel.FilterKnownExploited:
		return pick(n, "component", "components") + " with an advisory exploited in the wild"
	case readmodel.FilterUpdates:
		return pick(n, "component", "components") + " with an update"
	case readmodel.FilterSecurity:
		return pick(n, "component", "components") + " with a security update"
	case readmodel.FilterVulnerable:
		return pick(n, "vulnerable component", "vulnerable components")
	case readmodel.FilterWaiting:
		return pick(n, "component", "components") + " with a release waiting for its soak"
	case readmodel.FilterSkipped:
		return pick(n, "component", "components") + " with a skipped release"
	case readmodel.FilterFailing:
		return pick(n, "component whose", "components whose") + " check is failing"
	case readmodel.FilterStale:
		return pick(n, "stale component", "stale components")
	case readmodel.FilterDismissed:
		return pick(n, "component", "components") + " with a dismissed advisory"
	default:
		return pick(n, "component", "components")
	}
}

// countText is the catalog's count line: "Showing 1–50 of 3,000
// components with an update matching “blog”".
func countText(pg pager, filter readmodel.Filter, query string) string {
	return pg.countText(filterNoun(filter, 0), filterNoun(filter, pg.Total), query)
}

// sitesShowingText is the Sites section's count line: "Showing 1–50 of
// 3,000 sites matching “acme”".
func sitesShowingText(pg pager, query string) string {
	return pg.countText("sites", pick(pg.Total, "site", "sites"), query)
}

// countText is "No NONE", or "Showing 1–50 of 3,000 NOUN", with
// "matching “QUERY”" after it when a search was asked.
func (pg pager) countText(none, noun, query string) string {
	s := "No " + none
	switch {
	case pg.Total == 0:
	case pg.From == pg.To:
		s = "Showing " + thousands(pg.From) + " of " + thousands(pg.Total) + " " + noun
	default:
		s = pg.showingText() + " " + noun
	}
	if query != "" {
		s += " matching “" + query + "”"
	}
	return s
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
	case readmodel.FilterAttention:
		return "No component needs attention: no security update, vulnerable version, trust downgrade or deprecated installed version."
	case readmodel.FilterMalicious:
		if !p.MalwareRead {
			return "No OSV advisory feed has been read, so no package is known to be malicious or not."
		}
		return "No installed package is matched by an advisory saying it is malicious."
	case readmodel.FilterKnownExploited:
		if !p.ExploitedRead {
			return "The KEV catalogue has not been read, so no advisory is known to be exploited in the wild or not."
		}
		return "No open advisory of an installed version is in the KEV catalogue of vulnerabilities exploited in the wild."
	case readmodel.FilterUpdates:
		return "No component has an update available."
	case readmodel.FilterSecurity:
		return "No component has a security update."
	case readmodel.FilterVulnerable:
		return "No installed version is affected by a known advisory."
	case readmodel.FilterWaiting:
		return "No component has a release waiting for its soak: every release the policy allows is offered."
	case readmodel.FilterSkipped:
		return "No skip hides a release from any component."
	case readmodel.FilterFailing:
		return "No component’s check is failing."
	case readmodel.FilterStale:
		return "No component is stale: every source was read successfully in the last " + staleAgeText + " (or its component was installed since), and no document has expired."
	case readmodel.FilterDismissed:
		return "No component has a dismissed advisory."
	default:
		return "No components are installed yet. List them in the manifest and run “upcheck components sync”."
	}
}
