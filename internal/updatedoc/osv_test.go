package updatedoc

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/release"
)

// advisoryWith returns a document whose package blog has one advisory
// ACME-1 affecting <2.0.0 with the members extra (JSON, starting with a
// comma) added.
func advisoryWith(extra string) string {
	return blogWith(`{"advisories": [{"id": "ACME-1", "affected": "<2.0.0"` + extra + `}]}`)
}

func parseAdvisory(t *testing.T, extra string) release.Advisory {
	t.Helper()
	doc, err := Parse([]byte(advisoryWith(extra)))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return doc.Packages["blog"].Advisories[0]
}

func TestParseOSVMembers(t *testing.T) {
	t.Parallel()
	a := parseAdvisory(t, `,
	  "aliases": ["CVE-2021-44228", "GHSA-jfh8-c2jp-5v3q", "PYSEC-2021-1"],
	  "cvss": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H",
	  "modified": "2024-03-05T16:24:51.123456Z",
	  "withdrawn": "2024-04-01T00:00:00Z",
	  "references": [{"type": "ADVISORY", "url": "https://nvd.nist.gov/vuln/detail/CVE-2021-44228"},
	                 {"type": "FIX", "url": "https://github.com/apache/logging-log4j2/pull/608"}]`)
	if want := []string{"CVE-2021-44228", "GHSA-jfh8-c2jp-5v3q", "PYSEC-2021-1"}; !slices.Equal(a.Aliases, want) {
		t.Errorf("Aliases = %v, want %v", a.Aliases, want)
	}
	if a.CVSS != "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H" || a.CVSSScore != 10.0 {
		t.Errorf("CVSS = %q %v, want the vector and 10.0", a.CVSS, a.CVSSScore)
	}
	if a.Severity != "critical" {
		t.Errorf("Severity = %q, want critical (derived from 10.0)", a.Severity)
	}
	if want := time.Date(2024, 3, 5, 16, 24, 51, 123456000, time.UTC); !a.Modified.Equal(want) {
		t.Errorf("Modified = %v, want %v", a.Modified, want)
	}
	if want := time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC); !a.Withdrawn.Equal(want) {
		t.Errorf("Withdrawn = %v, want %v", a.Withdrawn, want)
	}
	want := []release.Reference{{Type: "ADVISORY", URL: "https://nvd.nist.gov/vuln/detail/CVE-2021-44228"}, {Type: "FIX", URL: "https://github.com/apache/logging-log4j2/pull/608"}}
	if !slices.Equal(a.References, want) {
		t.Errorf("References = %v, want %v", a.References, want)
	}
}

func TestParseSeverityWordAndVector(t *testing.T) {
	t.Parallel()
	// The publisher's word stays, even when the score says otherwise.
	a := parseAdvisory(t, `, "severity": "low", "cvss": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"`)
	if a.Severity != "low" || a.CVSSScore != 9.8 {
		t.Errorf("Severity, score = %q, %v; want low, 9.8", a.Severity, a.CVSSScore)
	}
	// A vector alone gives its word; a 0.0 vector gives none.
	if a := parseAdvisory(t, `, "cvss": "CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N"`); a.Severity != "medium" {
		t.Errorf("Severity = %q, want medium (6.1)", a.Severity)
	}
	if a := parseAdvisory(t, `, "cvss": "CVSS:3.1/AV:L/AC:H/PR:H/UI:R/S:U/C:N/I:N/A:N"`); a.Severity != "" {
		t.Errorf("Severity = %q, want none (0.0)", a.Severity)
	}
	// No vector: nothing changes.
	if a := parseAdvisory(t, ``); a.Severity != "" || a.CVSS != "" || a.Aliases != nil || a.References != nil {
		t.Errorf("advisory without OSV members = %+v", a)
	}
}

