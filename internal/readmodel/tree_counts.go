package readmodel

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// What in the installed tree needs attention, as the summary counts it
// (Summary.TreeCounts, Summary.TreeAttention): the one SQL definition
// upcheck_tree_attention(dev_mode), read in queries/summary.sql's one
// statement with the components' counts. An item is a package version
// installed now, or one the site no longer has (KindExposed), under its
// most urgent kind; the counts by kind add up to the total.

// TreeKinds are the kinds of the tree's items, most urgent first: a
// malicious package and a look-back finding (the site ran a malicious or
// exploited version), then an advisory exploited in the wild, then one
// with no fix, then a vulnerable version. The summary's SQL orders them
// so (TestSummaryTreeCounts holds it to it).
var TreeKinds = []AttentionKind{KindMalicious, KindExposed, KindKnownExploited, KindVulnerableNoFix, KindVulnerable}

// TreeAttentionKinds are TreeKinds and, after them, KindBrings: a version
// installed now that a lockfile change brought with a signal (docs/npm.md
// "What a lockfile change brought"), as an offer's signals come after the
// advisories (Urgency). The summary's items and counts are of these;
// /metrics' tree findings are of TreeKinds.
var TreeAttentionKinds = append(slices.Clone(TreeKinds), KindBrings)

// TreeCounts counts the tree's items by kind (each item under its most
// urgent kind) and in all. Malicious is nil while no feed that names
// malicious packages was read (Summary.MalwareReadAt nil), KnownExploited
// while the KEV catalogue was not (Summary.ExploitedReadAt nil), as the
// components' counts are.
type TreeCounts struct {
	Malicious       *int `json:"malicious"`
	Exposed         int  `json:"exposed"`
	KnownExploited  *int `json:"known_exploited"`
	VulnerableNoFix int  `json:"vulnerable_no_fix"`
	Vulnerable      int  `json:"vulnerable"`
	Brings          int  `json:"brings"`
	Total           int  `json:"total"`
}

// Of is the count of one kind, 0 for an unknown one or one not given.
func (c TreeCounts) Of(kind AttentionKind) int {
	switch kind {
	case KindMalicious:
		return countOrZero(c.Malicious)
	case KindExposed:
		return c.Exposed
	case KindKnownExploited:
		return countOrZero(c.KnownExploited)
	case KindVulnerableNoFix:
		return c.VulnerableNoFix
	case KindVulnerable:
		return c.Vulnerable
	case KindBrings:
		return c.Brings
	}
	return 0
}

func countOrZero(n *int) int {
	if n == nil {
		return 0
	}
	return *n
}

// TreeAttentionItem is one package version in the installed tree that
// needs attention, under its most urgent kind, with that kind's
// advisory. InstalledAt and RemovedAt are the interval a look-back
// finding (KindExposed) was installed in; nil for the others.
type TreeAttentionItem struct {
	Name        string        `json:"name"`
	Version     string        `json:"version"`
	AdvisoryID  string        `json:"advisory_id"`
	Kind        AttentionKind `json:"kind"`
	Malicious   bool          `json:"malicious"`
	InstalledAt *time.Time    `json:"installed_at"`
	RemovedAt   *time.Time    `json:"removed_at"`
	// Brings is, for KindBrings, the most pressing signal the lockfile
	// change that installed it brought; nil for the others.
	Brings *Signal `json:"brings"`
}

// TreeAttentionItems are the tree's items the summary names; none is
// written as [] (never null).
type TreeAttentionItems []TreeAttentionItem

// MarshalJSON writes none as [].
func (items TreeAttentionItems) MarshalJSON() ([]byte, error) {
	if items == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]TreeAttentionItem(items))
}

// TreeKindText counts the tree's items of one kind in the words every
// page and message uses: "1 malicious package in the dependencies",
// "2 vulnerable dependencies".
func TreeKindText(kind AttentionKind, n int) string {
	switch kind {
	case KindMalicious:
		return countText(int64(n), "malicious package in the dependencies", "malicious packages in the dependencies")
	case KindExposed:
		return countText(int64(n), "past exposure in the dependencies", "past exposures in the dependencies")
	case KindKnownExploited:
		return countText(int64(n), "dependency exploited in the wild", "dependencies exploited in the wild")
	case KindVulnerableNoFix:
		return countText(int64(n), "vulnerable dependency with no fix yet", "vulnerable dependencies with no fix yet")
	case KindBrings:
		return countText(int64(n), "dependency a lockfile change brought with a signal",
			"dependencies lockfile changes brought with signals")
	}
	return countText(int64(n), "vulnerable dependency", "vulnerable dependencies")
}

// TreeCountsParts are the tree's counts in words, most urgent first, the
// kinds with none left out: the dashboard's and the banner's.
func TreeCountsParts(c TreeCounts) []string {
	var out []string
	for _, k := range TreeAttentionKinds {
		if n := c.Of(k); n > 0 {
			out = append(out, TreeKindText(k, n))
		}
	}
	return out
}

