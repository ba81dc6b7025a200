package readmodel

import "strings"

// Severity is how bad an advisory or a security release is, as its
// publisher's document says ("low" to "critical"; an imported OSV record
// may say "moderate", another database's word for medium). It is kept as
// the publisher wrote it; Rank compares it.
type Severity string

// The severities upcheck ranks, lowest first.
const (
	SeverityLow      Severity = "low"
	SeverityMedium   Severity = "medium"
	SeverityModerate Severity = "moderate" // ranks as medium
	SeverityHigh     Severity = "high"
	SeverityCritical Severity = "critical"
)

// Rank orders severities, higher is worse: critical 4, high 3, medium or
// moderate 2, low 1, in any case of letters; an unknown or empty severity
// ranks 0, below low. It is the one rank of a severity in Go (emails,
// pages), and upcheck_severity_rank (the read model's SQL) ranks the same in
// SQL (the summary's order), which TestSeverityRankMatchesSQL holds it to.
func (s Severity) Rank() int {
	switch Severity(strings.ToLower(string(s))) {
	case SeverityCritical:
		return 4
	case SeverityHigh:
		return 3
	case SeverityMedium, SeverityModerate:
		return 2
	case SeverityLow:
		return 1
	}
	return 0
}
