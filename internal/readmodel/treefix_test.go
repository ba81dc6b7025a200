package readmodel

import "testing"

// Each fix of a tree finding is worded once, with its command and its
// components; the actions say what they clear; a fix that is not an
// action has no action words.
func TestTreeFixWords(t *testing.T) {
	t.Parallel()
	express := TreeFixUpdate{Component: "express", From: "4.17.1", To: "4.21.2"}
	sock := TreeFixUpdate{Component: "sock", From: "4.0.0", To: "4.2.0"}
	for _, c := range []struct {
		fix    TreeFix
		words  string
		action string
	}{
		{TreeFix{Kind: "in_range", Manager: "npm", Package: "qs"}, "in range: npm update qs", "Run npm update qs: clears 3 advisories"},
		{TreeFix{Kind: "in_range", Manager: "pnpm", Package: "qs"}, "in range: pnpm update qs", "Run pnpm update qs: clears 3 advisories"},
		{TreeFix{Kind: "component", Updates: []TreeFixUpdate{express}}, "update express 4.17.1 → 4.21.2",
			"Update express to 4.21.2: clears 3 advisories (2 in its dependencies)"},
		{TreeFix{Kind: "component", Updates: []TreeFixUpdate{express, sock}, Manager: "npm", Package: "send"},
			"update express 4.17.1 → 4.21.2 and sock 4.0.0 → 4.2.0, then npm update send",
			"Update express to 4.21.2 and sock to 4.2.0, then run npm update send: clears 3 advisories (2 in their dependencies)"},
		{TreeFix{Kind: "none_yet", Component: "sock", PinnedBy: "engine", PinnedByVersion: "6.0.2", Package: "ws", Range: "~8.11.0"},
			"no fix yet through sock: engine 6.0.2 requires ws ~8.11.0", ""},
		{TreeFix{Kind: "none_yet", Component: "sock", PinnedBy: "ws", Package: "ws"}, "no fix yet: no release of ws clears it", ""},
		{TreeFix{Kind: "no_fix"}, "no fixed version is published", ""},
		{TreeFix{Kind: "unknown", Package: "engine"}, "not worked out: the registry document of engine was not read", ""},
	} {
		if got := TreeFixText(c.fix); got != c.words {
			t.Errorf("TreeFixText(%+v) = %q, want %q", c.fix, got, c.words)
		}
		if got := TreeActionText(c.fix, 3, 2); got != c.action {
			t.Errorf("TreeActionText(%+v) = %q, want %q", c.fix, got, c.action)
		}
		if c.fix.Fixable() != (c.action != "") {
			t.Errorf("%s: fixable %v", c.fix.Kind, c.fix.Fixable())
		}
	}
	if got := TreeActionText(TreeFix{Kind: "component", Updates: []TreeFixUpdate{express}}, 1, 0); got != "Update express to 4.21.2: clears 1 advisory" {
		t.Errorf("one advisory on the component itself: %q", got)
	}
}
