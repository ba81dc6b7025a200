package release

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// offerNow is the fixed time every soak in these tests is judged at.
var offerNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func day(month time.Month, d int) time.Time { return time.Date(2026, month, d, 12, 0, 0, 0, time.UTC) }

func at(t time.Time) *time.Time { return &t }

// offerReleases is the one table the tier cases read: installed 2.3.0 on
// core 1.9.0; 2.6.0 needs core 2, 2.3.1 is a security release, and there
// are pre-releases on both sides of 3.0.0.
func offerReleases() []Release {
	return []Release{
		{Version: "3.1.0-beta.1", Released: day(11, 30)},
		{Version: "3.0.0", Released: day(11, 29)},
		{Version: "2.6.0", Released: day(11, 28), RequiresCore: ">=2.0.0"},
		{Version: "2.5.0", Released: day(11, 20)},
		{Version: "2.5.0-rc.1", Released: day(11, 10)},
		{Version: "2.4.0", Released: day(11, 1)},
		{Version: "2.3.2", Released: day(10, 20)},
		{Version: "2.3.1", Released: day(10, 10), Security: true},
		{Version: "2.3.0", Released: day(10, 1)},
		{Version: "2.2.0", Released: day(9, 1)},
	}
}

// offerRow is one release of Between as a case expects it.
type offerRow struct {
	version string
	offer   ReleaseOffer
	reason  string
	until   *time.Time
}

type offerWant struct {
	update       string // "" no update
	security     string // SecurityRelease's version, "" none
	secNeedsCore bool
	blocked      string // BlockedUpdate's version ("" none: NeedsNewerCore false)
	waiting      *Waiting
	held         *heldWords
	skipped      string
	next         *time.Time
	between      []offerRow
}

type offerCase struct {
	name      string
	releases  []Release
	advisory  []Advisory
	installed string
	opts      OfferOptions
	want      offerWant
}

const (
	minorWords    = "not offered: this site takes minor and patch updates only"
	patchWords    = "not offered: this site takes patch updates only"
	securityWords = "not offered: this site takes security updates only"
)

func evaluateReleases(t *testing.T, rs []Release, advs []Advisory, installed string) Evaluation {
	t.Helper()
	ev, err := Evaluate(&Package{Releases: rs, Advisories: advs}, "pkg", installed, "1.9.0")
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func checkOffer(t *testing.T, ev *Evaluation, w offerWant) {
	t.Helper()
	version := func(r *Release) string {
		if r == nil {
			return ""
		}
		return r.Version
	}
	if got := version(ev.Update); got != w.update || ev.UpdateAvailable != (w.update != "") {
		t.Errorf("Update = %q (available %v), want %q", got, ev.UpdateAvailable, w.update)
	}
	if got := version(ev.SecurityRelease); got != w.security || ev.Security != (w.security != "") {
		t.Errorf("SecurityRelease = %q (Security %v), want %q", got, ev.Security, w.security)
	}
	if ev.SecurityRelease != nil && !ev.SecurityRelease.Security {
		t.Errorf("SecurityRelease %s does not say Security", ev.SecurityRelease.Version)
	}
	if ev.SecurityNeedsNewerCore != w.secNeedsCore {
		t.Errorf("SecurityNeedsNewerCore = %v, want %v", ev.SecurityNeedsNewerCore, w.secNeedsCore)
	}
	if got := version(ev.BlockedUpdate); got != w.blocked || ev.NeedsNewerCore != (w.blocked != "") {
		t.Errorf("BlockedUpdate = %q (NeedsNewerCore %v), want %q", got, ev.NeedsNewerCore, w.blocked)
	}
	if !reflect.DeepEqual(ev.Waiting, w.waiting) {
		t.Errorf("Waiting = %s, want %s", show(ev.Waiting), show(w.waiting))
	}
	if got := heldWorded(ev.Held); !reflect.DeepEqual(got, w.held) {
		t.Errorf("Held = %+v, want %+v", got, w.held)
	}
	if ev.Skipped != w.skipped {
		t.Errorf("Skipped = %q, want %q", ev.Skipped, w.skipped)
	}
	if !reflect.DeepEqual(ev.NextChange, w.next) {
		t.Errorf("NextChange = %v, want %v", ev.NextChange, w.next)
	}
	var got []offerRow
	for _, r := range ev.Between() {
		got = append(got, offerRow{version: r.Version, offer: r.Offer, reason: reasonWords(r.Reason), until: r.Until})
	}
	if !reflect.DeepEqual(got, w.between) {
		t.Errorf("Between:\n got %s\nwant %s", showRows(got), showRows(w.between))
	}
}

// heldWords is a Held as the pages word it: its reason worded by
// readmodel.OfferReasonText.
type heldWords struct {
	Version, Reason string
}

func heldWorded(h *Held) *heldWords {
	if h == nil {
		return nil
	}
	return &heldWords{Version: h.Version, Reason: reasonWords(&h.Reason)}
}

// reasonWords words r as every reader does: its stored JSON read as a
// readmodel.OfferReason and worded by readmodel.OfferReasonText ("" for
// nil).
func reasonWords(r *Reason) string {
	if r == nil {
		return ""
	}
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	var o readmodel.OfferReason
	if err := json.Unmarshal(b, &o); err != nil {
		panic(err)
	}
	return readmodel.OfferReasonText(o)
}

func show(w *Waiting) string {
	if w == nil {
		return "nil"
	}
	if w.Until == nil {
		return w.Version + " until nil"
	}
	return w.Version + " until " + w.Until.Format(time.RFC3339)
}

func showRows(rows []offerRow) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "\n  %s %s %q", r.version, r.offer, r.reason)
		if r.until != nil {
			b.WriteString(" until " + r.until.Format(time.RFC3339))
		}
	}
	return b.String()
}

