package views

import (
	"net/url"
	"strconv"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// PathFleet is the Fleet page: every site the user may see with its
// counts; PathFleetImpact is the impact of an advisory or a package on
// the sites (docs/design.md "The fleet").
const (
	PathFleet       = "/admin/fleet"
	PathFleetImpact = PathFleet + "/impact"
)

// The fleet as JSON.
const (
	PathAPIFleet        = "/api/admin/fleet"
	PathAPIFleetSummary = PathAPIFleet + "/summary"
	PathAPIFleetImpact  = PathAPIFleet + "/impact"
)

// The Fleet page's and the impact's query parameters beside q
// (ParamQuery) and page (ParamPage); the filter is ParamPackageFilter's
// "filter".
const (
	ParamSort     = "sort"
	ParamAdvisory = "advisory"
	ParamPackage  = "package"
	ParamRange    = "range"
)

// FleetProps is one page of the Fleet page.
type FleetProps struct {
	Rows []readmodel.FleetRow
	// Summary is the totals across every site the user may see.
	Summary readmodel.FleetSummary
	Sort    readmodel.FleetSort
	Filter  readmodel.FleetFilter
	Query   string
	// Page is the page number (from 1); More: a next page exists.
	Page int
	More bool
}

// FleetImpactProps is the impact page: what was asked (Asked false: the
// form alone) and the answer.
type FleetImpactProps struct {
	Layout                   LayoutProps
	Asked                    bool
	Advisory, Package, Range string
	Impact                   readmodel.FleetImpact
}

// FleetPath is the Fleet page for an order, a filter, a search and a
// page; empty values (and page 1) are left out of the URL.
func FleetPath(sort readmodel.FleetSort, filter readmodel.FleetFilter, query string, page int) string {
	v := url.Values{}
	for _, kv := range [][2]string{{ParamSort, string(sort)}, {ParamPackageFilter, string(filter)}, {ParamQuery, query}} {
		if kv[1] != "" {
			v.Set(kv[0], kv[1])
		}
	}
	if page > 1 {
		v.Set(ParamPage, strconv.Itoa(page))
	}
	if len(v) == 0 {
		return PathFleet
	}
	return PathFleet + "?" + v.Encode()
}

// FleetImpactPath is the impact of an advisory, or of a package in a
// range ("" for every version).
func FleetImpactPath(advisory, pkg, rng string) string {
	v := url.Values{}
	for _, kv := range [][2]string{{ParamAdvisory, advisory}, {ParamPackage, pkg}, {ParamRange, rng}} {
		if kv[1] != "" {
			v.Set(kv[0], kv[1])
		}
	}
	if len(v) == 0 {
		return PathFleetImpact
	}
	return PathFleetImpact + "?" + v.Encode()
}

// fleetSummaryText is the totals in one sentence: "12 sites, 3 stale,
// 24,000 packages installed; 2 sites with malicious packages, 9 with
// something that needs attention."
func fleetSummaryText(s readmodel.FleetSummary) string {
	text := readmodel.FleetSitesText(s.Sites)
	if s.Stale > 0 {
		text += ", " + thousands(s.Stale) + " stale"
	}
	text += ", " + countNounThousands(s.Packages, "package installed", "packages installed")
	if s.Checked < s.Sites {
		text += " (" + countNoun(s.Sites-s.Checked, "site not checked yet", "sites not checked yet") + ")"
	}
	text += "; " + countNoun(s.SitesMalicious, "site with malicious packages", "sites with malicious packages") +
		", " + countNoun(s.SitesAttention, "with something that needs attention", "with something that needs attention") + "."
	return text
}

// fleetComponentsText is the components' totals in one sentence: "480
// components: 35 updates offered on 9 sites, 4 security updates on 2
// sites, 3 vulnerable, 5 with a trust signal (1 site not all checked)."
func fleetComponentsText(s readmodel.FleetSummary) string {
	c := s.Components
	text := countNounThousands(c.Components, "component", "components") + ": " +
		countNounThousands(c.UpdatesAvailable, "update", "updates") + " offered on " + countNoun(s.SitesUpdates, "site", "sites") +
		", " + countNounThousands(c.SecurityUpdates, "security update", "security updates") + " on " +
		countNoun(s.SitesSecurity, "site", "sites") + ", " + thousands(c.Vulnerable) + " vulnerable, " +
		thousands(c.TrustSignals) + " with a trust signal"
	if s.ComponentsChecked < s.Sites {
		text += " (" + countNoun(s.Sites-s.ComponentsChecked, "site", "sites") + " " + readmodel.FleetNotAllCheckedText + ")"
	}
	return text + "."
}

// fleetEmptyText explains an empty page in words that fit what was asked.
func fleetEmptyText(p FleetProps) string {
	switch {
	case p.Query != "":
		return "No site’s name or owner matches “" + p.Query + "”."
	case p.Page > 1:
		return "This page is empty; the list is shorter than that now."
	case p.Filter == readmodel.FleetMalicious:
		return "No site installs a malicious package."
	case p.Filter == readmodel.FleetSecurity:
		return "No site's component is offered a security update."
	case p.Filter == readmodel.FleetUpdates:
		return "No site's component is offered an update."
	case p.Filter == readmodel.FleetTrust:
		return "No site's component carries a trust signal."
	case p.Filter == readmodel.FleetStale:
		return "No site is stale."
	}
	return "You may see no site."
}

// fleetCount is a site's count of one kind, or "not checked" when its
// tree was never read.
func fleetCount(r readmodel.FleetRow, n int) string {
	if !r.Checked {
		return readmodel.FleetNotCheckedText
	}
	return thousands(n)
}

// fleetVulnerable is a row's vulnerable items, with no fix or not.
func fleetVulnerable(r readmodel.FleetRow) int {
	return r.Counts.Vulnerable + r.Counts.VulnerableNoFix
}

// fleetImpactTitle is what the impact page answers: "GHSA-…", "lodash
// >=4.0.0 <4.17.21", "lodash".
func fleetImpactTitle(p FleetImpactProps) string {
	if p.Advisory != "" {
		return p.Advisory
	}
	if p.Range != "" {
		return p.Package + " " + p.Range
	}
	return p.Package
}
