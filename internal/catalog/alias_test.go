package catalog

import (
	"slices"
	"testing"
)

// The rows an advisory key finds join those the text finds, in the
// catalog's order, each once; the key matches the whole search only,
// ignoring case and surrounding spaces.
func TestCatalogSearchAddsAdvisoryKeys(t *testing.T) {
	t.Parallel()
	var c Snapshot
	c.indexKeys([]string{"ACME-1", "CVE-2021-44228"}, 0)
	c.indexKeys([]string{"CVE-2021-44228"}, 4)
	c.indexKeys([]string{"CVE-2021-44228", "GHSA-JFH8-C2JP-5V3Q"}, 7)
	for _, tc := range []struct {
		byText []int32
		search string
		want   []int32
	}{
		{[]int32{1, 4}, " cve-2021-44228 ", []int32{0, 1, 4, 7}},
		{nil, "GHSA-jfh8-c2jp-5v3q", []int32{7}},
		{[]int32{2}, "CVE-2021-4422", []int32{2}},
		{[]int32{0, 7}, "CVE-2021-44228", []int32{0, 4, 7}},
	} {
		if got := c.withAdvisory(tc.byText, tc.search); !slices.Equal(got, tc.want) {
			t.Errorf("withAdvisory(%v, %q) = %v, want %v", tc.byText, tc.search, got, tc.want)
		}
	}
}