func TestOffer(t *testing.T) {
	t.Parallel()
	waits3d := func(released time.Time) string {
		return "waits until " + released.Add(72*time.Hour).Format("2 Jan 15:04") + " UTC (soak 3 days)"
	}
	undated := offerReleases()
	undated[1].Released = time.Time{} // 3.0.0

	// A package releasing daily for 30 days: 1.0.1 on 1 Nov … 1.0.30 on 30 Nov.
	var daily []Release
	for i := 30; i >= 1; i-- {
		daily = append(daily, Release{Version: fmt.Sprintf("1.0.%d", i), Released: day(11, i)})
	}
	dailyRows := []offerRow{}
	for i := 30; i >= 1; i-- {
		r := offerRow{version: fmt.Sprintf("1.0.%d", i), offer: ReleaseSuperseded}
		switch {
		case i >= 29: // 1.0.28 soaks at 1 Dec 12:00, exactly now
			r.offer, r.until, r.reason = ReleaseWaiting, at(day(11, i).Add(72*time.Hour)), waits3d(day(11, i))
		case i == 28:
			r.offer = ReleaseOffered
		}
		dailyRows = append(dailyRows, r)
	}

	// Security releases published an hour ago, a plain one a day ago.
	recent := []Release{
		{Version: "3.0.0", Released: offerNow.Add(-time.Hour), Security: true},
		{Version: "2.4.0", Released: offerNow.Add(-24 * time.Hour)},
		{Version: "2.3.1", Released: offerNow.Add(-time.Hour), Security: true},
		{Version: "2.3.0", Released: day(10, 1)},
	}
	skips := []Release{
		{Version: "2.5.0", Released: day(11, 1)},
		{Version: "2.4.0", Released: day(10, 1)},
		{Version: "2.3.1", Released: day(9, 20), Security: true},
		{Version: "2.3.0", Released: day(9, 1)},
		{Version: "2.2.0", Released: day(8, 1)},
	}
	// npm-like: no release says security; an advisory fixed in 1.0.2,
	// which was never published, so 1.0.3 brings the fix.
	npm := []Release{
		{Version: "2.0.0", Released: offerNow.Add(-time.Hour)},
		{Version: "1.1.0", Released: offerNow.Add(-time.Hour)},
		{Version: "1.0.3", Released: offerNow.Add(-time.Hour)},
		{Version: "1.0.1", Released: day(10, 1)},
		{Version: "1.0.0", Released: day(9, 1)},
	}
	npmAdvisory := []Advisory{{ID: "GHSA-test", Affected: "<1.0.2", FixedIn: "1.0.2"}}
	soak7 := func(tier Tier) OfferOptions {
		return OfferOptions{Policy: Policy{Offer: tier, Soak: "7d"}, Now: offerNow}
	}

	cases := []offerCase{
		{name: "tier unset", releases: offerReleases(), installed: "2.3.0", want: offerWant{
			update: "3.0.0", security: "2.3.1",
			between: []offerRow{
				{version: "3.0.0", offer: ReleaseOffered},
				{version: "2.6.0", offer: ReleaseNeedsNewerCore},
				{version: "2.5.0", offer: ReleaseSuperseded},
				{version: "2.4.0", offer: ReleaseSuperseded},
				{version: "2.3.2", offer: ReleaseSuperseded},
				{version: "2.3.1", offer: ReleaseSuperseded},
			}}},
		{name: "tier all", releases: offerReleases(), installed: "2.3.0", opts: OfferOptions{Policy: Policy{Offer: OfferAll}}, want: offerWant{
			update: "3.0.0", security: "2.3.1",
			between: []offerRow{
				{version: "3.0.0", offer: ReleaseOffered},
				{version: "2.6.0", offer: ReleaseNeedsNewerCore},
				{version: "2.5.0", offer: ReleaseSuperseded},
				{version: "2.4.0", offer: ReleaseSuperseded},
				{version: "2.3.2", offer: ReleaseSuperseded},
				{version: "2.3.1", offer: ReleaseSuperseded},
			}}},
		{name: "tier minor", releases: offerReleases(), installed: "2.3.0", opts: OfferOptions{Policy: Policy{Offer: OfferMinor}}, want: offerWant{
			update: "2.5.0", security: "2.3.1", blocked: "2.6.0",
			held: &heldWords{Version: "3.0.0", Reason: minorWords},
			between: []offerRow{
				{version: "3.0.0", offer: ReleaseNotOffered, reason: minorWords},
				{version: "2.6.0", offer: ReleaseNeedsNewerCore},
				{version: "2.5.0", offer: ReleaseOffered},
				{version: "2.4.0", offer: ReleaseSuperseded},
				{version: "2.3.2", offer: ReleaseSuperseded},
				{version: "2.3.1", offer: ReleaseSuperseded},
			}}},
		{name: "tier patch", releases: offerReleases(), installed: "2.3.0", opts: OfferOptions{Policy: Policy{Offer: OfferPatch}}, want: offerWant{
			update: "2.3.2", security: "2.3.1",
			held: &heldWords{Version: "3.0.0", Reason: patchWords},
			between: []offerRow{
				{version: "3.0.0", offer: ReleaseNotOffered, reason: patchWords},
				{version: "2.6.0", offer: ReleaseNotOffered, reason: patchWords},
				{version: "2.5.0", offer: ReleaseNotOffered, reason: patchWords},
				{version: "2.4.0", offer: ReleaseNotOffered, reason: patchWords},
				{version: "2.3.2", offer: ReleaseOffered},
				{version: "2.3.1", offer: ReleaseSuperseded},
			}}},
		{name: "tier security", releases: offerReleases(), installed: "2.3.0", opts: OfferOptions{Policy: Policy{Offer: OfferSecurity}}, want: offerWant{
			update: "2.3.1", security: "2.3.1",
			held: &heldWords{Version: "3.0.0", Reason: securityWords},
			between: []offerRow{
				{version: "3.0.0", offer: ReleaseNotOffered, reason: securityWords},
				{version: "2.6.0", offer: ReleaseNotOffered, reason: securityWords},
				{version: "2.5.0", offer: ReleaseNotOffered, reason: securityWords},
				{version: "2.4.0", offer: ReleaseNotOffered, reason: securityWords},
				{version: "2.3.2", offer: ReleaseNotOffered, reason: securityWords},
				{version: "2.3.1", offer: ReleaseOffered},
			}}},
		// An installed pre-release weighs pre-releases; the tier is judged
		// against 2.5.0-rc.1's major.minor.
		{name: "prerelease installed tier all", releases: offerReleases(), installed: "2.5.0-rc.1", want: offerWant{
			update: "3.1.0-beta.1",
			between: []offerRow{
				{version: "3.1.0-beta.1", offer: ReleaseOffered},
				{version: "3.0.0", offer: ReleaseSuperseded},
				{version: "2.6.0", offer: ReleaseNeedsNewerCore},
				{version: "2.5.0", offer: ReleaseSuperseded},
			}}},
		{name: "prerelease installed tier patch", releases: offerReleases(), installed: "2.5.0-rc.1", opts: OfferOptions{Policy: Policy{Offer: OfferPatch}}, want: offerWant{
			update: "2.5.0",
			held:   &heldWords{Version: "3.1.0-beta.1", Reason: patchWords},
			between: []offerRow{
				{version: "3.1.0-beta.1", offer: ReleaseNotOffered, reason: patchWords},
				{version: "3.0.0", offer: ReleaseNotOffered, reason: patchWords},
				{version: "2.6.0", offer: ReleaseNotOffered, reason: patchWords},
				{version: "2.5.0", offer: ReleaseOffered},
			}}},
		// 2.6.0 soaked exactly now (28 Nov 12:00 + 3 days): it is weighed,
		// and needs a newer core; 3.0.0 waits a day more.
		{name: "soak 3d tier all", releases: offerReleases(), installed: "2.3.0",
			opts: OfferOptions{Policy: Policy{Soak: "3d"}, Now: offerNow}, want: offerWant{
				update: "2.5.0", security: "2.3.1", blocked: "2.6.0",
				waiting: &Waiting{Version: "3.0.0", Until: at(day(12, 2))},
				next:    at(day(12, 2)),
				between: []offerRow{
					{version: "3.0.0", offer: ReleaseWaiting, until: at(day(12, 2)), reason: waits3d(day(11, 29))},
					{version: "2.6.0", offer: ReleaseNeedsNewerCore},
					{version: "2.5.0", offer: ReleaseOffered},
					{version: "2.4.0", offer: ReleaseSuperseded},
					{version: "2.3.2", offer: ReleaseSuperseded},
					{version: "2.3.1", offer: ReleaseSuperseded},
				}}},
		{name: "soak without a release date", releases: undated, installed: "2.3.0",
			opts: OfferOptions{Policy: Policy{Soak: "72h"}, Now: offerNow}, want: offerWant{
				update: "2.5.0", security: "2.3.1", blocked: "2.6.0",
				waiting: &Waiting{Version: "3.0.0"},
				between: []offerRow{
					{version: "3.0.0", offer: ReleaseWaiting, reason: "waits: it has no release date to soak 3 days from"},
					{version: "2.6.0", offer: ReleaseNeedsNewerCore},
					{version: "2.5.0", offer: ReleaseOffered},
					{version: "2.4.0", offer: ReleaseSuperseded},
					{version: "2.3.2", offer: ReleaseSuperseded},
					{version: "2.3.1", offer: ReleaseSuperseded},
				}}},
		{name: "daily releases under a 3-day soak", releases: daily, installed: "1.0.0",
			opts: OfferOptions{Policy: Policy{Soak: "3d"}, Now: offerNow}, want: offerWant{
				update:  "1.0.28",
				waiting: &Waiting{Version: "1.0.30", Until: at(day(12, 3))},
				next:    at(day(12, 2)),
				between: dailyRows,
			}},
		{name: "hold <3.0.0 holds the major", releases: offerReleases(), installed: "2.3.0",
			opts: OfferOptions{Policy: Policy{Hold: "<3.0.0"}}, want: offerWant{
				update: "2.5.0", security: "2.3.1", blocked: "2.6.0",
				held: &heldWords{Version: "3.0.0", Reason: "held by the policy <3.0.0"},
				between: []offerRow{
					{version: "3.0.0", offer: ReleaseHeld, reason: "held by the policy <3.0.0"},
					{version: "2.6.0", offer: ReleaseNeedsNewerCore},
					{version: "2.5.0", offer: ReleaseOffered},
					{version: "2.4.0", offer: ReleaseSuperseded},
					{version: "2.3.2", offer: ReleaseSuperseded},
					{version: "2.3.1", offer: ReleaseSuperseded},
				}}},
		{name: "hold a window", releases: offerReleases(), installed: "2.3.0",
			opts: OfferOptions{Policy: Policy{Hold: ">=2.0.0 <2.5.0"}}, want: offerWant{
				update: "2.4.0", security: "2.3.1",
				held: &heldWords{Version: "3.0.0", Reason: "held by the policy >=2.0.0 <2.5.0"},
				between: []offerRow{
					{version: "3.0.0", offer: ReleaseHeld, reason: "held by the policy >=2.0.0 <2.5.0"},
					{version: "2.6.0", offer: ReleaseHeld, reason: "held by the policy >=2.0.0 <2.5.0"},
					{version: "2.5.0", offer: ReleaseHeld, reason: "held by the policy >=2.0.0 <2.5.0"},
					{version: "2.4.0", offer: ReleaseOffered},
					{version: "2.3.2", offer: ReleaseSuperseded},
					{version: "2.3.1", offer: ReleaseSuperseded},
				}}},
		{name: "security skips the soak and tier security", releases: recent, installed: "2.3.0",
			opts: OfferOptions{Policy: Policy{Offer: OfferSecurity, Soak: "3d"}, Now: offerNow}, want: offerWant{
				update: "3.0.0", security: "3.0.0",
				between: []offerRow{
					{version: "3.0.0", offer: ReleaseOffered},
					{version: "2.4.0", offer: ReleaseNotOffered, reason: securityWords},
					{version: "2.3.1", offer: ReleaseSuperseded},
				}}},
		{name: "security skips the soak and tier patch", releases: recent[1:], installed: "2.3.0",
			opts: OfferOptions{Policy: Policy{Offer: OfferPatch, Soak: "3d"}, Now: offerNow}, want: offerWant{
				update: "2.3.1", security: "2.3.1",
				held: &heldWords{Version: "2.4.0", Reason: patchWords},
				between: []offerRow{
					{version: "2.4.0", offer: ReleaseNotOffered, reason: patchWords},
					{version: "2.3.1", offer: ReleaseOffered},
				}}},
		{name: "security does not skip the hold", releases: recent, installed: "2.3.0",
			opts: OfferOptions{Policy: Policy{Offer: OfferSecurity, Soak: "3d", Hold: "<3.0.0"}, Now: offerNow}, want: offerWant{
				update: "2.3.1", security: "2.3.1",
				held: &heldWords{Version: "3.0.0", Reason: "held by the policy <3.0.0"},
				between: []offerRow{
					{version: "3.0.0", offer: ReleaseHeld, reason: "held by the policy <3.0.0"},
					{version: "2.4.0", offer: ReleaseNotOffered, reason: securityWords},
					{version: "2.3.1", offer: ReleaseOffered},
				}}},
		{name: "skip 2.4.0 before 2.5.0", releases: skips[1:], installed: "2.2.0",
			opts: OfferOptions{Skipped: "2.4.0"}, want: offerWant{
				update: "2.3.1", security: "2.3.1", skipped: "2.4.0",
				between: []offerRow{
					{version: "2.4.0", offer: ReleaseSkipped, reason: "skipped"},
					{version: "2.3.1", offer: ReleaseOffered},
					{version: "2.3.0", offer: ReleaseSkipped, reason: "skipped"},
				}}},
		// Once a newer release is offered, the skip hides nothing that would
		// be offered: the releases still read "skipped", the result not.
		{name: "skip 2.4.0 then 2.5.0", releases: skips, installed: "2.2.0",
			opts: OfferOptions{Skipped: "2.4.0"}, want: offerWant{
				update: "2.5.0", security: "2.3.1",
				between: []offerRow{
					{version: "2.5.0", offer: ReleaseOffered},
					{version: "2.4.0", offer: ReleaseSkipped, reason: "skipped"},
					{version: "2.3.1", offer: ReleaseSuperseded},
					{version: "2.3.0", offer: ReleaseSkipped, reason: "skipped"},
				}}},
		{name: "skip hides a blocked release", releases: offerReleases(), installed: "2.3.0",
			opts: OfferOptions{Skipped: "3.0.0"}, want: offerWant{
				update: "2.3.1", security: "2.3.1", skipped: "3.0.0",
				between: []offerRow{
					{version: "3.0.0", offer: ReleaseSkipped, reason: "skipped"},
					{version: "2.6.0", offer: ReleaseSkipped, reason: "skipped"},
					{version: "2.5.0", offer: ReleaseSkipped, reason: "skipped"},
					{version: "2.4.0", offer: ReleaseSkipped, reason: "skipped"},
					{version: "2.3.2", offer: ReleaseSkipped, reason: "skipped"},
					{version: "2.3.1", offer: ReleaseOffered},
				}}},
		// The fix is offered whatever the tier and the soak; the component's
		// security update stays what its publisher marks (none here): the
		// advisory makes it vulnerable, until dismissed.
		{name: "advisory fix tier patch soak", releases: npm, advisory: npmAdvisory, installed: "1.0.0",
			opts: soak7(OfferPatch), want: offerWant{
				update: "1.0.3", security: "1.0.3",
				held: &heldWords{Version: "2.0.0", Reason: patchWords},
				between: []offerRow{
					{version: "2.0.0", offer: ReleaseNotOffered, reason: patchWords},
					{version: "1.1.0", offer: ReleaseNotOffered, reason: patchWords},
					{version: "1.0.3", offer: ReleaseOffered},
					{version: "1.0.1", offer: ReleaseSuperseded},
				}}},
		// 1.1.0 and 2.0.0 carry the fix too, but are not security releases:
		// they wait for their soak.
		{name: "advisory fix soak", releases: npm, advisory: npmAdvisory, installed: "1.0.0",
			opts: soak7(OfferAll), want: offerWant{
				update:   "1.0.3",
				security: "1.0.3",
				waiting:  &Waiting{Version: "2.0.0", Until: at(offerNow.Add(-time.Hour + 7*24*time.Hour))},
				next:     at(offerNow.Add(-time.Hour + 7*24*time.Hour)),
				between: []offerRow{
					{version: "2.0.0", offer: ReleaseWaiting, until: at(offerNow.Add(-time.Hour + 7*24*time.Hour)), reason: "waits until 8 Dec 11:00 UTC (soak 7 days)"},
					{version: "1.1.0", offer: ReleaseWaiting, until: at(offerNow.Add(-time.Hour + 7*24*time.Hour)), reason: "waits until 8 Dec 11:00 UTC (soak 7 days)"},
					{version: "1.0.3", offer: ReleaseOffered},
					{version: "1.0.1", offer: ReleaseSuperseded},
				}}},
		{name: "advisory not affecting the installed", releases: npm, advisory: npmAdvisory, installed: "1.0.3",
			opts: soak7(OfferPatch), want: offerWant{
				held: &heldWords{Version: "2.0.0", Reason: patchWords},
				between: []offerRow{
					{version: "2.0.0", offer: ReleaseNotOffered, reason: patchWords},
					{version: "1.1.0", offer: ReleaseNotOffered, reason: patchWords},
				}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ev := evaluateReleases(t, tc.releases, tc.advisory, tc.installed)
			if err := ev.Offer(tc.installed, tc.opts); err != nil {
				t.Fatal(err)
			}
			checkOffer(t, &ev, tc.want)
			first := ev
			first.Releases = append([]ReleaseStatus(nil), ev.Releases...)
			if err := ev.Offer(tc.installed, tc.opts); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ev, first) {
				t.Errorf("a second Offer differs:\n%+v\n%+v", ev, first)
			}
		})
	}
}

