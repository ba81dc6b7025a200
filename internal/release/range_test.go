package release

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestRangeContains(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rng     string
		version string
		want    bool
	}{
		// The reason Range exists: pre-releases are placed by their position
		// in the version order, not left out.
		{"<2.4.0", "2.3.0-beta.1", true},
		{"<2.4.0", "2.4.0-beta.1", true},
		{"<2.4.0", "2.3.9", true},
		{"<2.4.0", "2.4.0", false},
		{"<2.4.0", "2.4.1-rc.1", false},
		{">=1.8.0", "1.8.0", true},
		{">=1.8.0", "1.8.0-rc.1", false},
		{">=1.8.0", "1.9.0-rc.1", true},
		{">=1.8.0", "1.7.9", false},
		{">1.8.0", "1.8.0", false},
		{">1.8.0", "1.8.1-alpha", true},
		{"<=1.8.0", "1.8.0", true},
		{"<=1.8.0", "1.8.1-alpha", false},
		{">=1.0.0, <2.4.0", "2.0.0-alpha", true},
		{">=1.0.0, <2.4.0", "1.0.0-alpha", false},
		{">=1.0.0, <2.4.0", "2.4.0", false},
		{">=1.0.0 <2.4.0", "2.3.0-beta.1", true},
		{">=1.0.0 <2.4.0", "0.9.0", false},
		// Pre-releases in the range itself compare as usual.
		{">=2.4.0-beta.2", "2.4.0-beta.1", false},
		{">=2.4.0-beta.2", "2.4.0-beta.10", true},
		{"<2.4.0-rc.1", "2.4.0-beta.3", true},
		// An x-range is a series from its first release up to, not
		// including, the pre-releases of the next series.
		{"1.2.x", "1.2.0", true},
		{"1.2.x", "1.2.7-rc.1", true},
		{"1.2.x", "1.2.99", true},
		{"1.2.x", "1.2.0-beta.1", false},
		{"1.2.x", "1.3.0-beta.1", false},
		{"1.2.x", "1.3.0", false},
		{"2", "2.9.0-rc.1", true},
		{"2", "3.0.0-rc.1", false},
		{"~1.2.3", "1.2.9-rc.1", true},
		{"~1.2.3", "1.3.0-rc.1", false},
		{"^1.2.3", "1.9.0-rc.1", true},
		{"^1.2.3", "2.0.0-rc.1", false},
		{"1.2.0 - 1.4.0", "1.4.0", true},
		{"1.2.0 - 1.4.0", "1.3.0-rc.1", true},
		{"1.2.0 - 1.4.0", "1.4.1", false},
		{"!=1.2.3", "1.2.3", false},
		{"!=1.2.3", "1.2.3-rc.1", true},
		{"=1.2.3", "1.2.3", true},
		{"=1.2.3", "1.2.3-rc.1", false},
		// Alternatives.
		{"<1.2.0 || >=1.4.0", "1.1.0-rc.1", true},
		{"<1.2.0 || >=1.4.0", "1.3.0", false},
		{"<1.2.0 || >=1.4.0", "1.4.0-beta", false},
		{"<1.2.0 || >=1.4.0", "1.4.0", true},
		{"1.2.x || 1.4.x", "1.4.2-rc.1", true},
		// Build metadata does not take part in the order.
		{"<=1.2.3", "1.2.3+build.9", true},
		{"*", "7.0.0-rc.1", true},
	}
	for _, tt := range tests {
		t.Run(tt.rng+" holds "+tt.version, func(t *testing.T) {
			t.Parallel()
			r, err := ParseRange(tt.rng)
			if err != nil {
				t.Fatalf("ParseRange(%q): %v", tt.rng, err)
			}
			v, err := ParseVersion(tt.version)
			if err != nil {
				t.Fatalf("ParseVersion(%q): %v", tt.version, err)
			}
			if got := r.Contains(v); got != tt.want {
				t.Errorf("%q.Contains(%q) = %v, want %v", tt.rng, tt.version, got, tt.want)
			}
		})
	}
}

