package readmodel

import (
	"slices"
	"strings"
	"time"
)

// The fleet (docs/design.md "The fleet"): every site a principal may see
// with its counts (the Fleet page, GET /api/admin/fleet), their totals
// (GET /api/admin/fleet/summary) and the impact of an advisory or a
// package on the sites (GET /api/admin/fleet/impact). A site's counts are
// its tree's items as the summary counts them (TreeCounts: the one
// definition, upcheck_tree_attention), kept per site in fleet_site_counts,
// and its components as its summary counts them (FleetComponentCounts),
// kept per site in fleet_site_components.

// FleetSort is an order of the Fleet page, as its sort parameter names it.
type FleetSort string

// The Fleet page's orders; each count's highest first.
const (
	// FleetByAttention: a malicious package first, then the most items
	// that need attention (the page's first order).
	FleetByAttention FleetSort = ""
	FleetByName      FleetSort = "name"
	// FleetByPushed: the oldest push first, a site that never pushed
	// first of all.
	FleetByPushed     FleetSort = "pushed"
	FleetByPackages   FleetSort = "packages"
	FleetByMalicious  FleetSort = "malicious"
	FleetByExploited  FleetSort = "exploited"
	FleetByVulnerable FleetSort = "vulnerable"
	// FleetByTotal: the most items that need attention, of every kind.
	FleetByTotal FleetSort = "attention"
	// The components' counts (FleetComponentCounts): the most security
	// updates, updates offered, vulnerable components, components with a
	// trust signal, components. FleetByMalicious and FleetByExploited
	// order by the tree's count, then the components'.
	FleetBySecurity             FleetSort = "security"
	FleetByUpdates              FleetSort = "updates"
	FleetByComponentsVulnerable FleetSort = "components_vulnerable"
	FleetByTrust                FleetSort = "trust"
	FleetByComponents           FleetSort = "components"
)

// FleetSorts are the Fleet page's orders in the order it offers them.
var FleetSorts = []FleetSort{FleetByAttention, FleetByTotal, FleetByMalicious, FleetByExploited, FleetByVulnerable,
	FleetBySecurity, FleetByUpdates, FleetByComponentsVulnerable, FleetByTrust, FleetByPackages, FleetByComponents,
	FleetByPushed, FleetByName}

// Valid reports whether s is one of FleetSorts.
func (s FleetSort) Valid() bool { return slices.Contains(FleetSorts, s) }

// Label is the order's name on the page.
func (s FleetSort) Label() string {
	switch s {
	case FleetByAttention:
		return "Most urgent"
	case FleetByTotal:
		return "Most to attend to"
	case FleetByMalicious:
		return "Malicious"
	case FleetByExploited:
		return "Exploited"
	case FleetByVulnerable:
		return "Vulnerable"
	case FleetByPackages:
		return "Packages"
	case FleetBySecurity:
		return "Security updates"
	case FleetByUpdates:
		return "Updates"
	case FleetByComponentsVulnerable:
		return "Vulnerable components"
	case FleetByTrust:
		return "Trust signals"
	case FleetByComponents:
		return "Components"
	case FleetByPushed:
		return "Oldest push"
	case FleetByName:
		return "Name"
	}
	return string(s)
}

// FleetFilter is one of the Fleet page's filters ("" for every site).
type FleetFilter string

// The Fleet page's filters, each defined once in queries/fleet.sql.
const (
	FleetAll FleetFilter = ""
	// FleetMalicious: the site installs a package a malicious-package
	// record names, in its tree or as a component (counted as the
	// summary counts them).
	FleetMalicious FleetFilter = "malicious"
	// FleetSecurity: a component of the site is offered a security update.
	FleetSecurity FleetFilter = "security"
	// FleetUpdates: a component of the site is offered an update.
	FleetUpdates FleetFilter = "updates"
	// FleetTrust: a component of the site carries a trust signal
	// (FleetComponentCounts.TrustSignals).
	FleetTrust FleetFilter = "trust"
	// FleetStale: a registered site that has not pushed its lockfile
	// within UPCHECK_SITE_STALE_AFTER (or never did).
	FleetStale FleetFilter = "stale"
)

// FleetFilters are the Fleet page's filters in the order it offers them.
var FleetFilters = []FleetFilter{FleetAll, FleetMalicious, FleetSecurity, FleetUpdates, FleetTrust, FleetStale}

// Valid reports whether f is one of FleetFilters.
func (f FleetFilter) Valid() bool { return slices.Contains(FleetFilters, f) }