// The zero options give what Evaluate gave, after any other offer, and a
// security release found through an advisory does not mark the document's
// release.
func TestOfferZeroOptionsIsEvaluate(t *testing.T) {
	t.Parallel()
	ev := evaluateReleases(t, offerReleases(), nil, "2.3.0")
	want := ev
	want.Releases = append([]ReleaseStatus(nil), ev.Releases...)
	if err := ev.Offer("2.3.0", OfferOptions{Policy: Policy{Offer: OfferSecurity, Soak: "3d", Hold: "<2.5.0"}, Skipped: "2.4.0", Now: offerNow}); err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(ev, want) {
		t.Fatal("the policy changed nothing")
	}
	if err := ev.Offer("2.3.0", OfferOptions{}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ev, want) {
		t.Errorf("Offer with zero options:\n%+v\nEvaluate:\n%+v", ev, want)
	}
}

// The check adds the feeds' advisories after Evaluate and offers again:
// the release that fixes one becomes the security release.
func TestOfferMergedAdvisory(t *testing.T) {
	t.Parallel()
	npm := []Release{{Version: "1.1.0"}, {Version: "1.0.3"}, {Version: "1.0.1"}}
	ev := evaluateReleases(t, npm, nil, "1.0.0")
	if ev.Security {
		t.Fatalf("security without an advisory: %+v", ev.SecurityRelease)
	}
	ev.Advisories = append(ev.Advisories, AdvisoryMatch{Advisory: Advisory{ID: "OSV-1", Affected: "<1.0.2", FixedIn: "1.0.2"}})
	if err := ev.Offer("1.0.0", OfferOptions{Policy: Policy{Offer: OfferSecurity}}); err != nil {
		t.Fatal(err)
	}
	checkOffer(t, &ev, offerWant{update: "1.0.3", security: "1.0.3",
		held: &heldWords{Version: "1.1.0", Reason: securityWords},
		between: []offerRow{
			{version: "1.1.0", offer: ReleaseNotOffered, reason: securityWords},
			{version: "1.0.3", offer: ReleaseOffered},
			{version: "1.0.1", offer: ReleaseNotOffered, reason: securityWords},
		}})
	if ev.Releases[1].Security {
		t.Error("the release list marks 1.0.3 security: only SecurityRelease says it")
	}
	// SecurityFix says which releases are security releases for this site:
	// the oldest at or above the fixed version, not a later one.
	for i, want := range []bool{false, true, false} {
		if ev.Releases[i].SecurityFix != want {
			t.Errorf("%s: SecurityFix %v, want %v", ev.Releases[i].Version, ev.Releases[i].SecurityFix, want)
		}
	}
}

