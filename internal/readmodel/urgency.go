package readmodel

import "slices"

// AttentionKinds are the kinds of AttentionItem, most urgent first: a
// known malicious package (remove it), an advisory exploited in the wild,
// an open advisory with no fix (nothing can be installed against it, so it is
// worse than a security update that can), then a security update, then a
// vulnerable version, then the trust downgrades (lost provenance, a new
// publisher, a lowered pin), then an offered update that brings a signal
// (among them by SignalRank: a new install script or an exotic source
// above a young dependency), then a deprecated installed version. It is
// the one urgency order: the summary's (the
// CASE of queries/summary.sql's ranked, which TestAttentionOrderMatchesSQL
// holds to it), the detail page's headline and the emails.
var AttentionKinds = []AttentionKind{KindMalicious, KindKnownExploited, KindVulnerableNoFix, KindSecurity, KindVulnerable,
	KindProvenanceLost, KindNewPublisher, KindPinDowngrade, KindBrings, KindDeprecated}

// Urgency is kind's place in AttentionKinds, 0 the most urgent; an unknown
// kind comes after all of them.
func Urgency(kind AttentionKind) int {
	if i := slices.Index(AttentionKinds, kind); i >= 0 {
		return i
	}
	return len(AttentionKinds)
}
