package web

import (
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/views"
)

// detailPolicyJSON is what GET /api/admin/plugins/{code} says of the
// component's policy (docs/policy.md), as its page does: the policy, the
// release that waits and the one held, the skip, every release between
// the installed version and the offered update, and the trust downgrades.
type detailPolicyJSON struct {
	Policy policyJSON `json:"policy"`
	// Waiting is the newest release newer than the offered update that has
	// not soaked, Held the newest one the policy does not offer; null: none.
	Waiting *waitingJSON `json:"waiting"`
	Held    *heldJSON    `json:"held"`
	// Skipped is the component's skip; null: none.
	Skipped *skippedJSON `json:"skipped"`
	// ReleasesBetween is every release between the installed version and
	// the offered update (the newest release when none is offered), newest
	// first; empty until evaluated.
	ReleasesBetween []betweenJSON `json:"releases_between"`
	// PinDowngrade is the manifest sync that lowered the keys the source
	// needs, NewPublisher the offered npm version published by an account
	// new to the package; null: none.
	PinDowngrade *pinDowngradeJSON `json:"pin_downgrade"`
	NewPublisher *newPublisherJSON `json:"new_publisher"`
}

// policyJSON is the component's policy; the members it does not set are
// null (offer: "all").
type policyJSON struct {
	Offer string  `json:"offer"`
	Hold  *string `json:"hold"`
	Soak  *string `json:"soak"`
	// Approve is the policy's approve ("scripts"); null: none.
	Approve *string `json:"approve"`
	// Text is the policy in the page's words.
	Text string `json:"text"`
}

type waitingJSON struct {
	Version string `json:"version"`
	// Until is when it soaks; null: it has no release date to soak from.
	Until  *time.Time `json:"until"`
	Reason string     `json:"reason"`
	// ReasonKind is the reason's kind (release.ReasonKind); omitted when
	// the evaluation lists none.
	ReasonKind string `json:"reason_kind,omitempty"`
}

type heldJSON struct {
	Version string `json:"version"`
	Reason  string `json:"reason"`
	// ReasonKind is the reason's kind (release.ReasonKind).
	ReasonKind string `json:"reason_kind,omitempty"`
}

type skippedJSON struct {
	Version      string    `json:"version"`
	Reason       string    `json:"reason"`
	By           string    `json:"by"`
	At           time.Time `json:"at"`
	FromManifest bool      `json:"from_manifest"`
	// Hides: the skip hides a release now.
	Hides bool `json:"hides"`
}

// betweenJSON is one release in between: its kind (security, plain),
// notes link and what the policy makes of it (release.ReleaseOffer),
// with why when it is not offered.
type betweenJSON struct {
	Version  string     `json:"version"`
	Released *time.Time `json:"released"`
	Kind     string     `json:"kind"`
	Summary  *string    `json:"summary"`
	URL      *string    `json:"url"`
	Offer    string     `json:"offer"`
	Reason   *string    `json:"reason"`
	// ReasonKind is the kind of Reason (release.ReasonKind); null when
	// it is offered.
	ReasonKind *string `json:"reason_kind"`
	// SoakSkipped: a security fix offered before the policy's soak, and
	// the advisories that justify it; null when it skipped none.
	SoakSkipped *soakSkippedJSON `json:"soak_skipped"`
}

type soakSkippedJSON struct {
	Advisories []string `json:"advisories"`
	Text       string   `json:"text"`
}

type pinDowngradeJSON struct {
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
	Text   string    `json:"text"`
}

type newPublisherJSON struct {
	Version string `json:"version"`
	Account string `json:"account"`
}

// policyBody is a policy as the API shows it.
func policyBody(pol release.Policy) policyJSON {
	out := policyJSON{Offer: string(release.OfferAll), Hold: opt(pol.Hold), Soak: opt(pol.Soak), Approve: opt(pol.Approve), Text: views.PolicyText(policyView(pol))}
	if pol.Offer != "" {
		out.Offer = string(pol.Offer)
	}
	return out
}

// The kinds of a release in between (betweenJSON.Kind).
const (
	releaseKindSecurity = "security"
	releaseKindPlain    = "plain"
)

func detailPolicyBody(d catalog.Detail) detailPolicyJSON {
	out := detailPolicyJSON{ReleasesBetween: []betweenJSON{}, Policy: policyBody(d.OfferPolicy)}
	if w := d.Waiting; w != nil {
		out.Waiting = &waitingJSON{Version: w.Version, Until: w.Until, Reason: waitingText(d, w.Version),
			ReasonKind: reasonKind(releaseReason(d, w.Version))}
	}
	if h := d.Held; h != nil {
		out.Held = &heldJSON{Version: h.Version, Reason: catalog.OfferReasonText(&h.Reason), ReasonKind: string(h.Reason.Kind)}
	}
	if s := d.Skip; s != nil {
		out.Skipped = &skippedJSON{Version: s.Version, Reason: s.Reason, By: readmodel.SkippedByText(s.By, s.FromManifest), At: s.At,
			FromManifest: s.FromManifest, Hides: d.SkipHides}
	}
	for _, r := range d.Between {
		b := betweenJSON{Version: r.Version, Kind: releaseKindPlain, Summary: opt(r.Summary), URL: opt(r.URL),
			Offer: string(r.Offer), Reason: opt(catalog.OfferReasonText(r.Reason)), ReasonKind: opt(reasonKind(r.Reason))}
		if r.Security {
			b.Kind = releaseKindSecurity
		}
		if r.SoakSkipped {
			b.SoakSkipped = &soakSkippedJSON{Advisories: append([]string{}, r.SoakSkippedFor...),
				Text: readmodel.SoakSkippedText(r.SoakSkippedFor)}
		}
		if !r.Released.IsZero() {
			at := r.Released.UTC()
			b.Released = &at
		}
		out.ReleasesBetween = append(out.ReleasesBetween, b)
	}
	if d.PinDowngrade != "" && d.PinDowngradedAt != nil {
		out.PinDowngrade = &pinDowngradeJSON{Reason: d.PinDowngrade, At: *d.PinDowngradedAt,
			Text: views.PinDowngradeText(*d.PinDowngradedAt, d.PinDowngrade)}
	}
	if d.NewPublisher != "" {
		out.NewPublisher = &newPublisherJSON{Version: d.NewPublisherVersion, Account: d.NewPublisher}
	}
	return out
}
