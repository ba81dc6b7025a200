package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// A security fix published an hour ago skips a 3-day soak, and the
// detail API and page say which advisory justified it.
func TestDetailSaysWhichAdvisorySkippedTheSoak(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pub := publisher.New(t)
	hourAgo := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
	pub.Set("/acme.json", fmt.Appendf(nil, `{"format": 1, "publisher": "acme", "sequence": 1, "expires": "2099-01-01T00:00:00Z", "packages": {
		"core": {"releases": [{"version": "1.9.0"}]},
		"blog": {"releases": [{"version": "2.3.1", "released": %q}, {"version": "2.4.0", "released": %q}],
			"advisories": [{"id": "ACME-7", "severity": "high", "affected": "<2.3.1", "fixed_in": "2.3.1", "summary": "Stored XSS"}]}}}`,
		hourAgo, hourAgo))
	m := &manifest.Manifest{Components: []manifest.Component{
		{Code: "core", Name: "Core", Version: "1.9.0", Source: pub.URL + "/acme.json"},
		{Code: "blog", Name: "Blog", Version: "2.3.0", Source: pub.URL + "/acme.json", Policy: release.Policy{Soak: "3d"}},
	}}
	if _, err := updatecheck.NewSyncer(b.checker).Sync(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "check", b.login("admin@example.test").postCheck(true), 200)

	viewer := b.login("viewer@example.test")
	type between struct {
		Version     string `json:"version"`
		Offer       string `json:"offer"`
		SoakSkipped *struct {
			Advisories []string `json:"advisories"`
			Text       string   `json:"text"`
		} `json:"soak_skipped"`
	}
	blog := decodeJSON[struct {
		UpdateVersion   *string   `json:"update_version"`
		ReleasesBetween []between `json:"releases_between"`
	}](t, viewer.do("GET", "/api/admin/plugins/blog", "", "", nil))
	if blog.UpdateVersion == nil || *blog.UpdateVersion != "2.3.1" {
		t.Fatalf("blog offers %v, want 2.3.1 (the fix skips the soak; 2.4.0 waits)", blog.UpdateVersion)
	}
	var got []string
	for _, r := range blog.ReleasesBetween {
		s := "-"
		if r.SoakSkipped != nil {
			s = strings.Join(r.SoakSkipped.Advisories, ",") + " " + r.SoakSkipped.Text
		}
		got = append(got, r.Version+" "+r.Offer+" "+s)
	}
	// The releases up to the offered update are listed (2.4.0 waits beyond it).
	want := []string{"2.3.1 offered ACME-7 offered before its soak: it fixes ACME-7"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("releases in between:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	page := viewer.do("GET", "/admin/plugins/blog", "", "", nil)
	wantStatus(t, "blog's page", page, 200)
	if body := page.body; !strings.Contains(body, `data-testid="between-soak-skipped">Offered before its soak: it fixes ACME-7.</span>`) {
		t.Errorf("the page does not say which advisory skipped the soak:\n%s", body)
	}
}
