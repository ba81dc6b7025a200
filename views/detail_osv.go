package views

import (
	"net/url"

	"github.com/upcheck/upcheck/internal/readmodel"
	"strconv"
	"strings"
)

// AdvisoryOSV is what an advisory says in OSV's terms
// (https://ossf.github.io/osv-schema/), as the detail page shows it.
type AdvisoryOSV struct {
	// Aliases are other databases' ids of the same advisory (CVE, GHSA…).
	Aliases []string
	// CVSS is the vector, CVSSScore its base score as text ("9.8") and
	// CVSSRating the score's rating on CVSS's scale ("critical"); "" when
	// the advisory gives no vector.
	CVSS, CVSSScore, CVSSRating string
	// Modified and Withdrawn are display dates ("2024-07-03"), "" when not
	// given; a withdrawn advisory no longer counts.
	Modified, Withdrawn string
	References          []AdvisoryReference
	// Links are where aliases link to their public record (the
	// operator's UPCHECK_ADVISORY_LINKS); an alias none matches is text.
	Links readmodel.AdvisoryLinks
}

// AdvisoryReference is one of OSV's typed links (Type: ADVISORY, FIX, WEB…).
type AdvisoryReference struct {
	Type, URL string
}

// cvssText is the score next to the vector: "9.8 critical · CVSS:3.1/…".
func cvssText(o AdvisoryOSV) string {
	return o.CVSSScore + " " + o.CVSSRating + " · " + o.CVSS
}

// referenceTypeWords word OSV's reference types.
var referenceTypeWords = map[string]string{
	"ADVISORY": "Advisory", "ARTICLE": "Article", "DETECTION": "Detection", "DISCUSSION": "Discussion",
	"REPORT": "Report", "FIX": "Fix", "INTRODUCED": "Introduced by", "GIT": "Repository",
	"PACKAGE": "Package", "EVIDENCE": "Evidence", "WEB": "Web page",
}

// referenceText is a reference's link text: its type and where it goes
// ("Fix: github.com/acme/blog/commit/1a2b…").
func referenceText(r AdvisoryReference) string {
	word := referenceTypeWords[r.Type]
	if word == "" {
		word = "Link"
	}
	where := r.URL
	if u, err := url.Parse(r.URL); err == nil && u.Host != "" {
		where = u.Host + strings.TrimSuffix(u.EscapedPath(), "/")
	}
	if runes := []rune(where); len(runes) > 60 {
		where = string(runes[:59]) + "…"
	}
	return word + ": " + where
}

// referencesLabel is the references' disclosure: "References (3)".
func referencesLabel(n int) string {
	if n == 1 {
		return "1 reference"
	}
	return strconv.Itoa(n) + " references"
}
