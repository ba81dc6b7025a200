// Package remedy decides what clears each finding on a site's installed
// tree (docs/npm.md, "What clears a finding"): a lockfile-only update
// when every dependent's range already admits a fixed version (in range),
// a component's release whose ranges admit one all along the path
// (through a component), or no release yet, with the package that pins
// it (none yet). It groups the findings by the action that clears them
// and ranks the actions by what each clears.
//
// It reads the tree (internal/tree) and the registry documents of the
// packages on the findings' paths (Document), and does no I/O: the check
// fetches the documents (Needs says which) and stores the fixes, and
// readmodel words them. It is its own package, not a part of internal/tree,
// because it reads version ranges (internal/release) and registry
// documents, which the tree's facts do not need.
package remedy

import (
	"github.com/Masterminds/semver/v3"

	"github.com/upcheck/upcheck/internal/npmver"
	"github.com/upcheck/upcheck/internal/tree"
)

// Kind is what clears a finding (Fix.Kind), worded by readmodel.FixText.
type Kind string

const (
	// KindNoFix: the advisory names no fixed version; nothing clears it.
	KindNoFix Kind = "no_fix"
	// KindInRange: every dependent's range admits a fixed release: a
	// lockfile-only update of Fix.Package with Fix.Manager's client.
	KindInRange Kind = "in_range"
	// KindComponent: Fix.Updates, each a component's lowest release above
	// the installed one whose ranges admit a fixed release all along the
	// path; with Fix.Package set, followed by an in-range update of it
	// (a component whose installed release admits the fix already).
	KindComponent Kind = "component"
	// KindNoneYet: no release of Fix.Component admits a fixed release:
	// Fix.PinnedBy at Fix.PinnedByVersion declares Fix.Range for
	// Fix.Package, which holds none that leads to a fix.
	KindNoneYet Kind = "none_yet"
	// KindUnknown: the registry document of Fix.Package was not read
	// (the check's cap, or the registry's refusal): not decided.
	KindUnknown Kind = "unknown"
)

// Kinds lists every Kind; archtest's TestEveryFixKindHasWords holds it to
// the constants above and to readmodel's words.
func Kinds() []Kind {
	return []Kind{KindNoFix, KindInRange, KindComponent, KindNoneYet, KindUnknown}
}

// Fixable reports whether k names an action that clears the finding.
func (k Kind) Fixable() bool { return k == KindInRange || k == KindComponent }

// Manager is the client whose command an in-range fix is worded with.
type Manager string

// The package managers whose lockfiles upcheck reads.
const (
	ManagerNPM  Manager = "npm"
	ManagerPNPM Manager = "pnpm"
)

// Finding is one advisory on one installed package instance.
type Finding struct {
	// Instance is the tree.Package.ID the advisory affects.
	Instance string
	Advisory string
	// Severity is the advisory's rank (readmodel.Severity.Rank: 4
	// critical to 0 unknown), for the order of the actions.
	Severity int
	// Fixed is the first fixed version of the advisory's range that
	// matched the installed version; "" when there is none.
	Fixed string
	// Affects, when set, says whether the advisory affects a version by
	// all of its ranges; nil: every version below Fixed.
	Affects func(version string) bool
}

// clears reports whether version is out of f's reach.
func (f *Finding) clears(fixed *semver.Version, version string) bool {
	v, err := npmver.Parse(version)
	if err != nil || v.LessThan(fixed) {
		return false
	}
	return f.Affects == nil || !f.Affects(version)
}

// Fix is what clears one finding: a kind and the arguments it is worded
// with, never words. It is stored as this JSON (tree_fixes.fix), which
// readmodel.TreeFix reads.
type Fix struct {
	Kind Kind `json:"kind"`
	// Manager is the lockfile's client (KindInRange, and KindComponent
	// with Package).
	Manager Manager `json:"manager,omitempty"`
	// Package is the package to update in range (KindInRange,
	// KindComponent), the package pinned (KindNoneYet) or the package
	// whose document was not read (KindUnknown).
	Package string `json:"package,omitempty"`
	// Updates are the components to update (KindComponent), sorted by
	// component.
	Updates []Update `json:"updates,omitempty"`
	// Component is the component no release of which clears the finding
	// (KindNoneYet).
	Component string `json:"component,omitempty"`
	// PinnedBy, at PinnedByVersion, declares Range for Package
	// (KindNoneYet); PinnedBy is Package itself when the registry has no
	// fixed release of it.
	PinnedBy        string `json:"pinned_by,omitempty"`
	PinnedByVersion string `json:"pinned_by_version,omitempty"`
	Range           string `json:"range,omitempty"`
}

// Update is a component's update: from the installed release to the
// release that clears.
type Update struct {
	Component string `json:"component"`
	From      string `json:"from"`
	To        string `json:"to"`
}

// Input is what Decide reads.
type Input struct {
	Tree    *tree.Tree
	Manager Manager
	// Findings are the advisories on the tree's instances.
	Findings []Finding
	// Documents are the registry documents read, by package name
	// (Needs says which); a missing one leaves its findings KindUnknown.
	Documents map[string]*Document
}

// Decided is the fix of one finding.
type Decided struct {
	Finding Finding
	// Direct: the finding is on a direct dependency of the site (a
	// component itself), not in a component's dependencies.
	Direct bool
	Fix    Fix
}
