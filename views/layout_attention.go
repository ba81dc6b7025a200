// The words that name what needs attention: a component and its problem
// ("Blog 2.3.0 → 2.4.0: stored XSS in comments (high)"), how long the site
// has known of it ("security fix available for 3 days") and when the next
// check runs ("today at 04:17 UTC"). The banner, the dashboard, the
// catalog and the detail page use them; the facts come from the summary
// and the read model (readmodel.AttentionItem, SecuritySince).

package views

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// bannerLimit is how many components and tree items the attention
// banner names (attentionEntries); the dashboard names every one the
// summary does, and its banner none.
const bannerLimit = 3

// attentionSubject is the component and the move that fixes it: "Blog
// 2.3.0 → 2.4.0", or "Gallery 3.1.0" when no installable update helps.
func attentionSubject(a readmodel.AttentionItem) string {
	s := nameOr(a.Name, a.Code) + " " + a.Installed
	if a.UpdateVersion != nil && a.Kind != readmodel.KindVulnerableNoFix && a.Kind != readmodel.KindProvenanceLost &&
		a.Kind != readmodel.KindNewPublisher && a.Kind != readmodel.KindMalicious && installableFix(a) {
		s += " → " + *a.UpdateVersion
	}
	return s
}

// installableFix: the security release, if any, can be installed now.
func installableFix(a readmodel.AttentionItem) bool {
	return a.SecurityRelease == nil || a.SecurityRelease.Installable
}

// attentionProblem words the problem after the subject: "stored XSS in
// comments (high)", "ACME-2026-009, no fix yet".
func attentionProblem(a readmodel.AttentionItem) string {
	if words, ok := intelProblem(a); ok {
		return words
	}
	adv, rel := a.Advisory, a.SecurityRelease
	switch {
	case a.Kind == readmodel.KindProvenanceLost && a.ProvenanceLost != nil:
		return "trust downgrade: " + provenanceLostText(*a.ProvenanceLost, a.Installed)
	case a.Kind == readmodel.KindProvenanceLost:
		return "trust downgrade: a newer version was published without the provenance this one has"
	case a.Kind == readmodel.KindNewPublisher && a.NewPublisher != nil:
		return "trust downgrade: " + readmodel.NewPublisherText(a.NewPublisher.Version, a.NewPublisher.Account)
	case a.Kind == readmodel.KindNewPublisher:
		return "trust downgrade: the offered version was published by an account new to this package"
	case a.Kind == readmodel.KindPinDowngrade && a.PinDowngrade != nil:
		return "trust downgrade: " + readmodel.PinDowngradeText(a.PinDowngrade.Reason)
	case a.Kind == readmodel.KindPinDowngrade:
		return "trust downgrade: " + readmodel.PinDowngradeText("")
	case a.Kind == readmodel.KindBrings:
		return bringsProblem(a)
	case a.Kind == readmodel.KindDeprecated && a.Deprecated != nil:
		return "deprecated by its publisher: " + cutText(*a.Deprecated, 120)
	case a.Kind == readmodel.KindDeprecated:
		return "deprecated by its publisher"
	case a.Kind == readmodel.KindVulnerableNoFix && adv != nil:
		return adv.ID + ", no fix yet"
	case a.Kind == readmodel.KindSecurity && rel != nil:
		what, severity := "security fix", rel.Severity
		switch {
		case adv != nil:
			what = advisoryWords(*adv)
		case rel.Summary != "":
			what = sentenceCase(rel.Summary)
		}
		if severity == "" && adv != nil {
			severity = adv.Severity
		}
		if !rel.Installable {
			what += ", fixed in " + rel.Version + ", which needs a newer core"
		}
		return withSeverity(what, severity)
	case adv != nil:
		what := advisoryWords(*adv)
		if adv.FixedIn != nil {
			what += ", fixed in " + *adv.FixedIn
		}
		return withSeverity(what, adv.Severity)
	}
	return "security update"
}

// advisoryWords names an advisory by its summary, or its id without one.
func advisoryWords(a readmodel.AdvisoryRef) string {
	if a.Summary == "" {
		return a.ID
	}
	return sentenceCase(a.Summary)
}

func withSeverity(s, severity string) string {
	if severity == "" {
		return s
	}
	return s + " (" + strings.ToLower(severity) + ")"
}

