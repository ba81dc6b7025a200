package views

import (
	"slices"
	"strings"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// PathPackages lists every package the site's lockfile installs; a
// package's page is PackagePath.
const PathPackages = "/admin/packages"

// PathAPIPackages is the installed packages as JSON; one package is
// PathAPIPackages + "/" + its escaped name.
const PathAPIPackages = "/api/admin/packages"

// The Packages page's query parameters beside the catalog's q
// (ParamQuery): its filter (readmodel.PackageFilters), the component whose
// packages it lists, and the keyset cursor: the name a page starts after.
const (
	ParamPackageFilter = "filter"
	ParamComponent     = "component"
	ParamAfter         = "after"
)

// PackagesProps is one page of the installed packages.
type PackagesProps struct {
	Layout LayoutProps
	// Site is the registered site whose packages these are; "" the local
	// site's (today's URLs).
	Site string
	Rows []readmodel.PackageRow
	// Counts is how many packages each filter shows with the page's
	// component and search.
	Counts readmodel.PackageCounts
	Filter readmodel.PackageFilter
	// Component is the code of the component whose packages are listed
	// ("" for all), Query the search.
	Component, Query string
	// After is the name this page starts after ("" the first page), Next
	// the name the next page starts after ("" the last page).
	After, Next string
	// Tree is the tree as last read; nil: never read, and the page says
	// the dependencies are not checked.
	Tree *readmodel.TreeState
}

// PackageProps is one installed package.
type PackageProps struct {
	Layout LayoutProps
	// Site is the registered site the package is installed on; "" the
	// local site.
	Site      string
	Name      string
	Instances []readmodel.PackageInstance
	History   []readmodel.PackageVersionSpan
	// Changes are what the lockfile changes that installed its versions
	// brought, newest first.
	Changes []readmodel.PackageChange
	Tree    *readmodel.TreeState
	// CanManage: the user may dismiss a finding on the package here.
	CanManage bool
	// Notice and Error are what the last dismiss form left (the flash).
	Notice, Error string
}

// treeDismissing is what a finding's dismiss form needs.
type treeDismissing struct {
	Site, Name, CSRF string
	CanManage        bool
}

func (p PackageProps) dismissing() treeDismissing {
	return treeDismissing{Site: p.Site, Name: p.Name, CSRF: p.Layout.CSRFToken, CanManage: p.CanManage}
}

// PackagesPath is the local site's Packages page for a filter, a
// component, a search and a cursor (SitePackagesPath).
func PackagesPath(filter readmodel.PackageFilter, component, query, after string) string {
	return SitePackagesPath("", filter, component, query, after)
}

// PackagePath is one package's page on the local site (SitePackagePath).
func PackagePath(name string) string {
	return SitePackagePath("", name)
}

// packageFilterLabel is a filter link's words with its count: "Install
// scripts (3)".
func packageFilterLabel(f readmodel.PackageFilter, c readmodel.PackageCounts) string {
	return f.Label() + " (" + thousands(c.Of(f)) + ")"
}

// packagesCountText is "Showing 50 of 212 packages" ("212 packages", all
// on one page; "Showing 50 more of 212 packages" after the first page).
func packagesCountText(p PackagesProps) string {
	total := p.Counts.Of(p.Filter)
	noun := countNounThousands(total, "package", "packages")
	switch {
	case p.After != "":
		// A page after the first knows the rows before it only by name.
		return "Showing " + thousands(len(p.Rows)) + " more of " + noun
	case len(p.Rows) == total:
		return noun
	}
	return "Showing " + thousands(len(p.Rows)) + " of " + noun
}

// packagesEmptyText explains an empty page in words that fit what was
// asked for.
func packagesEmptyText(p PackagesProps) string {
	switch {
	case p.Query != "":
		return "No installed package matches “" + p.Query + "”."
	case p.After != "":
		return "This page is empty; the list is shorter than that now."
	case p.Component != "":
		return "The tree installs nothing for this component."
	case p.Filter != readmodel.PackagesAll:
		return "No installed package is shown by this filter."
	}
	return "The lockfile installs no package."
}

// packageBadges are a package's flags in words.
func packageBadges(dev, script bool, sources []string) []badge {
	var out []badge
	if dev {
		out = append(out, badge{"Development only", toneNeutral})
	}
	if script {
		out = append(out, badge{"Install script", toneWarn})
	}
	for _, s := range sources {
		if t := readmodel.PackageSourceText(s); t != "" {
			out = append(out, badge{strings.ToUpper(t[:1]) + t[1:], toneWarn})
		}
	}
	return out
}

// packageRowBadges are a Packages row's flags in words, and the most
// pressing signal a lockfile change brought.
func packageRowBadges(r readmodel.PackageRow) []badge {
	out := packageBadges(r.Dev, r.InstallScript, r.OtherSources)
	if r.Brings != nil {
		out = append(out, badge{"Change brought: " + readmodel.SignalText(*r.Brings), toneWarn})
	}
	return out
}

// changesNote says what a package page's lockfile changes are.
const changesNote = "Each version a lockfile change installed, compared with the version it replaced (or, brought in new, " +
	"read for its own install scripts, outside sources and age), from the registry's documents. Signals, not blocks: " +
	"the version is installed already."

// instanceBadges are one instance's flags in words.
func instanceBadges(in readmodel.PackageInstance) []badge {
	out := packageBadges(in.Dev || in.DevOnly, in.InstallScript, []string{in.Source})
	if in.Optional {
		out = append(out, badge{"Optional", toneNeutral})
	}
	if in.Peer {
		out = append(out, badge{"Peer", toneNeutral})
	}
	return out
}

// headsText is who brings a package in: the site itself when it is a
// direct dependency, then the site's other direct dependencies that do,
// the first three and how many more: "the site, socket.io".
func headsText(name string, heads []string) string {
	const shown = 3
	var who []string
	if slices.Contains(heads, name) {
		who = append(who, "the site")
	}
	for _, h := range heads {
		if h != name {
			who = append(who, h)
		}
	}
	if len(who) <= shown {
		return strings.Join(who, ", ")
	}
	return strings.Join(who[:shown], ", ") + " and " + countNoun(len(who)-shown, "more", "more")
}

// treeReadText is how many packages the tree holds and where it was
// read from: "212 packages installed, read from package-lock.json".
func treeReadText(t *readmodel.TreeState) string {
	return countNounThousands(t.Packages, "package installed", "packages installed") + ", read from " + t.Path
}

// shortIntegrity is the start of an integrity hash, enough to tell two
// apart at a glance: "sha512-3Y0xR2tPvn…".
func shortIntegrity(s string) string {
	const shown = 18
	if len(s) <= shown {
		return s
	}
	return s[:shown] + "…"
}

// UnknownPackageText is the answer for a package the tree neither installs
// nor installed within its history.
func UnknownPackageText(name string) string {
	if r := []rune(name); len(r) > 80 {
		name = string(r[:79]) + "…"
	}
	return "The installed tree has no package “" + name + "”, now or in its history."
}

// viaText is one way the site reaches an instance: "express → send →
// debug", or, for a package the site itself depends on, "a direct
// dependency of the site".
func viaText(v readmodel.PackageVia) string {
	if len(v.Path) <= 1 {
		return "a direct dependency of the site"
	}
	return readmodel.PathText(v.Path)
}

// hasFindings reports whether any of the instances has a finding listed:
// the page's column of advisories is shown then only.
func hasFindings(instances []readmodel.PackageInstance) bool {
	for _, in := range instances {
		if len(in.Findings) > 0 {
			return true
		}
	}
	return false
}

// hasFixes reports whether a fix was decided for a finding on any of the
// instances: the page's column of fixes is shown then only, so that an
// empty cell never reads as "no advisory".
func hasFixes(instances []readmodel.PackageInstance) bool {
	for _, in := range instances {
		if len(in.Fixes) > 0 {
			return true
		}
	}
	return false
}