func TestOfferInvalid(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		installed string
		opts      OfferOptions
		want      string
	}{
		"installed": {installed: "2.3", want: `installed version "2.3"`},
		"soak":      {installed: "2.3.0", opts: OfferOptions{Policy: Policy{Soak: "soon"}}, want: `soak "soon"`},
		"hold":      {installed: "2.3.0", opts: OfferOptions{Policy: Policy{Hold: "later"}}, want: "hold"},
		"skipped":   {installed: "2.3.0", opts: OfferOptions{Skipped: "v2.4"}, want: `skipped version "v2.4"`},
		"tier":      {installed: "2.3.0", opts: OfferOptions{Policy: Policy{Offer: "weekly"}}, want: `offer "weekly"`},
	} {
		ev := evaluateReleases(t, offerReleases(), nil, "2.3.0")
		err := ev.Offer(tc.installed, tc.opts)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Offer = %v, want ErrInvalid containing %q", name, err, tc.want)
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    Policy
		want string // "" valid
	}{
		{p: Policy{}},
		{p: Policy{Offer: OfferAll, Hold: "<3.0.0", Soak: "3d"}},
		{p: Policy{Offer: OfferMinor, Soak: "72h"}},
		{p: Policy{Offer: OfferPatch, Hold: ">=2.0.0 <2.5.0", Soak: "90m"}},
		{p: Policy{Offer: OfferSecurity, Soak: "365d"}},
		{p: Policy{Offer: "weekly"}, want: `offer "weekly" is not one of all, minor, patch, security`},
		{p: Policy{Offer: "All"}, want: `offer "All" is not one of`},
		{p: Policy{Hold: "later"}, want: "hold: "},
		{p: Policy{Hold: " "}, want: "hold: "},
		{p: Policy{Soak: "0s"}, want: `soak "0s" is not longer than zero`},
		{p: Policy{Soak: "0d"}, want: `soak "0d" is not longer than zero`},
		{p: Policy{Soak: "-1h"}, want: `soak "-1h" is not longer than zero`},
		{p: Policy{Soak: "400d"}, want: `soak "400d" is longer than a year`},
		// A day count whose duration would wrap round is refused, never a short soak.
		{p: Policy{Soak: "202163959358895d"}, want: `soak "202163959358895d" is longer than a year`},
		{p: Policy{Soak: "8761h"}, want: `soak "8761h" is longer than a year`},
		{p: Policy{Soak: "abc"}, want: `soak "abc" is not a duration`},
		{p: Policy{Soak: "3.5d"}, want: `soak "3.5d" is not a duration`},
	} {
		err := tc.p.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Validate(%+v) = %v", tc.p, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Validate(%+v) = %v, want %q", tc.p, err, tc.want)
		}
	}
	for soak, want := range map[string]time.Duration{"": 0, "3d": 72 * time.Hour, "72h": 72 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := (Policy{Soak: soak}).SoakDuration(); err != nil || got != want {
			t.Errorf("SoakDuration(%q) = %v, %v; want %v", soak, got, err, want)
		}
	}
}

