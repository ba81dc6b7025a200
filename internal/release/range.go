package release

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/upcheck/upcheck/internal/versionrange"
)

// Range is a set of versions written in the range syntax of
// github.com/Masterminds/semver: comparisons (">=1.8.0", "<2.4.0"), several
// of them joined by commas or spaces meaning "and" (">=1.0.0, <2.4.0"),
// alternatives separated by "||", x-ranges ("1.2.x", "1.2", "2", "*"),
// tilde and caret ranges ("~1.2.3", "^1.2.3") and hyphen ranges
// ("1.2.0 - 1.4.0"). The library decides what is well written; what a range
// means is decided here, by npm's rules as docs/update-document.md states
// them, so that it does not hang on one library version's reading of
// partial versions.
//
// A partial version stands for every version with that prefix (npm's
// x-ranges): "2.4", "=2.4" and "2.4.x" hold 2.4.0 up to, not including, the
// first pre-release of 2.5.0, so "<=2.4" holds 2.4.7, ">2.4" starts at
// 2.5.0-0, "<2.4" stops before 2.4.0, ">=2.4" starts at 2.4.0 and "!=2.4"
// holds everything outside the series. A partial version with a pre-release
// or build metadata ("2.4-beta") is refused, and so are "<*", ">*" and
// "!=*", which hold no version.
//
// Unlike npm's and the library's default, pre-release versions are placed
// by their position in the version order instead of being left out: an
// installed 2.3.0-beta.1 is inside "<2.4.0", and so is 2.4.0-beta.1, since
// both come before 2.4.0. Leaving them out would report a site running a
// vulnerable beta as unaffected. So the pre-releases of 2.4.0 come before
// the series "2.4" (they are in "<2.4", not in "2.4.x"), and those of 2.5.0
// come after it (in ">2.4", not in "<=2.4").
//
// The zero Range holds no version. A Range is safe for concurrent use.
type Range struct {
	text string
	// alternatives are the groups separated by "||": a version is in the
	// range when it is inside every interval of one of them.
	alternatives [][]interval
}

// interval is one comparison compiled to a stretch of the version order,
// from lo to hi, each end included or not; a nil end means no bound on that
// side. outside turns it into its complement, for "!=".
type interval struct {
	lo, hi         *semver.Version
	loIncl, hiIncl bool
	outside        bool
}

func (iv interval) contains(v *semver.Version) bool {
	in := true
	if iv.lo != nil {
		c := v.Compare(iv.lo)
		in = c > 0 || c == 0 && iv.loIncl
	}
	if in && iv.hi != nil {
		c := v.Compare(iv.hi)
		in = c < 0 || c == 0 && iv.hiIncl
	}
	return in != iv.outside
}

// ParseRange parses a range; surrounding white space is ignored and an empty
// range is refused, because an empty "affected" or "requires_core" is far
// more likely a publisher's mistake than a deliberate "every version".
func ParseRange(s string) (Range, error) {
	text := strings.TrimSpace(s)
	if text == "" {
		return Range{}, invalidf(nil, "range %q is empty", s)
	}
	// The library's parser is the grammar (and bounds the length and the
	// number of alternatives); its Check is not used, see the type's
	// comment.
	if _, err := semver.NewConstraint(text); err != nil {
		return Range{}, invalidf(err, "%q is not a valid range: %v", s, err)
	}
	groups, err := versionrange.Parse(text)
	if err != nil {
		return Range{}, invalidf(err, "%q is not a valid range: %v", s, err)
	}
	alternatives := make([][]interval, 0, len(groups))
	for _, terms := range groups {
		ivs, err := compileGroup(terms)
		if err != nil {
			return Range{}, invalidf(err, "%q is not a valid range: %v", s, err)
		}
		alternatives = append(alternatives, ivs)
	}
	return Range{text: text, alternatives: alternatives}, nil
}

// Contains reports whether v is in the range. A nil version or the zero
// Range never match.
func (r Range) Contains(v *semver.Version) bool {
	if v == nil {
		return false
	}
	for _, group := range r.alternatives {
		in := true
		for _, iv := range group {
			if !iv.contains(v) {
				in = false
				break
			}
		}
		if in {
			return true
		}
	}
	return false
}

// String returns the range as it was written, without surrounding space.
func (r Range) String() string {
	return r.text
}

// compileGroup compiles one alternative, which the library has already
// accepted, read by versionrange: every interval must hold. "A - B" is
// ">=A <=B", partial versions included: "1.2 - 1.4" holds 1.4.9.
func compileGroup(terms []versionrange.Term) ([]interval, error) {
	ivs := make([]interval, 0, len(terms))
	for _, t := range terms {
		if t.Op == versionrange.Hyphen {
			lo, err := compileComparison(versionrange.AtLeast, t.Version)
			if err != nil {
				return nil, err
			}
			hi, err := compileComparison(versionrange.AtMost, t.To)
			if err != nil {
				return nil, err
			}
			ivs = append(ivs, lo, hi)
			continue
		}
		iv, err := compileComparison(t.Op, t.Version)
		if err != nil {
			return nil, err
		}
		ivs = append(ivs, iv)
	}
	return ivs, nil
}

