package readmodel

import (
	"fmt"
	"time"
)

// DevMode is how the findings on packages installed only for development
// are shown and counted (UPCHECK_LOCKFILE_DEV; docs/feeds.md "Development
// packages"): the argument of upcheck_tree_counted and upcheck_tree_shown,
// the one SQL definition of what a tree finding counts for. A malicious
// package is counted wherever it sits, whatever the mode.
type DevMode string

// The dev modes.
const (
	// DevSeparate: shown apart, not counted (the default).
	DevSeparate DevMode = "separate"
	// DevInclude: shown and counted like the rest.
	DevInclude DevMode = "include"
	// DevOmit: neither shown nor counted.
	DevOmit DevMode = "omit"
)

// DevModes are the dev modes, the default first.
var DevModes = []DevMode{DevSeparate, DevInclude, DevOmit}

// Valid reports whether m is one of DevModes.
func (m DevMode) Valid() bool { return m == DevSeparate || m == DevInclude || m == DevOmit }

// KindExposed: the site had installed a version that an advisory (a
// malicious-package record, or one exploited in the wild) names, and no
// longer has it: the look-back (tree_exposures; ExposureSentence). Its SQL
// twin is tree_exposure_state.kind.
const KindExposed AttentionKind = "exposed"

// EventTreeExposed: the look-back found that the site had installed a
// version an advisory names as malicious or exploited in the wild
// (ExposureSentence words it).
const EventTreeExposed EventType = "tree.exposed"

// AuditTreeExposed: the look-back found an exposure (detail: the package,
// the version, the advisory, the interval).
const AuditTreeExposed AuditAction = "tree.exposed"

// ExposureSentence says a look-back finding, once for every page, message
// and log: "debug 4.4.2 (malicious) was installed from 8 Sep 2026 13:16 to
// 8 Sep 2026 15:40 UTC: treat secrets on this site as exposed". An
// advisory exploited in the wild names its id and asks for a look at what
// happened while it was installed.
func ExposureSentence(name, version, advisoryID string, malicious bool, installed, removed time.Time) string {
	when := "from " + exposureTime(installed) + " to " + exposureTime(removed) + " UTC"
	if malicious {
		return fmt.Sprintf("%s %s (malicious) was installed %s: treat secrets on this site as exposed", name, version, when)
	}
	return fmt.Sprintf("%s %s (%s, exploited in the wild) was installed %s: look for signs that it was exploited while it was",
		name, version, advisoryID, when)
}

// exposureTime is "8 Sep 2026 13:16", in UTC.
func exposureTime(t time.Time) string { return t.UTC().Format("2 Jan 2006 15:04") }
