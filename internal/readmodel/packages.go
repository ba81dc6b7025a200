package readmodel

import (
	"slices"
	"strings"
	"time"
)

// The installed tree as the operator reads it (docs/npm.md): every
// package the site's lockfile installs, not only the components. The
// Packages page, GET /api/admin/packages and the component's page read
// these rows and words.

// PackageFilter is one of the Packages page's filters, as the page's and
// the API's filter parameter names it ("" for all). Each is defined once,
// in SQL over the view tree_package_names (queries/packages.sql), where
// the page is cut, and counted by the same predicate (PackageCounts).
type PackageFilter string

// The Packages page's filters.
const (
	// PackagesAll shows every installed package.
	PackagesAll PackageFilter = ""
	// PackagesVulnerable: a version installed has an advisory the setting
	// UPCHECK_LOCKFILE_DEV shows (DevMode), neither withdrawn nor
	// dismissed.
	PackagesVulnerable PackageFilter = "vulnerable"
	// PackagesMalicious: one of those advisories is a malicious-package
	// record.
	PackagesMalicious PackageFilter = "malicious"
	// PackagesExploited: one of those advisories is known to be exploited.
	PackagesExploited PackageFilter = "exploited"
	// PackagesDev: installed only for development (every instance is,
	// by the lockfile's dev flag or because only the site's
	// devDependencies reach it).
	PackagesDev PackageFilter = "dev"
	// PackagesScripts: an instance runs a script when installed.
	PackagesScripts PackageFilter = "scripts"
	// PackagesSources: an instance did not come from a registry (git, a
	// tarball URL, a file or a link).
	PackagesSources PackageFilter = "sources"
	// PackagesBrings: a lockfile change that installed a version
	// installed now brought a signal (docs/npm.md "What a lockfile change
	// brought").
	PackagesBrings PackageFilter = "brings"
)

// PackageFilters are the Packages page's filters in the order the page
// offers them; PackagesAll first.
var PackageFilters = []PackageFilter{PackagesAll, PackagesVulnerable, PackagesMalicious, PackagesExploited, PackagesDev,
	PackagesScripts, PackagesSources, PackagesBrings}

// Valid reports whether f is one of PackageFilters.
func (f PackageFilter) Valid() bool {
	return slices.Contains(PackageFilters, f)
}

// Label is the filter's name on the page.
func (f PackageFilter) Label() string {
	switch f {
	case PackagesAll:
		return "All"
	case PackagesVulnerable:
		return "Vulnerable"
	case PackagesMalicious:
		return "Malicious"
	case PackagesExploited:
		return "Known exploited"
	case PackagesDev:
		return "Development only"
	case PackagesScripts:
		return "Install scripts"
	case PackagesSources:
		return "Not from a registry"
	case PackagesBrings:
		return "Brought by a change"
	}
	return string(f)
}

// PackageCounts is how many packages each filter shows.
type PackageCounts struct {
	All, Vulnerable, Malicious, Exploited, Dev, Scripts, Sources, Brings int
}

// Of is the count of one filter; 0 for an unknown one.
func (c PackageCounts) Of(f PackageFilter) int {
	switch f {
	case PackagesAll:
		return c.All
	case PackagesVulnerable:
		return c.Vulnerable
	case PackagesMalicious:
		return c.Malicious
	case PackagesExploited:
		return c.Exploited
	case PackagesDev:
		return c.Dev
	case PackagesScripts:
		return c.Scripts
	case PackagesSources:
		return c.Sources
	case PackagesBrings:
		return c.Brings
	}
	return 0
}

// PackageRow is one installed package, however many instances of it the
// tree installs: a row of the Packages page and of the API's list.
type PackageRow struct {
	Name string `json:"name"`
	// Versions are the versions installed, each once.
	Versions []string `json:"versions"`
	// Instances counts the places it is installed at.
	Instances int `json:"instances"`
	// Dev: every instance is installed only for development.
	Dev bool `json:"dev"`
	// InstallScript: an instance runs a script when installed.
	InstallScript bool `json:"install_script"`
	// OtherSources are the sources of the instances that did not come
	// from a registry (git, tarball, file, link); empty: all did.
	OtherSources []string `json:"other_sources"`
	// Components are the codes of the components that bring it in, Heads
	// the site's direct dependencies that do (a component's package, or
	// one that is not a component), and Path one shortest path from one
	// of them to it: ["express", "send", "debug"].
	Components []string `json:"components"`
	Heads      []string `json:"heads"`
	Path       []string `json:"path"`
	// Brings is the most pressing signal a lockfile change that installed
	// a version installed now brought (SignalText words it); nil: none.
	Brings *Signal `json:"brings"`
}

// PackageVia is one way the site reaches a package instance: one
// shortest path from a direct dependency of the site (Head).
type PackageVia struct {
	Head string   `json:"head"`
	Path []string `json:"path"`
}