// TreeAttentionText is the sentence the banner and the messages add for
// the tree: "1 malicious package in the dependencies and 2 vulnerable
// dependencies need attention."; "" when nothing in the tree does.
func TreeAttentionText(c TreeCounts) string {
	parts, n := TreeCountsParts(c), 0
	if len(parts) == 0 {
		return ""
	}
	for _, k := range TreeAttentionKinds {
		n += c.Of(k)
	}
	verb := "need"
	if n == 1 {
		verb = "needs"
	}
	list := parts[len(parts)-1]
	if len(parts) > 1 {
		list = strings.Join(parts[:len(parts)-1], ", ") + " and " + list
	}
	return list + " " + verb + " attention."
}

// TreeBadgeOne and TreeBadgeMany are the words of the badge beside
// "Packages": how many of the tree's items need attention.
const (
	TreeBadgeOne  = "dependency needs attention"
	TreeBadgeMany = "dependencies need attention"
)

// ComponentTreeText says what needs attention in one component's
// dependencies (the items of its tree, CatalogRow.TreeCounted and
// TreeMalicious), after its own state: "2 vulnerable dependencies",
// "1 malicious package in its dependencies"; "" for none.
func ComponentTreeText(counted, malicious int) string {
	var parts []string
	if malicious > 0 {
		parts = append(parts, countText(int64(malicious), "malicious package in its dependencies",
			"malicious packages in its dependencies"))
	}
	if rest := counted - malicious; rest > 0 {
		parts = append(parts, countText(int64(rest), "vulnerable dependency", "vulnerable dependencies"))
	}
	return strings.Join(parts, " · ")
}

// TreeItemProblem words a tree item's problem after its package and
// version (not a look-back finding: ExposureSentence says that one
// whole): "in the dependencies, known malicious package: remove it
// (MAL-2025-1)", "in the dependencies, GHSA-… is exploited in the wild",
// "in the dependencies, GHSA-…, no fix yet".
func TreeItemProblem(a TreeAttentionItem) string {
	switch a.Kind {
	case KindMalicious:
		return "in the dependencies, known malicious package: remove it (" + a.AdvisoryID + ")"
	case KindKnownExploited:
		return "in the dependencies, " + a.AdvisoryID + " is " + ExploitedWords
	case KindVulnerableNoFix:
		return "in the dependencies, " + a.AdvisoryID + ", no fix yet"
	case KindBrings:
		if a.Brings == nil {
			return "in the dependencies, installed by a lockfile change that brought a signal"
		}
		return "in the dependencies, installed by a lockfile change: " + SignalText(*a.Brings)
	}
	return "in the dependencies, " + a.AdvisoryID
}

// DependencyCounts counts the package versions in a component's
// dependencies that need attention, and those of them a malicious-package
// record names (ComponentTreeText words them).
type DependencyCounts struct {
	Counted   int `json:"counted"`
	Malicious int `json:"malicious"`
}

// DependencyFindingsLimit is how many rows of a component's dependencies'
// findings its page and the API list.
const DependencyFindingsLimit = 200

// DependencyFinding is one finding on an installed instance that a
// component brings in: the package, its kind (as upcheck_tree_attention
// says), one shortest path to it from the component's package ("express →
// send → debug"), and what clears it as the last check decided (nil Fix,
// "" FixText: none decided yet).
type DependencyFinding struct {
	Name       string        `json:"name"`
	Version    string        `json:"version"`
	AdvisoryID string        `json:"advisory_id"`
	Kind       AttentionKind `json:"kind"`
	Malicious  bool          `json:"malicious"`
	Severity   string        `json:"severity"`
	// FixedIn is the first fixed version; nil: none.
	FixedIn *string  `json:"fixed_in"`
	Path    []string `json:"path"`
	Fix     *TreeFix `json:"fix"`
	FixText string   `json:"fix_text"`
}

// DependenciesFindingsText is what a component brings in and how much of
// it needs attention: "184 packages, 2 with advisories"; "184 packages"
// for none.
func DependenciesFindingsText(packages, counted int) string {
	if counted == 0 {
		return DependenciesText(packages)
	}
	return DependenciesText(packages) + ", " + countText(int64(counted), "with advisories", "with advisories")
}

// DependencyProblem words a finding after its package: "known malicious
// package: remove it (MAL-2025-1)", "GHSA-…, no fix yet".
func DependencyProblem(f DependencyFinding) string {
	return strings.TrimPrefix(TreeItemProblem(TreeAttentionItem{Kind: f.Kind, AdvisoryID: f.AdvisoryID}), "in the dependencies, ")
}

// DependencyFixText is what clears a finding in a component's
// dependencies as the last check decided it (TreeFixText), or that no
// check has decided it yet.
func DependencyFixText(f DependencyFinding) string {
	if f.FixText != "" {
		return f.FixText
	}
	return FixNotDecidedText
}

// FixNotDecidedText stands for what clears a finding while no check has
// decided it yet.
const FixNotDecidedText = "not decided yet: the next check decides it"