// TestRangePartialVersions checks each operator with partial versions
// against the rule in docs/update-document.md: a partial version stands for
// every version with that prefix, from X.Y.0 (its pre-releases come before)
// up to, not including, the first pre-release of the next series.
func TestRangePartialVersions(t *testing.T) {
	t.Parallel()
	probes := []string{
		"0.0.0-0", "0.9.0", "1.9.9", "2.0.0-beta.1", "2.0.0", "2.3.9", "2.4.0-beta.1", "2.4.0", "2.4.7-rc.1", "2.4.7",
		"2.5.0-0", "2.5.0-beta.1", "2.5.0", "2.9.9", "3.0.0-0", "3.0.0-rc.1", "3.0.0", "4.0.0",
	}
	series24 := []string{"2.4.0", "2.4.7-rc.1", "2.4.7"}
	below24 := []string{"0.0.0-0", "0.9.0", "1.9.9", "2.0.0-beta.1", "2.0.0", "2.3.9", "2.4.0-beta.1"}
	above24 := []string{"2.5.0-0", "2.5.0-beta.1", "2.5.0", "2.9.9", "3.0.0-0", "3.0.0-rc.1", "3.0.0", "4.0.0"}
	series2 := []string{"2.0.0", "2.3.9", "2.4.0-beta.1", "2.4.0", "2.4.7-rc.1", "2.4.7", "2.5.0-0", "2.5.0-beta.1", "2.5.0", "2.9.9"}
	below2 := []string{"0.0.0-0", "0.9.0", "1.9.9", "2.0.0-beta.1"}
	above2 := []string{"3.0.0-0", "3.0.0-rc.1", "3.0.0", "4.0.0"}
	join := slices.Concat[[]string]

	tests := []struct {
		rng   string
		holds []string
	}{
		{"2.4", series24},
		{"=2.4", series24},
		{"2.4.x", series24},
		{"2.4.*", series24},
		{"v2.4", series24},
		{"~2.4", series24},
		{"<2.4", below24},
		{"<=2.4", join(below24, series24)},
		{"=<2.4", join(below24, series24)},
		{"<=2.4.x", join(below24, series24)},
		{">2.4", above24},
		{">2.4.x", above24},
		{">=2.4", join(series24, above24)},
		{"=>2.4", join(series24, above24)},
		{">= 2.4", join(series24, above24)},
		{"!=2.4", join(below24, above24)},
		{"^2.4", join(series24, []string{"2.5.0-0", "2.5.0-beta.1", "2.5.0", "2.9.9"})},
		{"2", series2},
		{"=2", series2},
		{"2.x", series2},
		{"2.x.x", series2},
		{"2.x.3", series2},
		{"~2", series2},
		{"^2", series2},
		{"<2", below2},
		{"<=2", join(below2, series2)},
		{">2", above2},
		{">=2", join(series2, above2)},
		{"!=2", join(below2, above2)},
		{"<=0", []string{"0.0.0-0", "0.9.0"}},
		{">0", []string{"1.9.9", "2.0.0-beta.1", "2.0.0", "2.3.9", "2.4.0-beta.1", "2.4.0", "2.4.7-rc.1", "2.4.7",
			"2.5.0-0", "2.5.0-beta.1", "2.5.0", "2.9.9", "3.0.0-0", "3.0.0-rc.1", "3.0.0", "4.0.0"}},
		{"^0", []string{"0.9.0"}},
		{"^0.9", []string{"0.9.0"}},
		{"~0.0.0", nil},
		// Hyphen ranges: the lower end as >=, the upper end as <=.
		{"2.4 - 2", join(series24, []string{"2.5.0-0", "2.5.0-beta.1", "2.5.0", "2.9.9"})},
		{"2.0 - 2.4", []string{"2.0.0", "2.3.9", "2.4.0-beta.1", "2.4.0", "2.4.7-rc.1", "2.4.7"}},
		{"* - 2.4", join(below24, series24)},
		// Every version, pre-releases included.
		{"*", probes},
		{"x", probes},
		{"<=*", probes},
		{">=*", probes},
		{"^*", probes},
		{"~*", probes},
		// Several comparisons and alternatives combine as usual.
		{">=2 <=2.4", []string{"2.0.0", "2.3.9", "2.4.0-beta.1", "2.4.0", "2.4.7-rc.1", "2.4.7"}},
		{"<2.4 || >2.4", join(below24, above24)},
		{">=2 !=2.4 <3", []string{"2.0.0", "2.3.9", "2.4.0-beta.1", "2.5.0-0", "2.5.0-beta.1", "2.5.0", "2.9.9", "3.0.0-0", "3.0.0-rc.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.rng, func(t *testing.T) {
			t.Parallel()
			r, err := ParseRange(tt.rng)
			if err != nil {
				t.Fatalf("ParseRange(%q): %v", tt.rng, err)
			}
			for _, p := range probes {
				v, err := ParseVersion(p)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := r.Contains(v), slices.Contains(tt.holds, p); got != want {
					t.Errorf("%q.Contains(%q) = %v, want %v", tt.rng, p, got, want)
				}
			}
		})
	}
}