func TestPolicyWith(t *testing.T) {
	t.Parallel()
	site := Policy{Offer: OfferMinor, Hold: "<3.0.0", Soak: "3d"}
	if got := site.With(Policy{}); got != site {
		t.Errorf("With(zero) = %+v", got)
	}
	if got, want := site.With(Policy{Offer: OfferSecurity}), (Policy{Offer: OfferSecurity, Hold: "<3.0.0", Soak: "3d"}); got != want {
		t.Errorf("With(offer) = %+v, want %+v", got, want)
	}
	if got, want := site.With(Policy{Hold: "<2.5.0", Soak: "72h"}), (Policy{Offer: OfferMinor, Hold: "<2.5.0", Soak: "72h"}); got != want {
		t.Errorf("With(hold, soak) = %+v, want %+v", got, want)
	}
	if got := (Policy{}).With(site); got != site {
		t.Errorf("zero.With(site) = %+v", got)
	}
	// A component clears the site's hold or soak with "none"; the result
	// never holds "none", so its text is one for every way of saying it.
	clear := Policy{Hold: None, Soak: None}
	if err := clear.Validate(); err != nil {
		t.Errorf("Validate(none) = %v", err)
	}
	if got, want := site.With(clear), (Policy{Offer: OfferMinor}); got != want {
		t.Errorf("With(none) = %+v, want %+v", got, want)
	}
	if got := (Policy{}).With(clear); !got.IsZero() || got.Text() != "" {
		t.Errorf("zero.With(none) = %+v (%q), want the zero policy", got, got.Text())
	}
}

