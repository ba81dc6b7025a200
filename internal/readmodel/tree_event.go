package readmodel

import "fmt"

// EventTreeFinding: the tree's evaluation stored a new counted finding
// on an installed package (upcheck_tree_counted under
// UPCHECK_LOCKFILE_DEV): malicious, exploited in the wild or vulnerable
// (TreeFindingSentence words it). Once per package version and advisory.
const EventTreeFinding EventType = "tree.finding"

// TreeFindingSentence words a new tree finding: "debug 4.4.2, in the
// site's dependencies, is malicious (MAL-2025-1): remove it and treat
// secrets on this site as exposed"; one exploited in the wild or merely
// vulnerable names its advisory and, when one is known, its fixed
// version.
func TreeFindingSentence(name, version, advisoryID string, malicious, knownExploited bool, fixedIn string) string {
	switch {
	case malicious:
		return fmt.Sprintf("%s %s, in the site's dependencies, is malicious (%s): remove it and treat secrets on this site as exposed",
			name, version, advisoryID)
	case knownExploited:
		return fmt.Sprintf("%s %s, in the site's dependencies, is affected by %s, exploited in the wild%s", name, version, advisoryID,
			fixedText(fixedIn))
	}
	return fmt.Sprintf("%s %s, in the site's dependencies, is affected by %s%s", name, version, advisoryID, fixedText(fixedIn))
}

// fixedText is ": fixed in VERSION", or "" with none known.
func fixedText(fixedIn string) string {
	if fixedIn == "" {
		return ": no fixed version is published"
	}
	return ": fixed in " + fixedIn
}
