// The installed tree beside the components in the attention banner, the
// navigation and the dashboard (readmodel.Summary.TreeCounts and
// TreeAttention: upcheck_tree_attention, the one definition): its items
// ranked with the components' (a malicious package and a look-back
// finding first, with a malicious component), its badge beside
// "Packages", its counts in the words readmodel defines.

package views

import (
	"github.com/upcheck/upcheck/internal/readmodel"
)

// attentionEntry is one line of an attention list: a component
// (Component) or an item of the installed tree (Tree).
type attentionEntry struct {
	Component *readmodel.AttentionItem
	Tree      *readmodel.TreeAttentionItem
}

// entryRank is an entry's place in the one urgency order
// (readmodel.Urgency): a look-back finding ranks with a malicious package;
// among what brings a signal (an offered update's, a lockfile change's),
// by the signal's rank (readmodel.SignalRank).
func entryRank(e attentionEntry) int {
	kind, signal := readmodel.AttentionKind(""), (*readmodel.Signal)(nil)
	if e.Component != nil {
		kind, signal = e.Component.Kind, e.Component.Brings
	} else {
		kind, signal = e.Tree.Kind, e.Tree.Brings
	}
	if kind == readmodel.KindExposed {
		kind = readmodel.KindMalicious
	}
	rank := readmodel.Urgency(kind) * (len(readmodel.SignalKinds()) + 1)
	if kind == readmodel.KindBrings && signal != nil {
		rank += readmodel.SignalRank(signal.Kind)
	}
	return rank
}

// attentionEntries merges the components and the tree's items the
// summary names, most urgent first (a component before a tree item of the
// same rank), the first limit of them, and how many more components and
// tree items need attention.
func attentionEntries(s readmodel.Summary, limit int) (out []attentionEntry, moreComponents, moreTree int) {
	c, t := 0, 0
	for len(out) < limit && (c < len(s.Attention) || t < len(s.TreeAttention)) {
		var e attentionEntry
		if c < len(s.Attention) {
			e.Component = &s.Attention[c]
		}
		if t < len(s.TreeAttention) {
			tree := attentionEntry{Tree: &s.TreeAttention[t]}
			if e.Component == nil || entryRank(tree) < entryRank(e) {
				e = tree
			}
		}
		if e.Component != nil {
			c++
		} else {
			t++
		}
		out = append(out, e)
	}
	return out, s.AttentionMore + len(s.Attention) - c, s.TreeAttentionMore + len(s.TreeAttention) - t
}

// treeEntrySubject is a tree item's package and version: "debug 2.6.9".
func treeEntrySubject(a readmodel.TreeAttentionItem) string {
	return a.Name + " " + a.Version
}

// treeEntryProblem is a tree item's problem after its subject: "in the
// dependencies, known malicious package: remove it (MAL-2025-1)"; a
// look-back finding is readmodel.ExposureSentence whole.
func treeEntryProblem(a readmodel.TreeAttentionItem) string {
	if a.Kind == readmodel.KindExposed && a.InstalledAt != nil && a.RemovedAt != nil {
		return readmodel.ExposureSentence(a.Name, a.Version, a.AdvisoryID, a.Malicious, *a.InstalledAt, *a.RemovedAt)
	}
	return readmodel.TreeItemProblem(a)
}

// siteTreeKindPath is a site's Packages page ("" the local site's) with
// the filter that lists a kind's packages; the look-back's are on each
// package's page, under its history.
func siteTreeKindPath(site string, kind readmodel.AttentionKind) string {
	switch kind {
	case readmodel.KindMalicious:
		return SitePackagesPath(site, readmodel.PackagesMalicious, "", "", "")
	case readmodel.KindKnownExploited:
		return SitePackagesPath(site, readmodel.PackagesExploited, "", "", "")
	case readmodel.KindVulnerableNoFix, readmodel.KindVulnerable:
		return SitePackagesPath(site, readmodel.PackagesVulnerable, "", "", "")
	case readmodel.KindBrings:
		return SitePackagesPath(site, readmodel.PackagesBrings, "", "", "")
	}
	return sitePackagesBase(site)
}

// treeMoreText is the link after the named tree items.
func treeMoreText(n int) string {
	return "and " + countNoun(n, "more in the dependencies", "more in the dependencies")
}

// treeBadgeText is the Packages badge's words: "2 dependencies need
// attention".
func treeBadgeText(n int) string {
	return countNoun(n, readmodel.TreeBadgeOne, readmodel.TreeBadgeMany)
}

// treeCountLine is one of the dashboard's tree counts: its words and the
// Packages page's filter that lists them.
type treeCountLine struct {
	Kind readmodel.AttentionKind
	Text string
	Href string
}

// treeCountLines are the tree's counts the dashboard shows beside "212
// packages installed", most urgent first, the kinds with none left out.
func treeCountLines(c readmodel.TreeCounts) []treeCountLine {
	return siteTreeCountLines("", c)
}

// siteTreeCountLines is treeCountLines on a site ("" the local one).
func siteTreeCountLines(site string, c readmodel.TreeCounts) []treeCountLine {
	var out []treeCountLine
	for _, k := range readmodel.TreeAttentionKinds {
		if n := c.Of(k); n > 0 {
			out = append(out, treeCountLine{Kind: k, Text: readmodel.TreeKindText(k, n), Href: siteTreeKindPath(site, k)})
		}
	}
	return out
}

// The Packages badge's words (treeBadge's data-one and data-many).
const (
	treeBadgeOne  = readmodel.TreeBadgeOne
	treeBadgeMany = readmodel.TreeBadgeMany
)

// dependencyFixText is what clears a finding in a component's
// dependencies: "What clears it: update express 4.17.1 → 4.21.0"
// (readmodel.DependencyFixText).
func dependencyFixText(f readmodel.DependencyFinding) string {
	return "What clears it: " + readmodel.DependencyFixText(f)
}