func TestParseRefusesBadOSVMembers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ extra, want string }{
		{`, "aliases": ["CVE-21-1234"]`, `advisories[0].aliases[0] "CVE-21-1234" of package "blog" is not a CVE id`},
		{`, "aliases": ["CVE-2021-123"]`, `is not a CVE id`},
		{`, "aliases": ["cve-2021-1234"]`, `is not a CVE id`},
		{`, "aliases": ["GHSA-jfh8-c2jp-5v3"]`, `is not a GitHub advisory id`},
		{`, "aliases": ["GHSA-JFH8-C2JP-5V3Q"]`, `is not a GitHub advisory id`},
		{`, "aliases": ["GHSA-aaaa-bbbb-cccc"]`, `is not a GitHub advisory id`},
		{`, "aliases": ["nothing like an id"]`, `is not an advisory id`},
		{`, "aliases": ["<script>"]`, `is not an advisory id`},
		{`, "aliases": ["CVE-2021-1234", "CVE-2021-1234"]`, `aliases[1] "CVE-2021-1234" of package "blog" repeats`},
		{`, "aliases": ["acme-1"]`, `repeats the advisory's id`},
		{`, "aliases": "CVE-2021-1234"`, `aliases at line 1, column 138 must be an array`},
		{`, "cvss": "AV:N/AC:L/Au:N/C:P/I:P/A:P"`, `advisories[0].cvss "AV:N/AC:L/Au:N/C:P/I:P/A:P" of package "blog": not a CVSS v3.0, v3.1 or v4.0 vector`},
		{`, "cvss": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H"`, `not a valid CVSS v3.1 vector`},
		{`, "cvss": "CVSS:3.1/AV:X/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"`, `not a valid CVSS v3.1 vector`},
		{`, "cvss": "CVSS:4.0/AV:N/AC:L"`, `not a valid CVSS v4.0 vector`},
		{`, "cvss": ""`, `not a CVSS v3.0, v3.1 or v4.0 vector`},
		{`, "withdrawn": "2024-04-01"`, `advisories[0].withdrawn "2024-04-01" of package "blog" is not an RFC 3339 time`},
		{`, "modified": "yesterday"`, `advisories[0].modified "yesterday" of package "blog" is not an RFC 3339 time`},
		{`, "references": [{"url": "https://a.example/"}]`, `advisories[0].references[0].type of package "blog" is missing`},
		{`, "references": [{"type": "BLOG", "url": "https://a.example/"}]`, `references[0].type "BLOG" of package "blog" is not one of ADVISORY`},
		{`, "references": [{"type": "WEB"}]`, `references[0].url of package "blog" is missing`},
		{`, "references": [{"type": "WEB", "url": "javascript:alert(1)"}]`, `references[0].url "javascript:alert(1)" of package "blog": not an absolute http or https URL`},
		{`, "references": [{"type": "WEB", "url": "https://acme.example@evil.example/"}]`, `user information before "@" is not allowed`},
		{`, "references": [{"Type": "WEB", "url": "https://a.example/"}]`, `member "Type" must be spelled "type"`},
		{`, "Aliases": []`, `member "Aliases" must be spelled "aliases"`},
		{`, "aliases": [` + strings.Repeat(`"X-1",`, MaxAliases) + `"X-2"]`, fmt.Sprintf("has %d aliases, more than the limit of %d", MaxAliases+1, MaxAliases)},
		{`, "references": [` + strings.Repeat(`{"type": "WEB", "url": "https://a.example/"},`, MaxReferences) + `{"type": "WEB", "url": "https://a.example/"}]`,
			fmt.Sprintf("has %d references, more than the limit of %d", MaxReferences+1, MaxReferences)},
	} {
		_, err := Parse([]byte(advisoryWith(c.extra)))
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse with %s: %v; want an invalid error containing %q", c.extra, err, c.want)
		}
	}
}

func TestEvaluateLeavesWithdrawnAdvisoriesOut(t *testing.T) {
	t.Parallel()
	doc, err := Parse([]byte(blogWith(`{"advisories": [
	  {"id": "ACME-1", "affected": "<2.0.0", "withdrawn": "2024-04-01T00:00:00Z"},
	  {"id": "ACME-2", "affected": "<2.0.0"},
	  {"id": "ACME-3", "affected": ">=3.0.0", "withdrawn": "2024-04-01T00:00:00Z"}]}`)))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	ev, err := Evaluate(doc, "blog", "1.0.0", "1.0.0")
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	if len(ev.Advisories) != 1 || ev.Advisories[0].ID != "ACME-2" {
		t.Errorf("Advisories = %+v, want ACME-2 alone", ev.Advisories)
	}
	// Only a withdrawn advisory whose range holds the installed version.
	if len(ev.Withdrawn) != 1 || ev.Withdrawn[0].ID != "ACME-1" {
		t.Errorf("Withdrawn = %+v, want ACME-1 alone", ev.Withdrawn)
	}
}