// compileComparison turns one operator and version into an interval.
func compileComparison(op string, written versionrange.Version) (interval, error) {
	rv, err := numbersOf(written)
	if err != nil {
		return interval{}, err
	}
	empty := fmt.Errorf("%q holds no version", op+written.Text)
	switch op {
	case versionrange.Exact:
		return rv.series(), nil
	case versionrange.Not:
		iv := rv.series()
		if iv.lo == nil && iv.hi == nil {
			return interval{}, empty
		}
		iv.outside = true
		return iv, nil
	case versionrange.Below:
		if rv.full != nil {
			return interval{hi: rv.full}, nil
		}
		if rv.n == 0 {
			return interval{}, empty
		}
		return interval{hi: rv.first()}, nil
	case versionrange.AtMost:
		if rv.full != nil {
			return interval{hi: rv.full, hiIncl: true}, nil
		}
		return interval{hi: rv.next()}, nil
	case versionrange.Above:
		if rv.full != nil {
			return interval{lo: rv.full}, nil
		}
		next := rv.next()
		if next == nil {
			return interval{}, empty
		}
		return interval{lo: next, loIncl: true}, nil
	case versionrange.AtLeast:
		if rv.full != nil {
			return interval{lo: rv.full, loIncl: true}, nil
		}
		return interval{lo: rv.first(), loIncl: true}, nil
	case versionrange.Tilde:
		// ~1.2.3 is >=1.2.3 <1.3.0-0; ~1.2 and ~1 are the x-ranges 1.2.x
		// and 1.x.
		if rv.full == nil {
			return rv.series(), nil
		}
		return interval{lo: rv.full, loIncl: true, hi: bump(rv.nums, 1)}, nil
	case versionrange.Caret:
		// The first number that is not zero stays fixed: ^1.2.3 is <2.0.0-0,
		// ^0.2.3 is <0.3.0-0, ^0.0.3 is <0.0.4-0. With only zeros the last
		// number written stays fixed: ^0.0 is <0.1.0-0, ^0 is <1.0.0-0.
		if rv.n == 0 {
			return interval{}, nil
		}
		fixed := rv.n - 1
		for i := range rv.n {
			if rv.nums[i] != 0 {
				fixed = i
				break
			}
		}
		lo := rv.full
		if lo == nil {
			lo = rv.first()
		}
		return interval{lo: lo, loIncl: true, hi: bump(rv.nums, fixed)}, nil
	}
	return interval{}, fmt.Errorf("unknown operator %q", op)
}

// rangeVersion is a version as written in a range: a full version (full is
// set), or a partial one of which only the first n numbers are given ("2.4",
// "2", "2.4.x", "*").
type rangeVersion struct {
	full *semver.Version
	n    int
	nums [3]uint64
}

// numbersOf gives a version as a range wrote it its numbers, and a full
// one its semver value.
func numbersOf(w versionrange.Version) (rangeVersion, error) {
	rv := rangeVersion{n: w.N}
	for i := range w.N {
		n, err := strconv.ParseUint(w.Nums[i], 10, 64)
		if err != nil {
			return rv, fmt.Errorf("%q is not a version", w.Text)
		}
		rv.nums[i] = n
	}
	if !w.Full() {
		return rv, nil
	}
	v, err := ParseVersion(w.Text)
	if err != nil {
		return rv, fmt.Errorf("%q is not a version: %w", w.Text, err)
	}
	rv.full = v
	return rv, nil
}

// series is the interval of every version rv stands for: the version
// itself, or, for a partial one, first() up to, not including, next().
func (rv rangeVersion) series() interval {
	if rv.full != nil {
		return interval{lo: rv.full, loIncl: true, hi: rv.full, hiIncl: true}
	}
	return interval{lo: rv.first(), loIncl: true, hi: rv.next()}
}

// first is the lowest release of the series a partial version names (2.4.0
// for "2.4"); nil for "*", whose series has no lower end. The pre-releases
// of 2.4.0 come before it, so they are not in the series.
func (rv rangeVersion) first() *semver.Version {
	if rv.n == 0 {
		return nil
	}
	return semver.New(rv.nums[0], rv.nums[1], rv.nums[2], "", "")
}

// next is the lowest version after the series a partial version names
// (2.5.0-0 for "2.4", 3.0.0-0 for "2"); nil when there is none.
func (rv rangeVersion) next() *semver.Version {
	return bump(rv.nums, rv.n-1)
}

// bump returns the lowest version above every version whose numbers up to
// position i are nums': position i plus one (carrying into the one before
// at the maximum), the later numbers zero, and the pre-release "0", the
// lowest there is. nil when i < 0 or there is nothing above.
func bump(nums [3]uint64, i int) *semver.Version {
	for ; i >= 0; i-- {
		if nums[i] < math.MaxUint64 {
			nums[i]++
			for j := i + 1; j < len(nums); j++ {
				nums[j] = 0
			}
			return semver.New(nums[0], nums[1], nums[2], "0", "")
		}
	}
	return nil
}
