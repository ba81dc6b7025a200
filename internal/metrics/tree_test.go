package metrics

import (
	"context"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The installed tree's size is a gauge once a tree was read, and absent
// before: no 0 that would read as "nothing installed, nothing to check".
func TestTreePackagesGauge(t *testing.T) {
	t.Parallel()
	var sum readmodel.Summary
	m := New(func(context.Context) (readmodel.Summary, error) { return sum, nil })
	if out := scrape(t, m); strings.Contains(out, "upcheck_tree_packages ") {
		t.Errorf("a tree never read has a series:\n%s", out)
	}
	n := 212
	sum.TreePackages = &n
	if out := scrape(t, m); !strings.Contains(out, "upcheck_tree_packages 212\n") {
		t.Errorf("missing upcheck_tree_packages 212 in:\n%s", out)
	}
}