func TestPolicyText(t *testing.T) {
	t.Parallel()
	for _, p := range []Policy{{}, {Offer: OfferPatch}, {Hold: ">=2.0.0 <2.5.0"}, {Soak: "3d"}, {Offer: OfferSecurity, Hold: "<3.0.0", Soak: "90m"}} {
		text := p.Text()
		if p.IsZero() != (text == "") {
			t.Errorf("Text(%+v) = %q", p, text)
		}
		got, err := ParsePolicyText(text)
		if err != nil || got != p {
			t.Errorf("ParsePolicyText(%q) = %+v, %v; want %+v", text, got, err, p)
		}
	}
	if got := (Policy{Offer: OfferMinor, Soak: "3d"}).Text(); got != `{"offer":"minor","soak":"3d"}` {
		t.Errorf("Text = %s", got)
	}
	if got := (Policy{Hold: "<3.0.0 || >=3.1.0"}).Text(); got != `{"hold":"<3.0.0 || >=3.1.0"}` {
		t.Errorf("Text = %s, want the range as written (not HTML-escaped)", got)
	}
	for _, bad := range []string{`{"offer":"weekly"}`, `{"soak":"0s"}`, `{"hold":"later"}`, `not json`} {
		if p, err := ParsePolicyText(bad); err == nil || !strings.Contains(err.Error(), "stored policy") || !p.IsZero() {
			t.Errorf("ParsePolicyText(%q) = %+v, %v; want a stored policy error", bad, p, err)
		}
	}
}