// Label is the filter's name on the page.
func (f FleetFilter) Label() string {
	switch f {
	case FleetAll:
		return "All sites"
	case FleetMalicious:
		return "With malicious packages"
	case FleetSecurity:
		return "With security updates"
	case FleetUpdates:
		return "With updates"
	case FleetTrust:
		return "With trust signals"
	case FleetStale:
		return "Stale"
	}
	return string(f)
}

// FleetRow is one site of the fleet with its counts.
type FleetRow struct {
	Site  string `json:"site"`
	Owner string `json:"owner"`
	// Local: the site upcheck runs beside (its pages are today's URLs).
	Local bool `json:"local"`
	// Checked: its tree was read; while not, Packages and Counts are 0
	// and the pages say its dependencies are not checked.
	Checked  bool       `json:"checked"`
	Packages int        `json:"packages"`
	Counts   TreeCounts `json:"counts"`
	// PushedAt is its last push accepted; nil: never (the local site
	// pushes nothing).
	PushedAt *time.Time `json:"pushed_at"`
	Stale    bool       `json:"stale"`
	// Components are its components' counts.
	Components FleetComponentCounts `json:"components"`
}

// FleetComponentCounts are a site's components counted as the site's
// summary counts them (queries/summary.sql, its totals: the one
// definition of each word), kept per site in fleet_site_components and
// refreshed once a site when a check, a push, a sync or a decision about
// its components is done (store.Store.RefreshSiteComponentCounts).
type FleetComponentCounts struct {
	// Checked: every component of the site was read (its inventory is
	// known and no component's source is unread); while not, no count of
	// 0 is said (FleetComponentsText).
	Checked    bool `json:"checked"`
	Components int  `json:"components"`
	// UpdatesAvailable: components offered an update, after the policy
	// (the summary's updates_available).
	UpdatesAvailable int `json:"updates_available"`
	// SecurityUpdates: components offered a security update.
	SecurityUpdates int `json:"security_updates"`
	// Vulnerable: components whose installed version an open advisory
	// affects.
	Vulnerable int `json:"vulnerable"`
	// TrustSignals: components with a trust signal (TrustSignalsText).
	TrustSignals int `json:"trust_signals"`
	// Malicious and KnownExploited: components whose installed version a
	// malicious-package record names, or an advisory known to be
	// exploited; nil, in the totals, while their feed was never read.
	Malicious      *int `json:"malicious"`
	KnownExploited *int `json:"known_exploited"`
}

// TrustSignalsText is what a trust signal of a component is, said once:
// its trust went down (provenance lost, a version by a publisher new to
// the package, a pin lowered: the summary's trust_downgrades) or its
// offered update brings a signal (the summary's brings), a component
// counted once however many it has.
const TrustSignalsText = "trust went down, or the offered update brings a signal"

// FleetComponentsText is a site's components in words, as the Fleet
// page says them: "12 components · 3 updates · 1 security update · 1
// trust signal", naming only the counts that are not 0 (malicious and
// exploited after vulnerable), "(not all checked)" after them while some
// component was never read, "not checked" while nothing of the site's
// components is known (never a 0 that reads as up to date), "none" for a
// site known to have none.
func FleetComponentsText(c FleetComponentCounts) string {
	if !c.Checked && c.Components == 0 {
		return FleetNotCheckedText
	}
	if c.Components == 0 {
		return "none"
	}
	parts := []string{countText(int64(c.Components), "component", "components")}
	for _, p := range []struct {
		n         int
		one, many string
	}{
		{c.UpdatesAvailable, "update", "updates"}, {c.SecurityUpdates, "security update", "security updates"},
		{c.Vulnerable, "vulnerable", "vulnerable"}, {countOrZero(c.Malicious), "malicious", "malicious"},
		{countOrZero(c.KnownExploited), "exploited", "exploited"}, {c.TrustSignals, "trust signal", "trust signals"},
	} {
		if p.n > 0 {
			parts = append(parts, countText(int64(p.n), p.one, p.many))
		}
	}
	s := strings.Join(parts, " · ")
	if !c.Checked {
		s += " (" + FleetNotAllCheckedText + ")"
	}
	return s
}

// FleetNotAllCheckedText marks the counts of a site's components while
// some of them were never read: what those need is not known yet.
const FleetNotAllCheckedText = "not all checked"

