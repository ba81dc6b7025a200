package release

import "time"

// ReasonKind is why the policy does not offer a release (Reason.Kind):
// the domain decides it, readmodel.OfferReasonText words it when a page,
// the API or a message reads it (docs/policy.md "Say why").
type ReasonKind string

const (
	// ReasonUnknownCore: the release requires a core its range does not
	// name (Reason.RequiresCore, not a version range: "workspace:*").
	ReasonUnknownCore ReasonKind = "unknown_core"
	// ReasonHeld: the release is outside the policy's hold range
	// (Reason.Hold).
	ReasonHeld ReasonKind = "held"
	// ReasonNotOffered: the release is outside the policy's tier
	// (Reason.Tier).
	ReasonNotOffered ReasonKind = "not_offered"
	// ReasonSkipped: a plain release at or below the skipped version.
	ReasonSkipped ReasonKind = "skipped"
	// ReasonNoReleaseDate: the policy soaks releases (Reason.Soak) and
	// this one has no release date to soak from.
	ReasonNoReleaseDate ReasonKind = "no_release_date"
	// ReasonSoaking: the release has not soaked (Reason.Soak) yet: it is
	// offered from Reason.Until.
	ReasonSoaking ReasonKind = "soaking"
	// ReasonReleasedLate: the policy soaks releases (Reason.Soak) and this
	// one's release date is later than the last change of the document
	// that gives it (Release.ReleasedLate): a date written after the fact
	// cannot start a soak, so it waits, as one with no date does (fail
	// closed).
	ReasonReleasedLate ReasonKind = "released_late"
	// ReasonAwaitsApproval: the policy holds what the release brings (an
	// install script added or changed, a dependency from outside the
	// registry: Policy.Approve) until an admin approves that version and
	// that text.
	ReasonAwaitsApproval ReasonKind = "awaits_approval"
)

// ReasonKinds lists every ReasonKind; archtest's
// TestEveryReasonKindHasWords holds it to the constants above and to
// readmodel's words.
func ReasonKinds() []ReasonKind {
	return []ReasonKind{ReasonUnknownCore, ReasonHeld, ReasonNotOffered, ReasonSkipped, ReasonNoReleaseDate, ReasonSoaking, ReasonReleasedLate, ReasonAwaitsApproval}
}

// Reason is why Offer does not offer a release: a kind and the arguments
// that kind is worded with, never words. The evaluation stores it as this
// JSON (a release's "reason", component_results.held_reason), which
// readmodel.OfferReason reads.
type Reason struct {
	Kind ReasonKind `json:"kind"`
	// Hold is the policy's hold range (ReasonHeld).
	Hold string `json:"hold,omitempty"`
	// Tier is the policy's tier (ReasonNotOffered).
	Tier Tier `json:"tier,omitempty"`
	// Soak is the policy's soak, in nanoseconds in JSON
	// (ReasonNoReleaseDate, ReasonSoaking, ReasonReleasedLate).
	Soak time.Duration `json:"soak,omitempty"`
	// Until is when the release has soaked (ReasonSoaking).
	Until *time.Time `json:"until,omitempty"`
	// RequiresCore is the release's core range that is not a range
	// (ReasonUnknownCore).
	RequiresCore string `json:"requires_core,omitempty"`
}
