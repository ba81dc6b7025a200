package updatecheck

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/publisher"
)

// dismissGallery dismisses gallery's ACME-2 (high, <=3.0.0, no fix) after
// a first check of the standard site.
func (b *bundle) dismissGallery(expires *time.Time) {
	b.t.Helper()
	if _, err := b.dismissals.Dismiss(context.Background(), store.NewDismissal{Site: store.LocalSite, Code: "gallery", AdvisoryID: "ACME-2",
		Reason: "  image metadata is stripped by the proxy \n", ExpiresAt: expires}); err != nil {
		b.t.Fatal(err)
	}
}

func (b *bundle) vulnerable() int {
	b.t.Helper()
	sum, err := b.store.Summary(context.Background(), store.LocalSite, readmodel.DevSeparate)
	if err != nil {
		b.t.Fatal(err)
	}
	return sum.Vulnerable
}

// galleryAdvisory is ACME-2 on gallery's detail page.
func (b *bundle) galleryAdvisory() catalog.AdvisoryState {
	b.t.Helper()
	d, err := b.reads.Detail(context.Background(), "gallery")
	if err != nil {
		b.t.Fatal(err)
	}
	for _, a := range d.Advisories {
		if a.ID == "ACME-2" {
			return a
		}
	}
	b.t.Fatalf("gallery's page lists no ACME-2: %+v", d.Advisories)
	return catalog.AdvisoryState{}
}

// A dismissal holds through later checks while the advisory says the same,
// even when the document changes around it; when its severity, affected
// range or fixed version changes, it counts again and the page says what
// changed.
func TestDismissalFollowsTheAdvisory(t *testing.T) {
	t.Parallel()
	const unchanged = `{"id": "ACME-2", "severity": "high", "affected": "<=3.0.0", "summary": "reworded"}`
	for name, tc := range map[string]struct {
		advisory string
		changes  []catalog.AdvisoryChange
	}{
		"unchanged": {unchanged, nil},
		"severity raised": {`{"id": "ACME-2", "severity": "critical", "affected": "<=3.0.0"}`,
			[]catalog.AdvisoryChange{{Member: catalog.MemberSeverity, From: "high", To: "critical"}}},
		"range widened": {`{"id": "ACME-2", "severity": "high", "affected": "<3.5.0"}`,
			[]catalog.AdvisoryChange{{Member: catalog.MemberAffected, From: "<=3.0.0", To: "<3.5.0"}}},
		"fix published": {`{"id": "ACME-2", "severity": "high", "affected": "<=3.0.0", "fixed_in": "3.0.1"}`,
			[]catalog.AdvisoryChange{{Member: catalog.MemberFixedIn, From: "", To: "3.0.1"}}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			p := publisher.New(t)
			b.standardSite(p)
			b.run(lease.Operator)
			b.dismissGallery(nil)
			// Evaluated again from a new document: the dismissal is judged
			// against the advisory as the new result lists it.
			pkg := `{"releases": [{"version": "3.0.0"}, {"version": "3.0.1"}], "advisories": [` + tc.advisory + `]}`
			p.Set("/acme.json", doc(11, map[string]string{"blog": pkgBlog, "gallery": pkg, "forms": pkgUpToDate}))
			if res := b.run(lease.Operator); res.Status != CompletedWithFailures { // the third source fails by design
				t.Fatalf("second check = %s", resultJSON(res))
			}
			a := b.galleryAdvisory()
			holds := tc.changes == nil
			if a.Dismissed != holds || a.Dismissal == nil || a.Dismissal.Expired || a.Dismissal.InForce != holds {
				t.Fatalf("advisory %+v, dismissal %+v: want it dismissed %v", a, a.Dismissal, holds)
			}
			if !reflect.DeepEqual(a.Changes, tc.changes) {
				t.Fatalf("changes = %+v, want %+v", a.Changes, tc.changes)
			}
			want := 1 // blog
			if !holds {
				want = 2
			}
			if n := b.vulnerable(); n != want {
				t.Fatalf("vulnerable = %d, want %d", n, want)
			}
		})
	}
}
