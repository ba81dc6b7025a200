package release

import (
	"fmt"
	"testing"
)

// Offer lists every release newer than the installed version that its
// publisher marks a security release, oldest first, whatever the policy
// makes of it, weighing pre-releases only for an installed pre-release;
// none when there is no security release.
func TestOfferListsSecurityVersions(t *testing.T) {
	t.Parallel()
	rels := []Release{
		{Version: "3.0.0", Security: true},
		{Version: "2.6.0-rc.1", Security: true},
		{Version: "2.5.0"},
		{Version: "2.4.0", Security: true, RequiresCore: ">=2.0.0"},
		{Version: "2.3.1", Security: true},
		{Version: "2.3.0"},
		{Version: "2.3.0-rc.1"},
		{Version: "2.2.0", Security: true},
	}
	for _, tc := range []struct {
		name, installed string
		policy          Policy
		want            string
	}{
		{"every release", "2.3.0", Policy{}, "[2.3.1 2.4.0 3.0.0]"},
		{"a held one counts", "2.3.0", Policy{Hold: "<3.0.0"}, "[2.3.1 2.4.0 3.0.0]"},
		{"an installed pre-release weighs pre-releases", "2.3.0-rc.1", Policy{}, "[2.3.1 2.4.0 2.6.0-rc.1 3.0.0]"},
		{"no security release", "3.0.0", Policy{}, "[]"},
		{"held, none offered", "2.3.0", Policy{Hold: "<2.3.1"}, "[]"},
	} {
		ev := evaluateReleases(t, rels, nil, tc.installed)
		if err := ev.Offer(tc.installed, OfferOptions{Policy: tc.policy, Now: offerNow}); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(ev.SecurityVersions); got != tc.want {
			t.Errorf("%s: security versions %s, want %s (security release %+v)", tc.name, got, tc.want, ev.SecurityRelease)
		}
		if (ev.SecurityVersions == nil) != (ev.SecurityRelease == nil) {
			t.Errorf("%s: security versions %v with security release %+v", tc.name, ev.SecurityVersions, ev.SecurityRelease)
		}
	}
}
