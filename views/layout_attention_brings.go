package views

import "github.com/upcheck/upcheck/internal/readmodel"

// bringsProblem words what the offered update brings, after the subject
// ("Blog 2.3.0 → 2.4.0"): its most pressing signal, which ranked it
// (readmodel.SignalRank: a new install script or an exotic source above
// a young dependency), worded by readmodel.SignalText.
func bringsProblem(a readmodel.AttentionItem) string {
	if a.Brings == nil {
		return "before you install it: the update brings something to check"
	}
	return "before you install it: " + cutText(readmodel.SignalText(*a.Brings), 160)
}

// bringsAlertText is the alert's sentence of what the offered updates
// bring (Summary.Brings), "" when none does: "1 offered update brings
// something to check before it is installed."
func bringsAlertText(n int) string {
	switch {
	case n == 0:
		return ""
	case n == 1:
		return "1 offered update brings something to check before it is installed."
	}
	return countNoun(n, "offered update brings", "offered updates bring") + " something to check before they are installed."
}
