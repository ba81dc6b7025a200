package catalog

import (
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/release"
)

// The releases in between run from the offered update down to the one
// after the installed version, newest first (every weighed one when
// none is offered), each as the offer left it (SecurityFix included).
func TestBetween(t *testing.T) {
	t.Parallel()
	rs := func(v string, o release.ReleaseOffer) release.ReleaseStatus {
		return release.ReleaseStatus{Release: release.Release{Version: v}, Offer: o}
	}
	ev := release.Evaluation{Releases: []release.ReleaseStatus{
		rs("3.0.0", release.ReleaseHeld), rs("2.5.0", release.ReleaseWaiting), rs("2.4.0", release.ReleaseOffered),
		rs("2.3.3", release.ReleaseSuperseded), rs("2.3.2", release.ReleaseSuperseded), rs("2.3.1", release.ReleaseSuperseded),
		rs("2.3.0", ""), rs("2.2.0", ""),
	}}
	ev.Releases[4].SecurityFix = true
	kinds := func(got []release.ReleaseStatus) string {
		var out []string
		for _, r := range got {
			k := r.Version
			if r.SecurityFix {
				k += " security"
			}
			out = append(out, k)
		}
		return strings.Join(out, ", ")
	}
	if got := kinds(between(&ev)); got != "3.0.0, 2.5.0, 2.4.0, 2.3.3, 2.3.2 security, 2.3.1" {
		t.Errorf("nothing offered: %s", got)
	}
	ev.Update = &release.Release{Version: "2.4.0"}
	if got := kinds(between(&ev)); got != "2.4.0, 2.3.3, 2.3.2 security, 2.3.1" {
		t.Errorf("2.4.0 offered: %s", got)
	}
}
