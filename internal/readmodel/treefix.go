package readmodel

import (
	"fmt"
	"strings"
)

// TreeFix is what clears a finding on the installed tree, as the check
// stores it (remedy.Fix's JSON: tree_fixes.fix): a kind and its
// arguments, worded by TreeFixText and TreeActionText when read. Kind is
// one of remedy.Kinds (archtest's TestEveryFixKindHasWords holds the two
// together).
type TreeFix struct {
	Kind            string          `json:"kind"`
	Manager         string          `json:"manager,omitempty"`
	Package         string          `json:"package,omitempty"`
	Updates         []TreeFixUpdate `json:"updates,omitempty"`
	Component       string          `json:"component,omitempty"`
	PinnedBy        string          `json:"pinned_by,omitempty"`
	PinnedByVersion string          `json:"pinned_by_version,omitempty"`
	Range           string          `json:"range,omitempty"`
}

// TreeFixUpdate is a component's update that clears a finding.
type TreeFixUpdate struct {
	Component string `json:"component"`
	From      string `json:"from"`
	To        string `json:"to"`
}

// Fixable reports whether the fix names an action that clears the
// finding: no other finding is called fixable.
func (f TreeFix) Fixable() bool { return f.Kind == "in_range" || f.Kind == "component" }

// command is the lockfile-only update of pkg with the lockfile's client.
func (f TreeFix) command() string {
	if f.Manager == "pnpm" {
		return "pnpm update " + f.Package
	}
	return "npm update " + f.Package
}

// updates words f's component updates: "express 4.17.1 → 4.21.0 and
// sock 4.0.0 → 4.2.0".
func (f TreeFix) updates(from bool) string {
	parts := make([]string, len(f.Updates))
	for i, u := range f.Updates {
		if from {
			parts[i] = u.Component + " " + u.From + " → " + u.To
		} else {
			parts[i] = u.Component + " to " + u.To
		}
	}
	return strings.Join(parts, " and ")
}

// TreeFixText words what clears one finding, as every page, the API and
// the messages say it: "in range: npm update qs", "update express 4.17.1
// → 4.21.0", "update express 4.17.1 → 4.21.0, then npm update send", "no
// fix yet through sock: sock 4.1.0 requires engine ~6.0.0", "no fix yet:
// no release of ws clears it", "no fixed version is published", "not
// worked out: the registry document of engine was not read". "" for a kind
// it does not know.
func TreeFixText(f TreeFix) string {
	switch f.Kind {
	case "no_fix":
		return "no fixed version is published"
	case "in_range":
		return "in range: " + f.command()
	case "component":
		s := "update " + f.updates(true)
		if f.Package != "" {
			s += ", then " + f.command()
		}
		return s
	case "none_yet":
		if f.PinnedBy == f.Package {
			return "no fix yet: no release of " + f.Package + " clears it"
		}
		return fmt.Sprintf("no fix yet through %s: %s %s requires %s %s", f.Component, f.PinnedBy, f.PinnedByVersion, f.Package, f.Range)
	case "unknown":
		if f.Package == "" {
			return "not worked out"
		}
		return "not worked out: the registry document of " + f.Package + " was not read"
	}
	return ""
}

// TreeActionText words one action and what it clears, as the actions are
// listed: "Update express to 4.21.0: clears 3 advisories (2 in its
// dependencies)", "Run npm update qs: clears 1 advisory". "" for a fix
// that is not an action (TreeFix.Fixable).
func TreeActionText(f TreeFix, advisories, inDependencies int) string {
	var head string
	switch f.Kind {
	case "in_range":
		head = "Run " + f.command()
	case "component":
		head = "Update " + f.updates(false)
		if f.Package != "" {
			head += ", then run " + f.command()
		}
	default:
		return ""
	}
	s := head + ": clears " + countText(int64(advisories), "advisory", "advisories")
	if inDependencies > 0 && f.Kind == "component" {
		whose := "its"
		if len(f.Updates) > 1 {
			whose = "their"
		}
		s += fmt.Sprintf(" (%d in %s dependencies)", inDependencies, whose)
	}
	return s
}
