// Package versionrange is the syntax of a version range as the update
// document writes one (docs/update-document.md, "Versions and ranges"):
// alternatives separated by "||", each a list of comparisons joined by
// commas or white space meaning "and", an operator possibly apart from its
// version (">= 1.2.0"), hyphen ranges ("1.2.0 - 1.4.0") and partial
// versions ("2.4", "2.4.x", "2", "*").
//
// It only reads: internal/release gives a range its meaning (which
// versions it holds) and views its words ("affects versions before
// 2.4.0"), both from the terms read here, so the two cannot read one range
// two ways. A full version in a range is read by npmver.Parse, the
// product's one reading of a version, so a range cannot hold a version the
// rest of the product would refuse; only partial versions ("2.4", "2.x"),
// which are the range's syntax and not versions, are read here. It imports
// nothing else of the application.
package versionrange

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/upcheck/upcheck/internal/npmver"
)

// The operators, each with one spelling; Parse maps the others ("=>",
// "=<", "~>", "=") to these.
const (
	Exact   = ""   // "1.2.3", "=1.2.3", and a partial version's whole series
	Not     = "!=" // outside the version or series
	AtLeast = ">=" // also "=>"
	Above   = ">"
	AtMost  = "<=" // also "=<"
	Below   = "<"
	Tilde   = "~" // also "~>"
	Caret   = "^"
	Hyphen  = "-" // "A - B": Version is A, To is B
)

// spellings are the operators as written, the two-character ones first so
// that ">=" is not read as ">" followed by "=".
var spellings = []struct{ written, op string }{
	{"!=", Not}, {">=", AtLeast}, {"=>", AtLeast}, {"<=", AtMost}, {"=<", AtMost}, {"~>", Tilde},
	{"=", Exact}, {">", Above}, {"<", Below}, {"~", Tilde}, {"^", Caret},
}

// Version is a version as a range writes it: full ("2.4.0",
// "2.4.0-beta.1") when N is 3, or partial, its first N numbers given
// ("2.4", "2.4.x" and "2.4.*" have N 2; "*" has N 0).
type Version struct {
	// Text is the version as written, without a leading "v".
	Text string
	N    int
	// Nums are the numbers given, as written (only the first N are set).
	Nums [3]string
	// Suffix is a full version's pre-release and build metadata, with its
	// leading "-" or "+"; a partial version has none.
	Suffix string
}

// Full reports whether all three numbers are given.
func (v Version) Full() bool { return v.N == 3 }

// Term is one comparison: an operator and a version, or a hyphen range
// from Version to To.
type Term struct {
	Op      string
	Version Version
	// To is the upper end of a hyphen range; the zero Version otherwise.
	To Version
}

// Parse reads a range into its alternatives, each a list of terms that
// must all hold. Surrounding white space is ignored; an empty range, an
// empty alternative and a word that is not a version are errors.
func Parse(text string) ([][]Term, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, fmt.Errorf("range is empty")
	}
	var alternatives [][]Term
	for group := range strings.SplitSeq(text, "||") {
		terms, err := parseGroup(group)
		if err != nil {
			return nil, err
		}
		alternatives = append(alternatives, terms)
	}
	return alternatives, nil
}

func parseGroup(group string) ([]Term, error) {
	words := strings.FieldsFunc(group, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	if len(words) == 0 {
		return nil, fmt.Errorf("an alternative is empty")
	}
	var terms []Term
	for i := 0; i < len(words); i++ {
		op, text, written := Exact, words[i], false
		for _, s := range spellings {
			if rest, ok := strings.CutPrefix(text, s.written); ok {
				op, text, written = s.op, rest, true
				break
			}
		}
		if text == "" && written && i+1 < len(words) {
			i++
			text = words[i]
		}
		v, err := ParseVersion(text)
		if err != nil {
			return nil, err
		}
		if !written && i+2 < len(words) && words[i+1] == "-" {
			to, err := ParseVersion(words[i+2])
			if err != nil {
				return nil, err
			}
			terms = append(terms, Term{Op: Hyphen, Version: v, To: to})
			i += 2
			continue
		}
		terms = append(terms, Term{Op: op, Version: v})
	}
	return terms, nil
}

// ParseVersion reads one version as a range writes it. A full version is
// npmver's to read: one npmver.Parse refuses ("01.2.3", "1.2.3-01") is
// refused here too. A number after a wildcard ("1.x.3") is ignored, as npm
// does: the series is 1.x. A partial version with a pre-release or build
// metadata ("2.4-beta") is refused: a series has none.
func ParseVersion(text string) (Version, error) {
	body := strings.TrimPrefix(text, "v")
	numbers, suffix := body, ""
	if i := strings.IndexAny(body, "-+"); i >= 0 {
		numbers, suffix = body[:i], body[i:]
	}
	parts := strings.Split(numbers, ".")
	if len(parts) > 3 {
		return Version{}, fmt.Errorf("%q is not a version", text)
	}
	v := Version{Text: body}
	wildcard := false
	for _, part := range parts {
		switch {
		case part == "x" || part == "X" || part == "*":
			wildcard = true
		case part == "" || strings.Trim(part, "0123456789") != "":
			return Version{}, fmt.Errorf("%q is not a version", text)
		case !wildcard:
			v.Nums[v.N] = part
			v.N++
		}
	}
	if v.N < 3 && suffix != "" {
		return Version{}, fmt.Errorf("partial version %q has a pre-release or build metadata", text)
	}
	if v.N == 3 {
		if _, err := npmver.Parse(body); err != nil {
			return Version{}, fmt.Errorf("%q is not a version: %w", body, err)
		}
		v.Suffix = suffix
	}
	return v, nil
}
