package catalog

import (
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
)

// OfferReason is why the policy does not offer a release, as the read
// model words it (readmodel.OfferReasonText): release.Reason's kind and
// arguments as plain values; the zero OfferReason (no words) for nil.
func OfferReason(r *release.Reason) readmodel.OfferReason {
	if r == nil {
		return readmodel.OfferReason{}
	}
	return readmodel.OfferReason{Kind: string(r.Kind), Hold: r.Hold, Tier: string(r.Tier), Soak: r.Soak, Until: r.Until,
		RequiresCore: r.RequiresCore}
}

// OfferReasonText words why the policy does not offer a release
// (readmodel.OfferReasonText); "" for nil.
func OfferReasonText(r *release.Reason) string {
	return readmodel.OfferReasonText(OfferReason(r))
}
