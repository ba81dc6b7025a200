package readmodel

import (
	"fmt"
	"strings"
	"time"
)

// OfferReason is why the policy does not offer a release, as the
// evaluation stores it (release.Reason's JSON: a release's "reason" in
// component_results.evaluation, and component_results.held_reason): a
// kind and its arguments, worded by OfferReasonText when read. Kind is
// one of release.ReasonKinds (archtest's TestEveryReasonKindHasWords holds
// the two together).
type OfferReason struct {
	Kind         string        `json:"kind"`
	Hold         string        `json:"hold,omitempty"`
	Tier         string        `json:"tier,omitempty"`
	Soak         time.Duration `json:"soak,omitempty"`
	Until        *time.Time    `json:"until,omitempty"`
	RequiresCore string        `json:"requires_core,omitempty"`
}

// OfferReasonText words why the policy does not offer a release, as every
// page, the API and the messages say it: "held by the policy <3.0.0",
// "not offered: this site takes security updates only", `not offered: it
// requires an unknown core ("workspace:*" is not a version range)`,
// "skipped", "waits: it has no release date to soak 3 days from", "waits
// until 4 Dec 18:00 UTC (soak 3 days)", "waits: its release date is later
// than the registry's last change to the package, so it cannot start a
// soak of 3 days". "" for a kind it does not know.
func OfferReasonText(r OfferReason) string {
	switch r.Kind {
	case "unknown_core":
		return fmt.Sprintf("not offered: it requires an unknown core (%q is not a version range)", r.RequiresCore)
	case "held":
		return "held by the policy " + r.Hold
	case "not_offered":
		return "not offered: this site " + TierText(r.Tier)
	case "skipped":
		return "skipped"
	case "no_release_date":
		return "waits: it has no release date to soak " + DurationText(r.Soak) + " from"
	case "awaits_approval":
		return "held until an admin approves what it brings (an install script, or a source outside the registry)"
	case "released_late":
		return "waits: its release date is later than the registry's last change to the package, so it cannot start a soak of " + DurationText(r.Soak)
	case "soaking":
		if r.Until == nil {
			return "waits for its soak (" + DurationText(r.Soak) + ")"
		}
		return "waits until " + r.Until.UTC().Format("2 Jan 15:04") + " UTC (soak " + DurationText(r.Soak) + ")"
	}
	return ""
}

// SoakSkippedText words why a security fix is offered before the
// policy's soak (release.ReleaseStatus.SoakSkipped): "offered before its
// soak: it fixes GHSA-…, GHSA-…" for the advisories of the installed
// version it clears, "offered before its soak: its publisher marks it a
// security release" when only the mark does.
func SoakSkippedText(advisories []string) string {
	if len(advisories) == 0 {
		return "offered before its soak: its publisher marks it a security release"
	}
	return "offered before its soak: it fixes " + strings.Join(advisories, ", ")
}
