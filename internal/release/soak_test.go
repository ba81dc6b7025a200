package release

import (
	"reflect"
	"testing"
	"time"
)

// A release dated after its document's last change (ReleasedLate) cannot
// start a soak: under a soak it waits, said so, with no date it would be
// offered from; with no soak it is offered as any release is.
func TestOfferReleasedLateWaitsUnderASoak(t *testing.T) {
	t.Parallel()
	rs := []Release{
		{Version: "1.2.0", Released: offerNow.Add(-30 * 24 * time.Hour), ReleasedLate: true},
		{Version: "1.1.0", Released: offerNow.Add(-30 * 24 * time.Hour)},
		{Version: "1.0.0", Released: day(1, 1)},
	}
	words := "waits: its release date is later than the registry's last change to the package, so it cannot start a soak of 3 days"
	ev := evaluateReleases(t, rs, nil, "1.0.0")
	if err := ev.Offer("1.0.0", OfferOptions{Policy: Policy{Soak: "3d"}, Now: offerNow}); err != nil {
		t.Fatal(err)
	}
	checkOffer(t, &ev, offerWant{update: "1.1.0", waiting: &Waiting{Version: "1.2.0"},
		between: []offerRow{
			{version: "1.2.0", offer: ReleaseWaiting, reason: words},
			{version: "1.1.0", offer: ReleaseOffered},
		}})
	if ev.Releases[0].Reason == nil || ev.Releases[0].Reason.Kind != ReasonReleasedLate {
		t.Errorf("1.2.0's reason = %+v, want %s", ev.Releases[0].Reason, ReasonReleasedLate)
	}
	if err := ev.Offer("1.0.0", OfferOptions{Now: offerNow}); err != nil {
		t.Fatal(err)
	}
	checkOffer(t, &ev, offerWant{update: "1.2.0",
		between: []offerRow{{version: "1.2.0", offer: ReleaseOffered}, {version: "1.1.0", offer: ReleaseSuperseded}}})
}

// A security fix skips the soak, whatever kept it (not soaked yet, no
// date, a late date), and says which advisories justify it; one that had
// soaked anyway, or offered with no soak, skipped none.
func TestOfferSecurityFixSaysWhichAdvisorySkippedTheSoak(t *testing.T) {
	t.Parallel()
	advisories := []Advisory{{ID: "GHSA-aaaa", Affected: "<1.0.2", FixedIn: "1.0.2"}, {ID: "GHSA-bbbb", Affected: "<1.0.3"}}
	cases := []struct {
		name     string
		fix      Release
		soak     string
		skipped  bool
		advisory []Advisory
		want     []string
	}{
		{name: "not soaked", fix: Release{Version: "1.0.3", Released: offerNow.Add(-time.Hour)}, soak: "3d", skipped: true,
			advisory: advisories, want: []string{"GHSA-aaaa", "GHSA-bbbb"}},
		{name: "no date", fix: Release{Version: "1.0.3"}, soak: "3d", skipped: true, advisory: advisories, want: []string{"GHSA-aaaa", "GHSA-bbbb"}},
		{name: "late date", fix: Release{Version: "1.0.3", Released: day(1, 2), ReleasedLate: true}, soak: "3d", skipped: true,
			advisory: advisories, want: []string{"GHSA-aaaa", "GHSA-bbbb"}},
		{name: "publisher's mark only", fix: Release{Version: "1.0.3", Released: offerNow.Add(-time.Hour), Security: true}, soak: "3d",
			skipped: true},
		{name: "soaked", fix: Release{Version: "1.0.3", Released: day(1, 2)}, soak: "3d", advisory: advisories},
		{name: "no soak", fix: Release{Version: "1.0.3", Released: offerNow.Add(-time.Hour)}, advisory: advisories},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ev := evaluateReleases(t, []Release{tc.fix, {Version: "1.0.0", Released: day(1, 1)}}, tc.advisory, "1.0.0")
			if err := ev.Offer("1.0.0", OfferOptions{Policy: Policy{Soak: tc.soak}, Now: offerNow}); err != nil {
				t.Fatal(err)
			}
			r := ev.Releases[0]
			if r.Offer != ReleaseOffered || !r.SecurityFix {
				t.Fatalf("1.0.3: offer %q, security fix %v; want offered, a security fix", r.Offer, r.SecurityFix)
			}
			if r.SoakSkipped != tc.skipped || !reflect.DeepEqual(r.SoakSkippedFor, tc.want) {
				t.Errorf("soak skipped %v for %v; want %v for %v", r.SoakSkipped, r.SoakSkippedFor, tc.skipped, tc.want)
			}
		})
	}
}
