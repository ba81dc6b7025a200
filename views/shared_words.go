// Words several pages use: counts with their noun, the stale age, a
// component's name, a problem's sentence. Each page's own sentences sit
// with the page (dashboard.go, detail.go, history.go, …).

package views

import (
	"strconv"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// staleAgeText is readmodel.StaleAge in words, "48 hours".
var staleAgeText = readmodel.DurationText(readmodel.StaleAge)

// countNoun is "1 source" or "3 sources".
func countNoun(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// pick is one or many by n.
func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// nameOr is a component's display name, its code when it has none.
func nameOr(name, code string) string {
	if name != "" {
		return name
	}
	return code
}

// problemText is a stored failure's sentence (readmodel.ProblemSentence).
// A failure of no known kind gets the general sentence there, "The last
// check of this source failed.", which every place that shows a problem
// has already said (the "Check failing" badge, the detail page's "The last
// check of this component failed."): here it points to the technical
// text instead of saying it again.
func problemText(kind string, args readmodel.FailureArgs) string {
	if s := readmodel.ProblemSentence(kind, args); s != readmodel.ProblemSentence("", readmodel.FailureArgs{}) {
		return s
	}
	return "Its cause was not recorded in plain words; the technical detail says what happened."
}
