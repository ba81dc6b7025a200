package views

import (
	"strconv"
	"strings"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// AdvisoryIntel is what the feeds say of an advisory on the detail page.
type AdvisoryIntel struct {
	// Origins: "publisher", "osv" or both; empty: the publisher's.
	Origins                   []string
	Malicious, KnownExploited bool
	// KEV is the KEV catalogue's entry of its CVE; nil: not in KEV.
	KEV *AdvisoryKEV
	// EPSS is its EPSS score; nil: not scored.
	EPSS *AdvisoryEPSS
}

// AdvisoryKEV is what KEV says of an exploited CVE (dates YYYY-MM-DD).
type AdvisoryKEV struct {
	CVE, DateAdded, DueDate, RequiredAction, Ransomware string
}

// AdvisoryEPSS is an EPSS probability and its percentile, 0 to 1.
type AdvisoryEPSS struct{ Score, Percentile float64 }

// The words of what the advisory feeds add (docs/feeds.md): a known
// malicious package, an advisory exploited in the wild (KEV), the EPSS
// probability and where an advisory comes from. The banner, the dashboard,
// the catalog and the detail page use them.

const (
	// MaliciousTitle is a malicious package's state, above every other.
	MaliciousTitle = "Known malicious package: remove it"
	// ExploitedWords is an advisory in the KEV catalogue.
	ExploitedWords = readmodel.ExploitedWords
	// KEVNote says what KEV's dates are, wherever one is shown.
	KEVNote = "KEV's dates are set for US federal agencies: a reference, not a deadline for every site."
)

// MalwareUnreadWords say, where the count of known malicious packages
// would be, that no feed that names them (osv, osv-api) was ever read, so
// none is known (Summary.Malicious is nil).
const MalwareUnreadWords = "Malicious packages not checked: no OSV advisory feed has been read"

// ExploitedUnreadWords say, where the count of components exploited in the
// wild would be, that the KEV catalogue (a kev feed) was never read, so no
// advisory is known to be exploited or not (Summary.KnownExploited is nil).
const ExploitedUnreadWords = "Exploited advisories not checked: the KEV catalogue has not been read"

// countOf is a count a feed gives, 0 while none was read (nil): for
// thresholds and the hidden count, never for words.
func countOf(n *int) int {
	if n == nil {
		return 0
	}
	return *n
}

// intelAlertText is the banner's lead for malicious packages and exploited
// advisories ("1 known malicious package: remove it. 2 components have an
// advisory exploited in the wild."); "" when there is neither.
func intelAlertText(malicious, exploited int) string {
	var parts []string
	switch {
	case malicious == 1:
		parts = append(parts, "1 known malicious package: remove it.")
	case malicious > 1:
		parts = append(parts, strconv.Itoa(malicious)+" known malicious packages: remove them.")
	}
	switch {
	case exploited == 1:
		parts = append(parts, "1 component has an advisory exploited in the wild.")
	case exploited > 1:
		parts = append(parts, strconv.Itoa(exploited)+" components have an advisory exploited in the wild.")
	}
	return strings.Join(parts, " ")
}

// intelProblem words a malicious or exploited item of the attention list;
// ok false for the other kinds.
func intelProblem(a readmodel.AttentionItem) (string, bool) {
	adv := a.Advisory
	switch a.Kind {
	case readmodel.KindMalicious:
		if adv != nil && adv.ClearedBy != nil {
			return readmodel.MalwareTitle + " (" + adv.ID + "): " + readmodel.NotAffectedText(*adv.ClearedBy), true
		}
		if adv != nil {
			return "known malicious package: remove it (" + adv.ID + ")", true
		}
		return "known malicious package: remove it", true
	case readmodel.KindKnownExploited:
		if adv == nil {
			return "an advisory is " + ExploitedWords, true
		}
		s := adv.ID + " is " + ExploitedWords
		if adv.KEVDue != nil && *adv.KEVDue != "" {
			s += " (KEV due date " + *adv.KEVDue + ", a US federal reference)"
		}
		return s, true
	}
	return "", false
}

// EPSSText is "EPSS 94.3 % · 99th percentile" (readmodel.EPSSWords); ""
// without a score.
func EPSSText(e *AdvisoryEPSS) string {
	if e == nil {
		return ""
	}
	return readmodel.EPSSWords(e.Score, e.Percentile)
}

// originsText says where an advisory comes from: "From the publisher and
// OSV". An advisory evaluated before the feeds said so is the publisher's.
func originsText(origins []string) string {
	if len(origins) == 0 {
		origins = []string{"publisher"}
	}
	words := make([]string, 0, len(origins))
	for _, o := range origins {
		switch o {
		case "publisher":
			words = append(words, "the publisher")
		case "osv":
			words = append(words, "OSV")
		default:
			words = append(words, o)
		}
	}
	if len(words) == 1 {
		return "From " + words[0]
	}
	return "From " + strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// ransomwareText is KEV's knownRansomwareCampaignUse in words.
func ransomwareText(use string) string {
	if strings.EqualFold(use, "Known") {
		return "Known to be used in ransomware campaigns"
	}
	return "Use in ransomware campaigns: not known"
}

// kevDue is the soonest KEV due date among open advisories ("" none): the
// exposure clock shows it.
func kevDue(advisories []AdvisoryRow) string {
	due := ""
	for _, a := range advisories {
		if a.Dismissed || a.KEV == nil || a.KEV.DueDate == "" {
			continue
		}
		if due == "" || a.KEV.DueDate < due {
			due = a.KEV.DueDate
		}
	}
	return due
}