// FleetSummary is the totals across the sites a principal may see: how
// many sites, how many with a tree read, stale, with a malicious package
// and with anything that needs attention, and the sums of their counts
// (Counts.Malicious nil while no feed that names malicious packages was
// read, KnownExploited while the KEV catalogue was not, as the summary's).
// SitesMalicious counts a site with a malicious package in its tree or as
// a component. The components' totals: how many sites had every
// component read (ComponentsChecked), have an update offered
// (SitesUpdates), a security update (SitesSecurity), and the sums of
// their counts (Components).
type FleetSummary struct {
	Sites             int                  `json:"sites"`
	Checked           int                  `json:"checked"`
	Stale             int                  `json:"stale"`
	SitesMalicious    int                  `json:"sites_malicious"`
	SitesAttention    int                  `json:"sites_attention"`
	Packages          int                  `json:"packages"`
	Counts            TreeCounts           `json:"counts"`
	MalwareReadAt     *time.Time           `json:"malware_read_at"`
	ExploitedReadAt   *time.Time           `json:"exploited_read_at"`
	ComponentsChecked int                  `json:"components_checked"`
	SitesUpdates      int                  `json:"sites_updates"`
	SitesSecurity     int                  `json:"sites_security"`
	Components        FleetComponentCounts `json:"components"`
}

// FleetImpactLimit is how many rows each list of an impact answer holds
// at most (its counts count every site).
const FleetImpactLimit = 1000

// FleetImpactNow is one installed instance affected on a site now, with
// what clears it there: for an advisory, its fix on that instance (nil
// Fix: none decided yet); for a package, the fixes of its findings there.
type FleetImpactNow struct {
	Site       string       `json:"site"`
	Owner      string       `json:"owner"`
	Name       string       `json:"name"`
	Version    string       `json:"version"`
	InstanceID string       `json:"instance_id"`
	AdvisoryID string       `json:"advisory_id,omitempty"`
	Fix        *TreeFix     `json:"fix,omitempty"`
	FixText    string       `json:"fix_text,omitempty"`
	Fixes      []PackageFix `json:"fixes,omitempty"`
}

// FleetImpactEver is one interval of an affected version a site installed
// (its history), with the versions of the package it runs now (none: it
// no longer installs the package).
type FleetImpactEver struct {
	Site        string     `json:"site"`
	Owner       string     `json:"owner"`
	Name        string     `json:"name"`
	Version     string     `json:"version"`
	InstalledAt time.Time  `json:"installed_at"`
	RemovedAt   *time.Time `json:"removed_at"`
	Runs        []string   `json:"runs"`
}

// FleetImpact is the answer to "which sites are affected": by an advisory
// (its id or an alias) or by a package, in a range or at any version.
// SitesNow and SitesEver count the sites; Now and Ever list the first
// FleetImpactLimit rows of each, by site name.
type FleetImpact struct {
	Advisory  string            `json:"advisory,omitempty"`
	Package   string            `json:"package,omitempty"`
	Range     string            `json:"range,omitempty"`
	SitesNow  int               `json:"sites_now"`
	SitesEver int               `json:"sites_ever"`
	Now       []FleetImpactNow  `json:"now"`
	Ever      []FleetImpactEver `json:"ever"`
}

// FleetNotCheckedText stands in a site's counts while its tree was never
// read (the short form of DependenciesNotCheckedText): never a 0 that
// reads as safe.
const FleetNotCheckedText = "not checked"

// FleetFixText is what clears an advisory on an instance as the last
// check decided it there, or that none has decided it yet.
func FleetFixText(r FleetImpactNow) string {
	if r.FixText != "" {
		return r.FixText
	}
	return FixNotDecidedText
}

// FleetSitesText counts sites: "1 site", "12 sites".
func FleetSitesText(n int) string { return countText(int64(n), "site", "sites") }

// FleetImpactNowText and FleetImpactEverText head the impact's two lists.
func FleetImpactNowText(n int) string {
	return FleetSitesText(n) + " affected now"
}

// FleetImpactEverText: the sites that ever installed an affected version,
// within the history kept.
func FleetImpactEverText(n int) string {
	return FleetSitesText(n) + " installed an affected version (the history kept)"
}

// FleetRunsText is the versions a site runs now of the package an
// interval was of: "runs 4.21.2", "no longer installs it".
func FleetRunsText(runs []string) string {
	if len(runs) == 0 {
		return "no longer installs it"
	}
	s := "runs " + runs[0]
	for _, v := range runs[1:] {
		s += ", " + v
	}
	return s
}
