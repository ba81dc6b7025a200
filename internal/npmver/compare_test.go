package npmver

import (
	"slices"
	"testing"
)

// Compare sorts by SemVer precedence, not text: a pre-release before its
// release, 9 before 10, a cleaned "v" read as npm reads it, build
// metadata and unreadable versions last by text.
func TestCompare(t *testing.T) {
	t.Parallel()
	got := []string{"not-a-version", "10.0.0", "1.0.0+b", "9.0.0", "10.0.0-beta.1", "10.0.0-alpha", "v2.0.0", "1.0.0+a", "abc"}
	slices.SortFunc(got, Compare)
	want := []string{"1.0.0+a", "1.0.0+b", "v2.0.0", "9.0.0", "10.0.0-alpha", "10.0.0-beta.1", "10.0.0", "abc", "not-a-version"}
	if !slices.Equal(got, want) {
		t.Errorf("sorted: %v, want %v", got, want)
	}
	for _, c := range [][2]string{{"1.0.0", "1.0.0"}, {"x", "x"}} {
		if Compare(c[0], c[1]) != 0 {
			t.Errorf("Compare(%q, %q) != 0", c[0], c[1])
		}
	}
}
