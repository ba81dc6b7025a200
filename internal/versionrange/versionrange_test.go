package versionrange

import (
	"errors"
	"reflect"
	"testing"

	"github.com/upcheck/upcheck/internal/npmver"
)

func TestParse(t *testing.T) {
	t.Parallel()
	v := func(text string) Version {
		t.Helper()
		out, err := ParseVersion(text)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tc := range []struct {
		text string
		want [][]Term
	}{
		{"<2.4.0", [][]Term{{{Op: Below, Version: v("2.4.0")}}}},
		// Every spelling of an operator reads as its one name.
		{"=>1.0 =<2 ~>1.2.3 =1.4", [][]Term{{{Op: AtLeast, Version: v("1.0")}, {Op: AtMost, Version: v("2")},
			{Op: Tilde, Version: v("1.2.3")}, {Op: Exact, Version: v("1.4")}}}},
		// An operator apart from its version, commas, and alternatives.
		{">= 1.0.0, < 2.0.0 || ^3.1", [][]Term{
			{{Op: AtLeast, Version: v("1.0.0")}, {Op: Below, Version: v("2.0.0")}},
			{{Op: Caret, Version: v("3.1")}}}},
		{"1.2 - 1.4.x", [][]Term{{{Op: Hyphen, Version: v("1.2"), To: v("1.4.x")}}}},
		// With an operator written, "-" is not a hyphen range's.
		{"!=v2.0.0-beta.1", [][]Term{{{Op: Not, Version: v("2.0.0-beta.1")}}}},
	} {
		got, err := Parse(tc.text)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.text, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q) =\n%+v\nwant\n%+v", tc.text, got, tc.want)
		}
	}
}

func TestParseVersion(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]Version{
		"2.4.0-rc.1": {Text: "2.4.0-rc.1", N: 3, Nums: [3]string{"2", "4", "0"}, Suffix: "-rc.1"},
		"v2.4":       {Text: "2.4", N: 2, Nums: [3]string{"2", "4"}},
		"2.4.x":      {Text: "2.4.x", N: 2, Nums: [3]string{"2", "4"}},
		"1.x.3":      {Text: "1.x.3", N: 1, Nums: [3]string{"1"}}, // npm: numbers after a wildcard are ignored
		"*":          {Text: "*"},
	} {
		got, err := ParseVersion(text)
		if err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %+v, %v; want %+v", text, got, err, want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"", "  ", "||", ">=1.0 ||", "1.2.3.4", "2.4-beta", "a.b", ">=", "1..2"} {
		if got, err := Parse(text); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", text, got)
		}
	}
}

// A full version in a range is npmver's to read: what npmver.Parse refuses
// a range refuses, and with npmver's error.
func TestFullVersionsAreNpmversToRead(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"01.2.3", "1.02.3", "1.2.3-01", "1.2.3-", "1.2.3+", "18446744073709551616.0.0"} {
		if _, err := npmver.Parse(text); err == nil {
			t.Fatalf("npmver.Parse(%q) succeeded; the case is no test", text)
		}
		if got, err := ParseVersion(text); !errors.Is(err, npmver.ErrInvalid) {
			t.Errorf("ParseVersion(%q) = %+v, %v; want npmver's refusal", text, got, err)
		}
		if got, err := Parse(">=" + text); !errors.Is(err, npmver.ErrInvalid) {
			t.Errorf("Parse(%q) = %+v, %v; want npmver's refusal", ">="+text, got, err)
		}
	}
}
