// Version ranges in words: a release's requires_core ("needs core 2.0.0 or
// newer") and an advisory's affected range ("affects versions before
// 2.4.0"), never the range as the publisher wrote it.
//
// The words follow the grammar of docs/update-document.md ("Versions and
// ranges"), read the way internal/updatedoc's range parser reads it:
// comparisons joined by commas or spaces mean "and", "||" separates
// alternatives, an operator may stand apart from its version, "A - B" is
// a hyphen range, and a partial version ("2.4", "2.4.x", "2") stands for
// its whole series. views may not import updatedoc (TestImports), whose
// Range keeps its structure to itself, so this file reads the text again;
// ranges reach the pages only from documents updatedoc accepted, and
// anything this file does not recognise is quoted rather than guessed at.

package views

import (
	"strings"
	"unicode"
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
	r = strings.TrimSpace(r)
	if r == "" {
		return "", false
	}
	var alts []string
	for alt := range strings.SplitSeq(r, "||") {
		w, ok := groupWords(alt)
		if !ok {
			return "", false
		}
		alts = append(alts, w)
	}
	return strings.Join(alts, ", or "), true
}

// comparison is one operator and the version it applies to.
type comparison struct {
	op string
	v  rangeVer
}

// operators as the range grammar spells them, longest first.
var rangeOperators = []string{"!=", ">=", "=>", "<=", "=<", "~>", "=", ">", "<", "~", "^"}

// groupWords words one alternative: its comparisons, "and"-ed.
func groupWords(group string) (string, bool) {
	words := strings.FieldsFunc(group, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	if len(words) == 0 {
		return "", false
	}
	var cs []comparison
	var parts []string
	for i := 0; i < len(words); i++ {
		op, text := "", words[i]
		for _, o := range rangeOperators {
			if strings.HasPrefix(text, o) {
				op, text = o, text[len(o):]
				break
			}
		}
		if text == "" && op != "" && i+1 < len(words) {
			i++
			text = words[i]
		}
		v, ok := parseRangeVer(text)
		if !ok {
			return "", false
		}
		if op == "" && i+2 < len(words) && words[i+1] == "-" {
			hi, ok := parseRangeVer(words[i+2])
			if !ok {
				return "", false
			}
			parts = append(parts, "from "+v.low()+" to "+hi.high())
			i += 2
			continue
		}
		cs = append(cs, comparison{normalOp(op), v})
	}
	// The usual pair, a lower and an upper bound, as one phrase.
	if len(cs) == 2 && len(parts) == 0 {
		lo, hi := cs[0], cs[1]
		if lo.op == "<" || lo.op == "<=" {
			lo, hi = hi, lo
		}
		if (lo.op == ">=" || lo.op == ">") && (hi.op == "<" || hi.op == "<=") {
			return pairWords(lo, hi), true
		}
	}
	for _, c := range cs {
		w, ok := comparisonWords(c)
		if !ok {
			return "", false
		}
		parts = append(parts, w)
	}
	return strings.Join(parts, " and "), true
}

// normalOp maps the spellings the grammar allows to one each.
func normalOp(op string) string {
	switch op {
	case "=>":
		return ">="
	case "=<":
		return "<="
	case "~>":
		return "~"
	case "=":
		return ""
	}
	return op
}

// pairWords words a lower and an upper bound together: "from 1.0.0 to
// before 2.4.0", "from 1.0.0 to 2.4.x", "newer than 1.0.0 and before
// 2.0.0".
func pairWords(lo, hi comparison) string {
	switch {
	case lo.op == ">=" && hi.op == "<":
		return "from " + lo.v.low() + " to before " + hi.v.low()
	case lo.op == ">=":
		return "from " + lo.v.low() + " to " + hi.v.high()
	case hi.op == "<":
		return "newer than " + lo.v.high() + " and before " + hi.v.low()
	}
	return "newer than " + lo.v.high() + " up to " + hi.v.high()
}

// comparisonWords words one comparison on its own.
func comparisonWords(c comparison) (string, bool) {
	v := c.v
	switch c.op {
	case "":
		if v.n == 0 {
			return "any version", true
		}
		return v.high(), true
	case ">=":
		if v.n == 0 {
			return "any version", true
		}
		return v.low() + " or newer", true
	case ">":
		return "newer than " + v.high(), true
	case "<":
		return "before " + v.low(), true
	case "<=":
		if v.n == 0 {
			return "any version", true
		}
		return v.high() + " or older", true
	case "!=":
		return "other than " + v.high(), true
	case "~":
		if !v.full() {
			return v.high(), true
		}
		return v.text + " or a later " + v.series(2) + " release", true
	case "^":
		return caretWords(v), true
	}
	return "", false
}

// caretWords: the first number that is not zero stays fixed (^1.2.3 is
// 1.2.3 up to 2.0.0, ^0.2.3 up to 0.3.0, ^0.0.3 up to 0.0.4); with only
// zeros, the last number written does.
func caretWords(v rangeVer) string {
	if v.n == 0 {
		return "any version"
	}
	fixed := v.n - 1
	for i := range v.n {
		if v.nums[i] != "0" {
			fixed = i
			break
		}
	}
	series := v.series(fixed + 1)
	if fixed == 2 && v.full() {
		return v.text
	}
	return v.low() + " or a later " + series + " release"
}

// rangeVer is a version as a range writes it: full ("2.4.0", "2.4.0-beta"),
// or partial, its first n numbers given ("2.4", "2.4.x", "2", "*").
type rangeVer struct {
	text string // the full version, without a leading "v"
	n    int
	nums [3]string
}

func (v rangeVer) full() bool { return v.n == 3 }

// low is the first version of what v names: 2.4.0 for "2.4".
func (v rangeVer) low() string {
	if v.full() {
		return v.text
	}
	out := v.nums
	for i := v.n; i < 3; i++ {
		out[i] = "0"
	}
	return strings.Join(out[:], ".")
}

// high names all of what v names: "2.4.x" for "2.4", the version itself
// when full.
func (v rangeVer) high() string {
	if v.full() {
		return v.text
	}
	return v.series(v.n)
}

// series is "2.4.x" for the first n numbers (n < 3).
func (v rangeVer) series(n int) string {
	if n == 0 {
		return "any version"
	}
	return strings.Join(v.nums[:n], ".") + ".x"
}

// parseRangeVer reads a version as the range grammar writes it.
func parseRangeVer(text string) (rangeVer, bool) {
	body := strings.TrimPrefix(text, "v")
	numbers, suffix := body, ""
	if i := strings.IndexAny(body, "-+"); i >= 0 {
		numbers, suffix = body[:i], body[i:]
	}
	parts := strings.Split(numbers, ".")
	if len(parts) > 3 {
		return rangeVer{}, false
	}
	var v rangeVer
	wildcard := false
	for _, part := range parts {
		switch {
		case part == "x" || part == "X" || part == "*":
			wildcard = true
		case part == "" || strings.Trim(part, "0123456789") != "":
			return rangeVer{}, false
		case !wildcard:
			v.nums[v.n] = part
			v.n++
		}
	}
	if v.n < 3 && suffix != "" {
		return rangeVer{}, false
	}
	v.text = body
	return v, true
}

// upperFirst starts a sentence: "needs core …" becomes "Needs core …".
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