// The table of partial versions in docs/update-document.md is what
// publishers read: every range in it, and the range it is said to be the
// same as, must hold exactly the versions the table says.
func TestGuidePartialVersionTable(t *testing.T) {
	t.Parallel()
	guide, err := os.ReadFile(filepath.Join("..", "..", "docs", "update-document.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(guide), "\n### Partial versions\n")
	if !ok {
		t.Fatal("docs/update-document.md has no section Partial versions")
	}
	section, _, _ = strings.Cut(section, "\n#")
	code := regexp.MustCompile("`([^`]+)`")
	var header []string
	rows := 0
	for line := range strings.Lines(section) {
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|--") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), " | ")
		for i := range cells {
			cells[i] = strings.ReplaceAll(strings.TrimSpace(cells[i]), `\|`, "|")
		}
		if header == nil {
			header = cells
			continue
		}
		if len(cells) != len(header) {
			t.Fatalf("row %q has %d cells, the header %d", line, len(cells), len(header))
		}
		rows++
		var ranges []string
		for _, cell := range cells[:2] {
			for _, m := range code.FindAllStringSubmatch(cell, -1) {
				ranges = append(ranges, m[1])
			}
		}
		for col := 2; col < len(cells); col++ {
			m := code.FindStringSubmatch(header[col])
			if m == nil {
				t.Fatalf("column %q names no version", header[col])
			}
			v, err := ParseVersion(m[1])
			if err != nil {
				t.Fatal(err)
			}
			want := cells[col] == "yes"
			for _, rng := range ranges {
				r, err := ParseRange(rng)
				if err != nil {
					t.Errorf("ParseRange(%q): %v", rng, err)
					continue
				}
				if got := r.Contains(v); got != want {
					t.Errorf("the guide says %q holds %s: %q, Contains says %v", rng, v, cells[col], got)
				}
			}
		}
	}
	if rows < 5 {
		t.Errorf("found %d rows in the table of partial versions", rows)
	}
}

// At the largest number the next series carries into the number before
// ("<=1.18446744073709551615" stops before 2.0.0-0); with no number before,
// the range has no upper end.
func TestRangeLargestNumbers(t *testing.T) {
	t.Parallel()
	const largest = "18446744073709551615"
	tests := []struct {
		rng, version string
		want         bool
	}{
		{"<=" + largest, largest + ".7.0", true},
		{"<=1." + largest, "2.0.0-0", false},
		{"<=1." + largest, "1." + largest + ".9", true},
		{">1." + largest, "2.0.0-0", true},
		{"~1." + largest + ".0", "1." + largest + ".9", true},
		{"~1." + largest + ".0", "2.0.0-0", false},
		{"^" + largest + ".0.0", largest + "." + largest + "." + largest, true},
	}
	for _, tt := range tests {
		r, err := ParseRange(tt.rng)
		if err != nil {
			t.Fatalf("ParseRange(%q): %v", tt.rng, err)
		}
		v, err := ParseVersion(tt.version)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Contains(v); got != tt.want {
			t.Errorf("%q.Contains(%q) = %v, want %v", tt.rng, tt.version, got, tt.want)
		}
	}
}

func TestRangeZeroAndNil(t *testing.T) {
	t.Parallel()
	v, err := ParseVersion("1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if (Range{}).Contains(v) {
		t.Error("the zero Range holds a version")
	}
	r, err := ParseRange("*")
	if err != nil {
		t.Fatal(err)
	}
	if r.Contains(nil) {
		t.Error("a Range holds the nil version")
	}
}

func TestParseRangeString(t *testing.T) {
	t.Parallel()
	r, err := ParseRange("  >=1.0.0, <2.4.0\n")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.String(), ">=1.0.0, <2.4.0"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestParseRangeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string
	}{
		{"", `range "" is empty`},
		{"  ", `range "  " is empty`},
		{">>1.0.0", `">>1.0.0" is not a valid range`},
		{"1.2.3.4", `"1.2.3.4" is not a valid range`},
		{"latest", `"latest" is not a valid range`},
		{"<1.0.0 ||", `"<1.0.0 ||" is not a valid range`},
		{"||", `"||" is not a valid range`},
		{"<" + strings.Repeat("1", 600), `is not a valid range`},
		// A series has no pre-release or build metadata.
		{"2.4-beta", `"2.4-beta" is not a valid range: partial version "2.4-beta" has a pre-release or build metadata`},
		{"<=2.4-beta.1", `partial version "2.4-beta.1" has a pre-release or build metadata`},
		{">2.4.x-rc.1", `partial version "2.4.x-rc.1" has a pre-release or build metadata`},
		{"2+build.7", `partial version "2+build.7" has a pre-release or build metadata`},
		// Comparisons that can hold nothing are mistakes.
		{"<*", `"<*" is not a valid range: "<*" holds no version`},
		{">x", `">x" holds no version`},
		{"!=*", `"!=*" holds no version`},
		{">=1.0.0 || >18446744073709551615", `">18446744073709551615" holds no version`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			_, err := ParseRange(tt.in)
			if err == nil {
				t.Fatalf("ParseRange(%q) succeeded, want an error", tt.in)
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q, want ErrInvalid containing %q", err, tt.want)
			}
		})
	}
}
