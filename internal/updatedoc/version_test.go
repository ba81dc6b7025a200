package updatedoc

import (
	"errors"
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in string
		ok bool
	}{
		{"1.2.3", true},
		{"0.0.0", true},
		{"1.2.3-beta.1", true},
		{"1.2.3-rc.1+build.5", true},
		{"1.2.3+build.5", true},
		{"v1.2.3", false},
		{"v1.2", false},
		{"1.2", false},
		{"1", false},
		{"01.2.3", false},
		{"1.2.3-", false},
		{"1.2.3-01", false},
		{" 1.2.3", false},
		{"1.2.3 ", false},
		{"", false},
		{"abc", false},
		{"1.2.3.4", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			v, err := ParseVersion(tt.in)
			if tt.ok {
				if err != nil {
					t.Fatalf("ParseVersion(%q) = %v, want success", tt.in, err)
				}
				if v.Original() != tt.in {
					t.Errorf("Original() = %q, want %q", v.Original(), tt.in)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseVersion(%q) succeeded, want an error", tt.in)
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "is not a semantic version") {
				t.Errorf("error = %q, want ErrInvalid saying it is not a semantic version", err)
			}
		})
	}
}

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
		// Partial versions stand for their lowest release.
		{"<2.4", "2.4.0-beta.1", true},
		{"<2.4", "2.4.0", false},
		{">=2.4", "2.4.0-beta.1", false},
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
