// Version ranges in words: a release's requires_core ("needs core 2.0.0 or
// newer") and an advisory's affected range ("affects versions before
// 2.4.0"), never the range as the publisher wrote it.
//
// A range is read by internal/versionrange, the grammar internal/release
// gives its meaning from, so the words and the meaning come from one
// reading: comparisons joined by commas or spaces mean "and", "||"
// separates alternatives, "A - B" is a hyphen range, and a partial version
// ("2.4", "2.4.x", "2") stands for its whole series. Ranges reach the pages
// only from documents updatedoc accepted; anything that does not read is
// quoted rather than guessed at.

package views

import (
	"strings"

	"github.com/upcheck/upcheck/internal/versionrange"
)

// RequiresCoreText words a release's requires_core: ">=2.0.0" is "needs
// core 2.0.0 or newer".
func RequiresCoreText(r string) string {
	w := CoreRangeWords(r)
	switch {
	case w == "any":
		return "runs on any core"
	case strings.HasPrefix(w, "the range "):
		return "needs a core in " + w
	}
	return "needs core " + w
}

// CoreRangeWords words a requires_core where the words "requires core"
// stand already (a table's column): "2.0.0 or newer", "any".
func CoreRangeWords(r string) string {
	w, ok := rangeWords(r)
	switch {
	case !ok:
		return "the range “" + strings.TrimSpace(r) + "”"
	case w == "any version":
		return "any"
	}
	return w
}

// AffectedText words an advisory's affected range: "<2.4.0" is "affects
// versions before 2.4.0".
func AffectedText(r string) string {
	w, ok := rangeWords(r)
	switch {
	case !ok:
		return "affects the versions in the range “" + strings.TrimSpace(r) + "”"
	case w == "any version":
		return "affects every version"
	}
	return "affects versions " + w
}

// rangeWords words a range after "needs core" or "affects versions";
// false when it does not follow the grammar.
func rangeWords(r string) (string, bool) {
	groups, err := versionrange.Parse(r)
	if err != nil {
		return "", false
	}
	alts := make([]string, 0, len(groups))
	for _, terms := range groups {
		w, ok := groupWords(terms)
		if !ok {
			return "", false
		}
		alts = append(alts, w)
	}
	return strings.Join(alts, ", or "), true
}

// groupWords words one alternative: its comparisons, "and"-ed.
func groupWords(terms []versionrange.Term) (string, bool) {
	// The usual pair, a lower and an upper bound, as one phrase.
	if len(terms) == 2 {
		lo, hi := terms[0], terms[1]
		if lo.Op == versionrange.Below || lo.Op == versionrange.AtMost {
			lo, hi = hi, lo
		}
		if (lo.Op == versionrange.AtLeast || lo.Op == versionrange.Above) &&
			(hi.Op == versionrange.Below || hi.Op == versionrange.AtMost) {
			return pairWords(lo, hi), true
		}
	}
	parts := make([]string, 0, len(terms))
	for _, t := range terms {
		w, ok := comparisonWords(t)
		if !ok {
			return "", false
		}
		parts = append(parts, w)
	}
	return strings.Join(parts, " and "), true
}

// pairWords words a lower and an upper bound together: "from 1.0.0 to
// before 2.4.0", "from 1.0.0 to 2.4.x", "newer than 1.0.0 and before
// 2.0.0".
func pairWords(lo, hi versionrange.Term) string {
	switch {
	case lo.Op == versionrange.AtLeast && hi.Op == versionrange.Below:
		return "from " + low(lo.Version) + " to before " + low(hi.Version)
	case lo.Op == versionrange.AtLeast:
		return "from " + low(lo.Version) + " to " + high(hi.Version)
	case hi.Op == versionrange.Below:
		return "newer than " + high(lo.Version) + " and before " + low(hi.Version)
	}
	return "newer than " + high(lo.Version) + " up to " + high(hi.Version)
}

// comparisonWords words one comparison on its own.
func comparisonWords(t versionrange.Term) (string, bool) {
	v := t.Version
	switch t.Op {
	case versionrange.Exact:
		if v.N == 0 {
			return "any version", true
		}
		return high(v), true
	case versionrange.AtLeast:
		if v.N == 0 {
			return "any version", true
		}
		return low(v) + " or newer", true
	case versionrange.Above:
		return "newer than " + high(v), true
	case versionrange.Below:
		return "before " + low(v), true
	case versionrange.AtMost:
		if v.N == 0 {
			return "any version", true
		}
		return high(v) + " or older", true
	case versionrange.Not:
		return "other than " + high(v), true
	case versionrange.Tilde:
		if !v.Full() {
			return high(v), true
		}
		return v.Text + " or a later " + series(v, 2) + " release", true
	case versionrange.Caret:
		return caretWords(v), true
	case versionrange.Hyphen:
		return "from " + low(v) + " to " + high(t.To), true
	}
	return "", false
}

// caretWords: the first number that is not zero stays fixed (^1.2.3 is
// 1.2.3 up to 2.0.0, ^0.2.3 up to 0.3.0, ^0.0.3 up to 0.0.4); with only
// zeros, the last number written does.
func caretWords(v versionrange.Version) string {
	if v.N == 0 {
		return "any version"
	}
	fixed := v.N - 1
	for i := range v.N {
		if strings.TrimLeft(v.Nums[i], "0") != "" {
			fixed = i
			break
		}
	}
	if fixed == 2 && v.Full() {
		return v.Text
	}
	return low(v) + " or a later " + series(v, fixed+1) + " release"
}

// low is the first version of what v names: 2.4.0 for "2.4".
func low(v versionrange.Version) string {
	if v.Full() {
		return v.Text
	}
	out := v.Nums
	for i := v.N; i < 3; i++ {
		out[i] = "0"
	}
	return strings.Join(out[:], ".")
}

// high names all of what v names: "2.4.x" for "2.4", the version itself
// when full.
func high(v versionrange.Version) string {
	if v.Full() {
		return v.Text
	}
	return series(v, v.N)
}

// series is "2.4.x" for the first n numbers (n < 3).
func series(v versionrange.Version, n int) string {
	if n == 0 {
		return "any version"
	}
	return strings.Join(v.Nums[:n], ".") + ".x"
}

// upperFirst starts a sentence: "needs core …" becomes "Needs core …".
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