// PackageInstance is one installed instance of a package: where it sits
// and how it got there.
type PackageInstance struct {
	// ID is where it sits: npm's path in node_modules, pnpm's snapshot key.
	ID string `json:"id"`
	// Alias is the name it is installed under when that is not the
	// package's own ("" otherwise).
	Alias   string `json:"alias"`
	Version string `json:"version"`
	// Dev, Optional and Peer are the lockfile's flags; DevOnly: only the
	// site's devDependencies reach it.
	Dev      bool `json:"dev"`
	Optional bool `json:"optional"`
	Peer     bool `json:"peer"`
	DevOnly  bool `json:"dev_only"`
	// Source is how it was resolved: registry, git, tarball, file or link;
	// Resolved where from, Integrity its hash, as the lockfile says.
	Source        string `json:"source"`
	Resolved      string `json:"resolved"`
	Integrity     string `json:"integrity"`
	InstallScript bool   `json:"install_script"`
	// Via is one shortest path from each direct dependency of the site
	// that brings it in, Components the component codes among their heads.
	Via        []PackageVia `json:"via"`
	Components []string     `json:"components"`
	// Fixes are what clears each finding on it, as the last check decided
	// (tree_fixes), by advisory; empty: none decided.
	Fixes []PackageFix `json:"fixes"`
	// Findings are the advisories of its version the setting
	// UPCHECK_LOCKFILE_DEV shows (upcheck_tree_shown), by advisory; empty:
	// none.
	Findings []PackageFinding `json:"findings"`
}

// PackageFix is what clears one finding on a package instance: the
// advisory, the fix as the check decided it (TreeFix) and in words
// (TreeFixText).
type PackageFix struct {
	AdvisoryID string  `json:"advisory_id"`
	Fix        TreeFix `json:"fix"`
	Text       string  `json:"text"`
}

// PackageVersionSpan is one version of a package the tree installed, from
// when until when, on the database clock; RemovedAt nil: installed now.
type PackageVersionSpan struct {
	Version     string     `json:"version"`
	InstalledAt time.Time  `json:"installed_at"`
	RemovedAt   *time.Time `json:"removed_at"`
}

// PackageHistoryLimit is how many versions of one package its page and the
// API list, newest first.
const PackageHistoryLimit = 200

// TreeState is the installed tree as last read: from which lockfile, how
// many package instances, when it was read and when it last changed.
type TreeState struct {
	Path      string    `json:"path"`
	Packages  int       `json:"packages"`
	ReadAt    time.Time `json:"read_at"`
	ChangedAt time.Time `json:"changed_at"`
}

// DependenciesNotCheckedText is what every page says where the installed
// tree was never read (no lockfile of the site was: a site that lists its
// components in a manifest, or a lockfile not synced yet): nothing is
// known of the packages the components bring in, and no page may let that
// read as safe.
const DependenciesNotCheckedText = "Dependencies not checked: upcheck has not read this site's installed tree " +
	"(its package-lock.json or pnpm-lock.yaml), so it knows nothing of the packages the components bring in."

// PackagesInstalledText is "212 packages installed (17 components)": the
// tree's package instances, and the components among them.
func PackagesInstalledText(packages, components int) string {
	return countText(int64(packages), "package installed", "packages installed") +
		" (" + countText(int64(components), "component", "components") + ")"
}

// DependenciesText is "184 packages": what a component brings in.
func DependenciesText(n int) string {
	return countText(int64(n), "package", "packages")
}

// PathText is a path through the tree: "express → send → debug".
func PathText(path []string) string {
	return strings.Join(path, " → ")
}

// PackageSourceText words how an instance was resolved, for its flag:
// "from git", "from a tarball URL", "from a file", "a link"; "" for a
// registry's.
func PackageSourceText(source string) string {
	switch source {
	case "registry", "":
		return ""
	case "git":
		return "from git"
	case "tarball":
		return "from a tarball URL"
	case "file":
		return "from a file"
	case "link":
		return "a link"
	}
	return "from " + source
}

// PackageFinding is one advisory of an installed instance's version, as
// its page and GET /api/admin/packages/{name} list it: what it is, what
// it counts for under UPCHECK_LOCKFILE_DEV (DevMode), and what clears it.
type PackageFinding struct {
	AdvisoryID     string `json:"advisory_id"`
	Severity       string `json:"severity"`
	Malicious      bool   `json:"malicious"`
	KnownExploited bool   `json:"known_exploited"`
	// EPSS nil: not scored; FixedIn nil: no fixed version.
	EPSS    *float64 `json:"epss"`
	FixedIn *string  `json:"fixed_in"`
	// Withdrawn and Dismissed findings are listed, never counted; Dev:
	// every instance of the version is installed only for development
	// (shown apart under DevSeparate); Counted: upcheck_tree_counted.
	Withdrawn bool `json:"withdrawn"`
	Dismissed bool `json:"dismissed"`
	Dev       bool `json:"dev"`
	Counted   bool `json:"counted"`
	// Fix is what clears it as the check decided (tree_fixes), and
	// FixText its words; nil and "": none decided.
	Fix     *TreeFix `json:"fix"`
	FixText string   `json:"fix_text"`
}

// PackageFindingFlags words what a finding is beside its advisory, in
// the page's order: "high", "malicious", "known exploited", "EPSS 12.0
// %", "fixed in 4.4.3" or "no fixed version", and why it does not count
// ("withdrawn", "dismissed", "development only: not counted").
func PackageFindingFlags(f PackageFinding) []string {
	var out []string
	if f.Severity != "" {
		out = append(out, f.Severity)
	}
	if f.Malicious {
		out = append(out, "malicious")
	}
	if f.KnownExploited {
		out = append(out, "known exploited")
	}
	if f.EPSS != nil {
		out = append(out, "EPSS "+percentText(*f.EPSS)+" %")
	}
	if f.FixedIn != nil {
		out = append(out, "fixed in "+*f.FixedIn)
	} else {
		out = append(out, "no fixed version")
	}
	switch {
	case f.Withdrawn:
		out = append(out, "withdrawn")
	case f.Dismissed:
		out = append(out, "dismissed")
	case f.Dev && !f.Counted:
		out = append(out, "development only: not counted")
	}
	return out
}
