package osv

import (
	"encoding/json"
	"strings"
)

// Malicious reports whether the record marks a malicious package rather
// than a vulnerability: its id or an alias is a MAL- id (the OpenSSF
// malicious-packages database), its database_specific carries that
// database's "malicious-packages-origins", or it says GitHub's advisory
// type "malware". A CWE-506 ("embedded malicious code") alone does not
// count: GitHub gives it to hijacked releases of honest packages too,
// whose fix is an upgrade, not removal.
func (r *Record) Malicious() bool {
	if strings.HasPrefix(r.ID, "MAL-") {
		return true
	}
	for _, a := range r.Aliases {
		if strings.HasPrefix(a, "MAL-") {
			return true
		}
	}
	var ds struct {
		Type    string          `json:"type"`
		Origins json.RawMessage `json:"malicious-packages-origins"`
	}
	if len(r.DatabaseSpecific) == 0 || json.Unmarshal(r.DatabaseSpecific, &ds) != nil {
		return false
	}
	return strings.EqualFold(ds.Type, "malware") || len(raw(ds.Origins)) > 0
}

// CVSS returns the vector of the highest CVSS version among the record's
// severity[] (CVSS_V4 over CVSS_V3 over CVSS_V2), raw, for the caller to
// score; when the record has none, the affected entries' severity[] are
// read the same way. ok is false when there is no CVSS vector.
func (r *Record) CVSS() (vector string, ok bool) {
	if v, ok := bestCVSS(r.Severity); ok {
		return v, true
	}
	var all []Severity
	for _, a := range r.Affected {
		all = append(all, a.Severity...)
	}
	return bestCVSS(all)
}

func bestCVSS(sev []Severity) (string, bool) {
	for _, want := range []struct{ typ, prefix string }{
		{SeverityCVSSv4, "CVSS:4."}, {SeverityCVSSv3, "CVSS:3."}, {SeverityCVSSv2, ""},
	} {
		for _, s := range sev {
			if s.Type == want.typ && strings.HasPrefix(s.Score, want.prefix) {
				return s.Score, true
			}
		}
	}
	return "", false
}

// SeverityWord is GitHub's severity word from database_specific.severity
// ("LOW", "MODERATE", "HIGH", "CRITICAL"), lower-cased; "" when the record
// has none or another word.
func (r *Record) SeverityWord() string {
	var ds struct {
		Severity string `json:"severity"`
	}
	if len(r.DatabaseSpecific) == 0 || json.Unmarshal(r.DatabaseSpecific, &ds) != nil {
		return ""
	}
	switch w := strings.ToLower(ds.Severity); w {
	case "low", "moderate", "high", "critical":
		return w
	}
	return ""
}
