package readmodel

import (
	"fmt"
	"strings"
)

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

// EventFleetFinding: the fleet digest, for a channel of the fleet: one
// event per tree finding (a package version and an advisory) naming the
// sites new to it in one planning (FleetFindingSentence words it), not
// one per site.
const EventFleetFinding EventType = "fleet.finding"

// FleetFindingSentence words a fleet digest: "debug 4.4.2 is malicious
// (MAL-2025-1) on 2 sites: blog, shop: remove it and treat secrets on
// these sites as exposed". sites are the names given (at most
// FleetSitesNamed); count is how many sites there are, more when the list
// was cut ("and 200 more").
func FleetFindingSentence(name, version, advisoryID string, malicious, knownExploited bool, fixedIn string, sites []string, count int) string {
	count = max(count, len(sites))
	on := fmt.Sprintf("%d sites", count)
	if count == 1 {
		on = "1 site"
	}
	list := SiteListText(sites, count)
	switch {
	case malicious:
		return fmt.Sprintf("%s %s is malicious (%s) on %s: %s: remove it and treat secrets on these sites as exposed",
			name, version, advisoryID, on, list)
	case knownExploited:
		return fmt.Sprintf("%s %s is affected by %s, exploited in the wild, on %s: %s%s", name, version, advisoryID, on, list,
			fixedText(fixedIn))
	}
	return fmt.Sprintf("%s %s is affected by %s on %s: %s%s", name, version, advisoryID, on, list, fixedText(fixedIn))
}

// SiteListText lists the sites named (the first FleetSitesNamed of a
// digest, already escaped) of count: "a, b, c", "a, b and 298 more".
func SiteListText(sites []string, count int) string {
	list := strings.Join(sites, ", ")
	if more := count - len(sites); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	return list
}
