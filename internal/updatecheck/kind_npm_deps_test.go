package updatecheck

import (
	"encoding/json"
	"testing"

	"github.com/upcheck/upcheck/internal/npm"
)

// Whether a stored document kept the dependencies a check needs is read
// from its DependenciesFrom alone, and says what reading the whole stored
// package says (keepsDependencies); one that does not decode keeps
// nothing.
func TestStoredKeepsDependenciesReadsDependenciesFromAlone(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ from, floor string }{
		{"", ""}, {"", "1.0.0"}, {"1.0.0", "1.0.0"}, {"1.0.0", "1.2.0"}, {"1.2.0", "1.0.0"}, {"2.0.0", "1.9.9"},
	} {
		pkg := &npm.Package{Name: "p", DependenciesFrom: c.from, Versions: map[string]npm.Version{"1.0.0": {Kept: true}}}
		doc, err := json.Marshal(pkg)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := storedKeepsDependencies(doc, c.floor), keepsDependencies(pkg, c.floor); got != want {
			t.Errorf("from %q, floor %q: %v, the whole package says %v", c.from, c.floor, got, want)
		}
	}
	if storedKeepsDependencies([]byte(`{"DependenciesFrom": `), "1.0.0") {
		t.Error("a stored document that does not decode keeps dependencies")
	}
}