// A release whose core range is not a range (an npm package's
// peerDependencies: "workspace:*") requires an unknown core: it is never
// offered, says so, and stops neither the evaluation of the other
// releases nor that of the advisories.
func TestUnknownCoreIsNotOffered(t *testing.T) {
	t.Parallel()
	pkg := &Package{
		Releases: []Release{
			{Version: "2.0.0", RequiresCore: "workspace:*"},
			{Version: "1.2.0", RequiresCore: "latest"},
			{Version: "1.1.0", RequiresCore: ">=1.0.0"},
			{Version: "1.0.0", RequiresCore: "npm:@x/core@^2"},
		},
		Advisories: []Advisory{{ID: "A-1", Affected: "<1.1.0", FixedIn: "1.1.0"}},
	}
	ev, err := Evaluate(pkg, "blog", "1.0.0", "1.5.0")
	if err != nil {
		t.Fatal(err)
	}
	if ev.Update == nil || ev.Update.Version != "1.1.0" || ev.NeedsNewerCore || len(ev.Advisories) != 1 {
		t.Fatalf("update %+v, needs newer core %v, advisories %+v; want 1.1.0, false, A-1", ev.Update, ev.NeedsNewerCore, ev.Advisories)
	}
	for _, r := range ev.Between() {
		if (r.Version == "2.0.0" || r.Version == "1.2.0") != (r.Offer == ReleaseUnknownCore) {
			t.Errorf("%s: offer %q", r.Version, r.Offer)
		}
	}
	if want := `not offered: it requires an unknown core ("workspace:*" is not a version range)`; ev.Held == nil || ev.Held.Version != "2.0.0" || reasonWords(&ev.Held.Reason) != want {
		t.Errorf("held %+v, want 2.0.0: %s", ev.Held, want)
	}
}

