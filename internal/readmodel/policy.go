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
