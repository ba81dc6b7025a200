package readmodel

import (
	"strconv"
	"strings"
	"time"
)

// A registered site's history (docs/design.md "A site's pages"): its
// accepted pushes, read from their audit rows (AuditSitePush), and the
// push refused now, if any, in the words every page and answer use.

// SitePushRow is one accepted push of a registered site's lockfile, as
// its audit row (site.push) recorded it: when, the file, and what the
// push changed in the site's installed tree.
type SitePushRow struct {
	ID   int64     `json:"id"`
	At   time.Time `json:"at"`
	File string    `json:"file"`
	TreeChange
}

// TreeChange is what a write of a site's installed tree changed (a
// lockfile sync's, a push's), as its report answers it and a push's audit
// row keeps it, under the same names.
type TreeChange struct {
	// Unchanged: the stored tree was this one (the same bytes, or the
	// same tree): only the time of its reading was written.
	Unchanged bool `json:"unchanged"`
	// Packages added, changed and removed; versions (name and version)
	// installed that were not before, and no longer installed (the
	// history intervals the write opened and closed).
	Added       int `json:"added"`
	Changed     int `json:"changed"`
	Removed     int `json:"removed"`
	Installed   int `json:"installed"`
	Uninstalled int `json:"uninstalled"`
}

// SitePushChangeText is what an accepted push changed, in words, as the
// site's history says it: "unchanged: the same lockfile as the site's
// tree" or "2 packages added, 1 changed; 3 versions installed, 1 no
// longer installed"; a push that changed the file but no package says
// so.
func SitePushChangeText(p TreeChange) string {
	if p.Unchanged {
		return SitePushUnchangedText
	}
	var pkgs []string
	for _, c := range []struct {
		n    int
		verb string
	}{{p.Added, "added"}, {p.Changed, "changed"}, {p.Removed, "removed"}} {
		switch {
		case c.n == 0:
		case len(pkgs) == 0: // the first names the noun: "1 package changed, 2 removed"
			pkgs = append(pkgs, countText(int64(c.n), "package "+c.verb, "packages "+c.verb))
		default:
			pkgs = append(pkgs, strconv.Itoa(c.n)+" "+c.verb)
		}
	}
	var vers []string
	if p.Installed > 0 {
		vers = append(vers, countText(int64(p.Installed), "version installed", "versions installed"))
	}
	if p.Uninstalled > 0 {
		vers = append(vers, countText(int64(p.Uninstalled), "version no longer installed", "versions no longer installed"))
	}
	switch {
	case len(pkgs) == 0 && len(vers) == 0:
		return "a new file, the same packages"
	case len(vers) == 0:
		return strings.Join(pkgs, ", ")
	case len(pkgs) == 0:
		return strings.Join(vers, ", ")
	}
	return strings.Join(pkgs, ", ") + "; " + strings.Join(vers, ", ")
}

// SitePushUnchangedText is an accepted push that changed nothing.
const SitePushUnchangedText = "unchanged: the same lockfile as the last one accepted"

// SitePushRefusedText is the refused push that stands (the site's
// InputLockfile refusal), as the site's overview and history say it
// while it stands: when the last push was refused, the file and why (the
// lockfile reader's words, never a value from the file), since when
// pushes have been refused with that reason, and that the site's
// packages are those of the last push accepted.
func SitePushRefusedText(now time.Time, r InputRefusal) string {
	s := "The last push was refused " + AgoText(now, r.RefusedAt) + " (" + r.Path + "): " + strings.TrimSuffix(r.Error, ".") + "."
	if r.Since.Before(r.RefusedAt.Add(-time.Minute)) {
		s += " Pushes have been refused for this reason since " + TimeText(r.Since) + "."
	}
	return s + " The site’s packages are those of the last push accepted."
}

// SiteFleetRunsText says whose the check runs and feed syncs on a
// registered site's history are: the fleet's, one check reading every
// site.
const SiteFleetRunsText = "Checks and feed syncs are the whole fleet’s: each check reads every site’s packages at once, and each feed sync serves every site. Those since this site was registered are listed."
