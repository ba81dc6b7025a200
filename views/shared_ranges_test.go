package views

import "testing"

// Every operator and form the update document allows
// (docs/update-document.md, "Versions and ranges") has words, and what the
// grammar does not allow is quoted, never guessed at.
func TestRangeWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, core, affected string }{
		{">=2.0.0", "needs core 2.0.0 or newer", "affects versions 2.0.0 or newer"},
		{"=>2.0.0", "needs core 2.0.0 or newer", ""},
		{">= 2.0.0", "needs core 2.0.0 or newer", ""},
		{">1.8.0", "needs core newer than 1.8.0", ""},
		{"<2.4.0", "", "affects versions before 2.4.0"},
		{"<=2.4.0", "", "affects versions 2.4.0 or older"},
		{"=<2.4.0", "", "affects versions 2.4.0 or older"},
		{"=2.4.0", "", "affects versions 2.4.0"},
		{"2.4.0", "needs core 2.4.0", ""},
		{"!=2.4.0", "", "affects versions other than 2.4.0"},
		{"v2.4.0", "needs core 2.4.0", ""},
		{"<2.4.0-beta.1", "", "affects versions before 2.4.0-beta.1"},
		// Two bounds, with a comma or a space, read as one span.
		{">=1.0.0, <2.4.0", "", "affects versions from 1.0.0 to before 2.4.0"},
		{">=1.0.0 <2.4.0", "", "affects versions from 1.0.0 to before 2.4.0"},
		{"<2.4.0 >=1.0.0", "", "affects versions from 1.0.0 to before 2.4.0"},
		{">=2.0.0 <=2.4", "", "affects versions from 2.0.0 to 2.4.x"},
		{">1.0.0 <2.0.0", "", "affects versions newer than 1.0.0 and before 2.0.0"},
		{">1.0.0 <=2.0.0", "", "affects versions newer than 1.0.0 up to 2.0.0"},
		{">=1.0.0 !=1.2.0 <2.0.0", "", "affects versions 1.0.0 or newer and other than 1.2.0 and before 2.0.0"},
		{"<1.2.0 || >=1.4.0", "", "affects versions before 1.2.0, or 1.4.0 or newer"},
		// Partial versions stand for their series.
		{"2.4", "", "affects versions 2.4.x"},
		{"2.4.x", "", "affects versions 2.4.x"},
		{"2.4.*", "", "affects versions 2.4.x"},
		{"=2.4", "", "affects versions 2.4.x"},
		{"2", "needs core 2.x", ""},
		{"<2.4", "", "affects versions before 2.4.0"},
		{"<=2.4", "", "affects versions 2.4.x or older"},
		{">2.4", "needs core newer than 2.4.x", ""},
		{">=2.4", "needs core 2.4.0 or newer", ""},
		{"!=2.4", "", "affects versions other than 2.4.x"},
		{"<=2", "", "affects versions 2.x or older"},
		{">2", "needs core newer than 2.x", ""},
		{"*", "runs on any core", "affects every version"},
		{"x", "runs on any core", "affects every version"},
		// Tilde and caret.
		{"~1.2.3", "needs core 1.2.3 or a later 1.2.x release", ""},
		{"~>1.2.3", "needs core 1.2.3 or a later 1.2.x release", ""},
		{"~1.2", "needs core 1.2.x", ""},
		{"^1.2.3", "needs core 1.2.3 or a later 1.x release", ""},
		{"^0.2.3", "needs core 0.2.3 or a later 0.2.x release", ""},
		{"^0.0.3", "needs core 0.0.3", ""},
		{"^1.2", "needs core 1.2.0 or a later 1.x release", ""},
		// Hyphen ranges.
		{"1.2.0 - 1.4.0", "", "affects versions from 1.2.0 to 1.4.0"},
		{"1.2 - 2.4", "", "affects versions from 1.2.0 to 2.4.x"},
		// Not the grammar: quoted as written.
		{"newest", "needs a core in the range “newest”", "affects the versions in the range “newest”"},
		{"2.4-beta", "needs a core in the range “2.4-beta”", ""},
		{"  ", "needs a core in the range “”", ""},
	} {
		if c.core != "" {
			if got := RequiresCoreText(c.in); got != c.core {
				t.Errorf("RequiresCoreText(%q) = %q, want %q", c.in, got, c.core)
			}
		}
		if c.affected != "" {
			if got := AffectedText(c.in); got != c.affected {
				t.Errorf("AffectedText(%q) = %q, want %q", c.in, got, c.affected)
			}
		}
		if c.core == "" && c.affected == "" {
			t.Errorf("%q: no expectation", c.in)
		}
	}
}