// sentenceCase lower-cases a publisher's summary for the middle of a
// sentence ("Stored XSS" → "stored XSS"), leaving an initialism alone
// ("SQL injection").
func sentenceCase(s string) string {
	s = strings.TrimRight(strings.TrimSpace(s), ".")
	first, n := utf8.DecodeRuneInString(s)
	second, _ := utf8.DecodeRuneInString(s[n:])
	if unicode.IsUpper(first) && !unicode.IsUpper(second) {
		return string(unicode.ToLower(first)) + s[n:]
	}
	return s
}

// attentionMoreText is the link after the named components.
func attentionMoreText(n int) string {
	return "and " + countNoun(n, "more component", "more components")
}

// exposureLead begins the exposure clock's sentence: a security release
// is a fix to install; otherwise an advisory affects the version.
func exposureLead(security bool) string {
	if security {
		return "Security fix available for "
	}
	return "Vulnerable for "
}

// exposureSecurity: the item's clock counts from a fix being available.
func exposureSecurity(a readmodel.AttentionItem) bool {
	return a.Kind == readmodel.KindSecurity
}

// needsAttention is whether the attention alert shows: a component needs
// attention (Summary.AttentionTotal, upcheck_needs_attention: a security
// problem, a trust downgrade or a deprecated installed version), as the
// catalog's attention filter lists it, or something in the installed tree
// does (Summary.TreeCounts: upcheck_tree_attention).
func needsAttention(s readmodel.Summary) bool {
	return s.AttentionTotal+s.TreeTotal() > 0
}

// attentionTone is the alert's tone: danger for a security problem,
// otherwise a warning.
func attentionTone(s readmodel.Summary) string {
	if s.MaliciousCount()+s.KnownExploitedCount()+s.SecurityUpdates+s.Vulnerable+s.TreeTotal() > 0 {
		return "alert-danger"
	}
	return "alert-warn"
}

// attentionAlertText is the alert's sentence, e.g. "2 security updates,
// 1 vulnerable component and 1 trust downgrade need attention."
// A known malicious package comes first, then an advisory exploited in the
// wild: "1 known malicious package: remove it. 2 security updates need
// attention."
func attentionAlertText(s readmodel.Summary) string {
	var parts []string
	if lead := intelAlertText(s.MaliciousCount(), s.KnownExploitedCount()); lead != "" {
		parts = append(parts, lead)
	}
	if s.SecurityUpdates+s.Vulnerable+s.TrustDowngrades+s.Deprecated > 0 {
		parts = append(parts, securityAlertText(s.SecurityUpdates, s.Vulnerable, s.TrustDowngrades, s.Deprecated))
	}
	if brings := bringsAlertText(s.Brings); brings != "" {
		parts = append(parts, brings)
	}
	// The installed tree's, in readmodel's words: "1 malicious package in
	// the dependencies and 2 vulnerable dependencies need attention."
	if s.TreeCounts != nil {
		if tree := readmodel.TreeAttentionText(*s.TreeCounts); tree != "" {
			parts = append(parts, tree)
		}
	}
	return strings.Join(parts, " ")
}

// securityAlertText words the counts: security updates, vulnerable
// components, trust downgrades, deprecated installed versions.
func securityAlertText(security, vulnerable, downgrades, deprecated int) string {
	var parts []string
	if security > 0 {
		parts = append(parts, countNoun(security, "security update", "security updates"))
	}
	if vulnerable > 0 {
		parts = append(parts, countNoun(vulnerable, "vulnerable component", "vulnerable components"))
	}
	if downgrades > 0 {
		parts = append(parts, countNoun(downgrades, "trust downgrade", "trust downgrades"))
	}
	if deprecated > 0 {
		parts = append(parts, countNoun(deprecated, "deprecated installed version", "deprecated installed versions"))
	}
	verb := "need"
	if len(parts) == 1 && security+vulnerable+downgrades+deprecated == 1 {
		verb = "needs"
	}
	list := parts[len(parts)-1]
	if len(parts) > 1 {
		list = strings.Join(parts[:len(parts)-1], ", ") + " and " + list
	}
	return list + " " + verb + " attention."
}

// untrustedText is the trust banner's sentence.
func untrustedText(n int) string {
	if n == 1 {
		return "1 update source needs a look at its trust: its document expires within " + expiryWarningText + ", or was refused for its signature, its key statement or a rollback."
	}
	return fmt.Sprintf("%d update sources need a look at their trust: a document expires within %s, or was refused for its signature, its key statement or a rollback.", n, expiryWarningText)
}

// cutText is s cut to max runes, with "…" when cut.
func cutText(s string, max int) string {
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
