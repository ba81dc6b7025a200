package web_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// The catalog's waiting and skipped filters, from a real check under the
// policies of policySite: ?status=waiting lists the component whose
// release waits for its soak (blog), ?status=skipped the one whose skip
// hides a release (forms), each answer held to openapi.json (client.do);
// the page's waiting filter lists the same, and the dashboard's waiting
// count links to it.
func TestCatalogWaitingAndSkippedFilters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.policySite(time.Now().UTC().Add(-time.Hour).Truncate(time.Second), false)
	if res, err := b.checker.RunLockedUpdateCheck(context.Background(), lease.Operator, "test"); err != nil || res.Status != updatecheck.Completed {
		t.Fatalf("check: %+v, %v", res, err)
	}
	admin := b.login("admin@example.test")
	codes := func(status string) []string {
		t.Helper()
		r := admin.do("GET", "/api/admin/plugins/updates?status="+status, "", "", nil)
		wantStatus(t, "catalog ?status="+status, r, 200)
		var cat struct{ Components []struct{ Code string } }
		if err := json.Unmarshal([]byte(r.body), &cat); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range cat.Components {
			out = append(out, c.Code)
		}
		slices.Sort(out)
		return out
	}
	if got := codes("waiting"); !slices.Equal(got, []string{"blog"}) {
		t.Errorf("?status=waiting lists %v, want [blog] (its 2.4.0 waits for a 3-day soak)", got)
	}
	if got := codes("skipped"); !slices.Equal(got, []string{"forms"}) {
		t.Errorf("?status=skipped lists %v, want [forms] (the manifest skips 2.4.0)", got)
	}

	page := admin.do("GET", "/admin/plugins?status=waiting", "", "", nil)
	wantStatus(t, "catalog page, waiting", page, 200)
	if !strings.Contains(page.body, `data-code="blog"`) || strings.Contains(page.body, `data-code="forms"`) ||
		!strings.Contains(page.body, "Showing 1 of 1 component with a release waiting for its soak") {
		t.Errorf("the waiting page does not list blog alone:\n%s", page.body)
	}
	dash := admin.do("GET", "/admin", "", "", nil)
	wantStatus(t, "dashboard", dash, 200)
	if !strings.Contains(dash.body, `<a href="/admin/plugins?status=waiting"><span class="stat-value" data-testid="widget-waiting">1</span>`) {
		t.Errorf("the dashboard's waiting count (1) does not link to the waiting filter:\n%s", dash.body)
	}
}
