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

// The tree's items that need attention are a gauge by kind once a tree
// was read, absent before; the malicious and exploited kinds only once
// their feeds were read.
func TestTreeFindingsGauge(t *testing.T) {
	t.Parallel()
	var sum readmodel.Summary
	m := New(func(context.Context) (readmodel.Summary, error) { return sum, nil })
	if out := scrape(t, m); strings.Contains(out, "upcheck_tree_findings{") {
		t.Errorf("a tree never read has a series:\n%s", out)
	}
	sum.TreeCounts = &readmodel.TreeCounts{Exposed: 1, Vulnerable: 2, Total: 3}
	out := scrape(t, m)
	for _, want := range []string{`upcheck_tree_findings{kind="vulnerable"} 2` + "\n", `upcheck_tree_findings{kind="exposed"} 1` + "\n",
		`upcheck_tree_findings{kind="vulnerable_no_fix"} 0` + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, `kind="malicious"`) || strings.Contains(out, `kind="known_exploited"`) {
		t.Errorf("a count of feeds never read has a series:\n%s", out)
	}
	one := 1
	sum.TreeCounts.Malicious = &one
	if out := scrape(t, m); !strings.Contains(out, `upcheck_tree_findings{kind="malicious"} 1`+"\n") {
		t.Errorf("missing the malicious count in:\n%s", out)
	}
}
