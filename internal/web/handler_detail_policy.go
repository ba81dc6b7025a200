package web

import (
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/views"
)

// detailPolicy fills what the detail page says of the component's policy
// (docs/policy.md): the policy, what it holds back, the skip, the trust
// downgrades and every release in between.
func detailPolicy(p *views.DetailProps, d catalog.Detail) {
	p.Policy = policyView(d.OfferPolicy)
	if w := d.Waiting; w != nil {
		p.Waiting = &readmodel.HeldRelease{Version: w.Version, Reason: waitingText(d, w.Version)}
	}
	if h := d.Held; h != nil {
		p.Held = &readmodel.HeldRelease{Version: h.Version, Reason: catalog.OfferReasonText(&h.Reason)}
	}
	if s := d.Skip; s != nil {
		p.Skip = &views.DetailSkip{SkippedVersion: readmodel.SkippedVersion{Version: s.Version, Reason: s.Reason,
			By: readmodel.SkippedByText(s.By, s.FromManifest), SkippedAt: s.At, FromManifest: s.FromManifest}, Hides: d.SkipHides}
	}
	for _, r := range d.Between {
		p.Between = append(p.Between, releaseView(r))
	}
}

// policyView is a policy as the views word it.
func policyView(pol release.Policy) views.DetailPolicy {
	out := views.DetailPolicy{Offer: string(pol.Offer), Hold: pol.Hold, Approve: pol.Approve}
	if soak, err := pol.SoakDuration(); err == nil && soak > 0 {
		out.Soak = readmodel.DurationText(soak)
	}
	return out
}

// releaseReason is why the evaluation does not offer the release version
// (nil when it lists none).
func releaseReason(d catalog.Detail, version string) *release.Reason {
	for _, r := range d.Releases {
		if r.Version == version && r.Reason != nil {
			return r.Reason
		}
	}
	return nil
}

// waitingText words why the release version waits ("waits until 4 Dec
// 18:00 UTC (soak 3 days)"); "waits" when the evaluation lists no reason.
func waitingText(d catalog.Detail, version string) string {
	if r := releaseReason(d, version); r != nil {
		return catalog.OfferReasonText(r)
	}
	return "waits"
}

// reasonKind is r's kind for the API; "" for nil.
func reasonKind(r *release.Reason) string {
	if r == nil {
		return ""
	}
	return string(r.Kind)
}

// releaseView is one release of the stored evaluation as the detail page
// lists it, with what the policy makes of it.
func releaseView(r release.ReleaseStatus) views.ReleaseRow {
	row := views.ReleaseRow{Version: r.Version, Security: r.Security, Severity: r.Severity, Summary: r.Summary, URL: r.URL,
		RequiresCore: r.RequiresCore, Installable: r.Installable, Offer: string(r.Offer), OfferReason: catalog.OfferReasonText(r.Reason)}
	if !r.Released.IsZero() {
		row.Released = r.Released.UTC().Format(time.DateOnly)
	}
	if r.SoakSkipped {
		row.SoakSkipped = readmodel.SoakSkippedText(r.SoakSkippedFor)
	}
	return row
}
