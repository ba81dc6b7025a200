package views

import (
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// The Fleet page's sentences: the totals, and a site whose tree was never
// read, which says so rather than 0.
func TestFleetWords(t *testing.T) {
	t.Parallel()
	got := fleetSummaryText(readmodel.FleetSummary{Sites: 12, Checked: 11, Stale: 3, SitesMalicious: 1, SitesAttention: 9, Packages: 24000})
	want := "12 sites, 3 stale, 24,000 packages installed (1 site not checked yet); 1 site with malicious packages, 9 with something that needs attention."
	if got != want {
		t.Errorf("summary:\n got %s\nwant %s", got, want)
	}
	if got := fleetCount(readmodel.FleetRow{}, 0); got != readmodel.FleetNotCheckedText {
		t.Errorf("not checked: %q", got)
	}
	if got := fleetCount(readmodel.FleetRow{Checked: true}, 1200); got != "1,200" {
		t.Errorf("checked: %q", got)
	}
	if got := FleetPath(readmodel.FleetByName, readmodel.FleetStale, "acme", 2); got != "/admin/fleet?filter=stale&page=2&q=acme&sort=name" {
		t.Errorf("path: %s", got)
	}
}
