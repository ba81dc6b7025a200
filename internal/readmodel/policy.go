package readmodel

import "time"

// PinDowngradeShown is how long the warning of a manifest sync that
// lowered a source's trust shows while the lowered pin stands
// (upcheck_pin_downgrade_shown in SQL; docs/policy.md).
const PinDowngradeShown = 14 * 24 * time.Hour

// TrustDowngradeKind is what lowered the trust of what a component would
// install (docs/policy.md "Trust going down"): the audit row's and the
// trust_downgrade event's "kind".
type TrustDowngradeKind string

const (
	// DowngradePin: a manifest sync lowered the threshold of the source's
	// pinned keys, or no longer pins some of them.
	DowngradePin TrustDowngradeKind = "pin"
	// DowngradeProvenance: the offered npm version was published without
	// the provenance the installed version has.
	DowngradeProvenance TrustDowngradeKind = "provenance_lost"
	// DowngradePublisher: the offered npm version was published by an
	// account that published none of the package's earlier versions.
	DowngradePublisher TrustDowngradeKind = "new_publisher"
)

// NewPublisherText says a version published by an account new to its
// package, as every page and notification words it.
func NewPublisherText(version, account string) string {
	return version + " was published by an account new to this package (" + account + ")"
}

// The members of a catalog row that say what the policy held back and
// what the site skipped (CatalogRow.Waiting, Held, Skipped): values of a
// row, not rows.

// WaitingRelease is a release not offered yet because it has not soaked:
// offered from Until (nil: it has no release date to soak from); Reason
// is the result's reason for it in words (OfferReasonText: "waits until
// 4 Dec 18:00 UTC (soak 3 days)"), ReasonKind its kind ("" when the
// result names none).
type WaitingRelease struct {
	Version    string     `json:"version"`
	Until      *time.Time `json:"until"`
	Reason     string     `json:"reason"`
	ReasonKind string     `json:"reason_kind,omitempty"`
}

// HeldRelease is a release the policy does not offer, with why in words
// (OfferReasonText: "held by the policy <3.0.0", "not offered: this site
// takes security updates only") and the reason's kind ("" when the result
// names none).
type HeldRelease struct {
	Version    string `json:"version"`
	Reason     string `json:"reason"`
	ReasonKind string `json:"reason_kind,omitempty"`
}

// SkippedVersion is a skipped version that hides a release: who skipped it
// (SkippedByText), when and why, and whether the manifest declares it (then
// the AdminCP cannot end it).
type SkippedVersion struct {
	Version      string    `json:"version"`
	Reason       string    `json:"reason"`
	By           string    `json:"by"`
	SkippedAt    time.Time `json:"at"`
	FromManifest bool      `json:"from_manifest"`
}

// SkippedByText words who skipped a version: "the manifest" for the
// manifest's skip, otherwise the actor as ActorText words it (a user's
// email).
func SkippedByText(actor string, fromManifest bool) string {
	if fromManifest {
		return "the manifest"
	}
	return ActorText(actor)
}