// A site with no core (installed core "": a registered site's pushed
// lockfile names none) has nothing that holds a release back, whatever
// core the release requires; a core that does not parse is still an
// error.
func TestNoCoreHoldsNothingBack(t *testing.T) {
	t.Parallel()
	pkg := &Package{Releases: []Release{{Version: "2.0.0", RequiresCore: ">=3.0.0"}, {Version: "1.0.0"}}}
	ev, err := Evaluate(pkg, "blog", "1.0.0", "")
	if err != nil {
		t.Fatal(err)
	}
	if ev.Update == nil || ev.Update.Version != "2.0.0" || ev.NeedsNewerCore {
		t.Errorf("no core: update %+v, needs newer core %v; want 2.0.0, false", ev.Update, ev.NeedsNewerCore)
	}
	if _, err := Evaluate(pkg, "blog", "1.0.0", "next"); !errors.Is(err, ErrInvalid) {
		t.Errorf("core \"next\": %v, want ErrInvalid", err)
	}
}

// The fix is the oldest release the policy offers that clears every
// advisory such a release clears; the advisories a held release alone
// would clear are not among them.
func TestOfferFix(t *testing.T) {
	t.Parallel()
	rels := []Release{{Version: "1.1.0"}, {Version: "1.0.2"}, {Version: "1.0.1"}, {Version: "1.0.0"}}
	advs := []Advisory{{ID: "A", Affected: "<1.0.1", FixedIn: "1.0.1"}, {ID: "B", Affected: "<1.0.2", FixedIn: "1.0.2"}}
	for _, tc := range []struct {
		name   string
		policy Policy
		fix    string
		ids    string
	}{
		{"every release", Policy{}, "1.0.2", "[A B]"},
		{"security only", Policy{Offer: OfferSecurity}, "1.0.2", "[A B]"},
		{"held", Policy{Hold: "<1.0.2"}, "1.0.1", "[A]"},
	} {
		ev := evaluateReleases(t, rels, advs, "1.0.0")
		if err := ev.Offer("1.0.0", OfferOptions{Policy: tc.policy, Now: offerNow}); err != nil {
			t.Fatal(err)
		}
		if ev.Fix == nil || ev.Fix.Version != tc.fix || fmt.Sprint(ev.FixIDs) != tc.ids {
			t.Errorf("%s: fix %+v, fix ids %v; want %s, %s", tc.name, ev.Fix, ev.FixIDs, tc.fix, tc.ids)
		}
		if ev.Advisories[0].ClearedBy != "1.0.1" || ev.Advisories[1].ClearedBy != "1.0.2" {
			t.Errorf("%s: cleared by %q, %q", tc.name, ev.Advisories[0].ClearedBy, ev.Advisories[1].ClearedBy)
		}
	}
}

// Provenance lost is judged on what the site would install: the offered
// update, or with none the newest version, unless the policy holds it
// back (waiting, held, skipped): a release never offered raises no alarm.
func TestProvenanceLostFollowsTheOffer(t *testing.T) {
	t.Parallel()
	now := day(time.March, 10)
	provenance := map[string]bool{"1.0.0": true, "1.1.0": true}
	newest := Release{Version: "2.0.0", Released: day(time.March, 9)}
	needsCore := Release{Version: "2.0.0", Released: day(time.March, 1), RequiresCore: ">=9.0.0"}
	for _, c := range []struct {
		name     string
		releases []Release
		opts     OfferOptions
		want     string
	}{
		{"an update with provenance", []Release{{Version: "1.1.0"}}, OfferOptions{}, ""},
		{"an update without", []Release{{Version: "1.2.0"}}, OfferOptions{}, "1.2.0"},
		{"none offered, the newest needs a newer core", []Release{needsCore}, OfferOptions{}, "2.0.0"},
		{"none offered, the newest waits", []Release{newest}, OfferOptions{Policy: Policy{Soak: "3d"}, Now: now}, ""},
		{"none offered, the newest is held", []Release{newest}, OfferOptions{Policy: Policy{Hold: "<2.0.0"}}, ""},
		{"none offered, the newest is skipped", []Release{newest}, OfferOptions{Skipped: "2.0.0"}, ""},
		{"none offered, an older one is skipped", []Release{needsCore}, OfferOptions{Skipped: "1.5.0"}, "2.0.0"},
	} {
		ev, err := Evaluate(&Package{Releases: c.releases, Provenance: provenance}, "pkg", "1.0.0", "1.9.0")
		if err != nil {
			t.Fatal(err)
		}
		if err := ev.Offer("1.0.0", c.opts); err != nil {
			t.Fatal(err)
		}
		if ev.ProvenanceLost != c.want {
			t.Errorf("%s: %q, want %q", c.name, ev.ProvenanceLost, c.want)
		}
	}
	// An installed version without provenance loses none.
	ev, err := Evaluate(&Package{Releases: []Release{{Version: "1.2.0"}}, Provenance: map[string]bool{}}, "pkg", "1.0.0", "1.9.0")
	if err != nil || ev.ProvenanceLost != "" {
		t.Errorf("nothing to lose: %q, %v", ev.ProvenanceLost, err)
	}
}
