// The detail page's update section: the component's policy in words,
// what it holds back and why, the skip, the trust downgrades, and every
// release between the installed version and the offered update
// (docs/policy.md).

package views

import (
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// DetailPolicy is a component's policy as the page words it; the zero
// value is no policy (every update, as soon as it is published).
type DetailPolicy struct {
	// Offer is the tier (all, minor, patch, security; "" is all), Hold the
	// range outside which nothing is offered ("" none), Soak the soak in
	// words ("3 days"; "" none), Approve the policy's approve ("scripts";
	// "" none).
	Offer, Hold, Soak, Approve string
}

// IsZero reports whether p is no policy.
func (p DetailPolicy) IsZero() bool { return p == DetailPolicy{} }

// PolicyText says a policy in words (readmodel.PolicyText): "takes patch
// updates · soak 3 days · hold <3.0.0"; "every update, as soon as it is
// published" for none. The detail API says it with the same words.
func PolicyText(p DetailPolicy) string {
	return readmodel.PolicyText(p.Offer, p.Hold, p.Soak, p.Approve)
}

// PolicyReleaseText is a release the policy does not offer now and why,
// in the evaluation's words: "2.5.0 waits until 4 Dec 18:00 UTC (soak 3
// days)", "3.0.0 held by the policy <3.0.0".
func PolicyReleaseText(r readmodel.HeldRelease) string {
	return r.Version + " " + r.Reason
}

// DetailSkip is the component's skipped version, and whether it hides a
// release now (a newer one is offered as usual once published).
type DetailSkip struct {
	readmodel.SkippedVersion
	Hides bool
}

// PinDowngradeText says a manifest sync that lowered the trust of the
// component's source, in the catalog's words (readmodel.PinDowngradeText)
// with its date: "On 2 Dec 2026, the manifest lowered the trust of this
// source's keys: the manifest requires 1 signature where it required 2".
func PinDowngradeText(at time.Time, reason string) string {
	return "On " + readmodel.DateText(at) + ", " + readmodel.PinDowngradeText(reason)
}

// offerText says what the policy makes of a release in between: the
// evaluation's reason when it is not offered, otherwise whether it is the
// update, comes with it, or needs a newer core.
func offerText(r ReleaseRow, update string) string {
	switch r.Offer {
	case "offered":
		return "Offered: the update to install"
	case "superseded":
		if update != "" {
			return "Comes with the update to " + update
		}
		return "Allowed; a newer release is offered"
	case "needs_newer_core":
		return "Not offered: needs a newer core"
	case "skipped":
		return "Skipped"
	}
	if r.OfferReason != "" {
		return upperFirst(r.OfferReason)
	}
	return ""
}

// offerTone is the tone of a release's offer badge.
func offerTone(offer string) tone {
	switch offer {
	case "offered":
		return toneInfo
	case "superseded":
		return toneOK
	case "waiting", "needs_newer_core", "unknown_core":
		return toneWarn
	}
	return toneNeutral
}

// betweenIntro says what the list of releases in between is.
func betweenIntro(p DetailProps) string {
	if p.UpdateVersion != "" {
		return "Every release between the installed version " + p.Installed + " and the offered update " + p.UpdateVersion +
			", newest first: installing " + p.UpdateVersion + " brings all of them."
	}
	return "Every release newer than the installed version " + p.Installed + ", newest first, with why it is not offered."
}

// hasPolicyFacts: the update section has something to say besides the
// releases in between.
func hasPolicyFacts(p DetailProps) bool {
	return !p.Policy.IsZero() || p.Waiting != nil || p.Held != nil
}

// newPublisherText is the offered npm version published by an account new
// to its package, as every page words it (readmodel.NewPublisherText).
func newPublisherText(p DetailProps) string {
	return readmodel.NewPublisherText(p.NewPublisherVersion, p.NewPublisher)
}

// betweenSummary is the folded list's summary: "171 releases in between".
func betweenSummary(n int) string {
	if n == 1 {
		return "1 release in between"
	}
	return thousands(n) + " releases in between"
}
