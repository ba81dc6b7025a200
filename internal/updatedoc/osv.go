package updatedoc

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
)

// An advisory's OSV members (https://ossf.github.io/osv-schema/), with
// OSV's meaning: aliases, a CVSS vector, withdrawn, modified, references.
// They are optional; a document of format 1 without them means what it
// always meant.

// Limits on the OSV lists of one advisory.
const (
	// MaxAliases is the most aliases one advisory may list (one cap with
	// the feeds' OSV records).
	MaxAliases = readmodel.MaxAdvisoryAliases
	// MaxReferences is the most references one advisory may list.
	MaxReferences = readmodel.MaxAdvisoryReferences
)

type wireReference struct {
	Type *string `json:"type"`
	URL  *string `json:"url"`
}

// referenceTypes are OSV's reference types.
var referenceTypes = []string{"ADVISORY", "ARTICLE", "DETECTION", "DISCUSSION", "REPORT",
	"FIX", "INTRODUCED", "GIT", "PACKAGE", "EVIDENCE", "WEB"}

var (
	// A CVE id: the year, then at least four digits (CVE's own rule).
	cveID = regexp.MustCompile(`^CVE-[0-9]{4}-[0-9]{4,}$`)
	// A GitHub advisory id: three groups of four characters from GitHub's
	// alphabet (no vowels, no look-alikes), lower case as GitHub writes it.
	ghsaID = regexp.MustCompile(`^GHSA(-[23456789cfghjmpqrvwx]{4}){3}$`)
	// Any other database's OSV id: a prefix, a dash, then a plain tail
	// (PYSEC-2021-1, GO-2022-0001, RUSTSEC-2021-0001).
	otherID = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*-[A-Za-z0-9._:-]+$`)
)

// checkAlias refuses an alias that does not have the shape of an OSV id; a
// CVE or GHSA id must have exactly its database's shape, since auditors
// search by them.
func checkAlias(s string) error {
	upper := strings.ToUpper(s)
	switch {
	case len(s) > 100:
		return errors.New("longer than 100 characters")
	case strings.HasPrefix(upper, "CVE-"):
		if !cveID.MatchString(s) {
			return errors.New("not a CVE id (CVE-YYYY-NNNN)")
		}
	case strings.HasPrefix(upper, "GHSA-"):
		if !ghsaID.MatchString(s) {
			return errors.New("not a GitHub advisory id (GHSA-xxxx-xxxx-xxxx)")
		}
	case !otherID.MatchString(s):
		return errors.New("not an advisory id (PREFIX-ID, e.g. CVE-2026-1234 or GHSA-xxxx-xxxx-xxxx)")
	}
	return nil
}

// validateOSV checks the OSV members of an advisory, records every problem
// with c and fills them into a, whose Severity has been checked already: a
// vector without a word gives the word of the vector's base score (CVSS's
// qualitative scale); a word given beside a vector stays the publisher's
// word, whatever the score. at is the advisory's JSON path.
func (wa *wireAdvisory) validateOSV(c *checker, code string, i int, at string, a *release.Advisory) {
	place := func(field string) string {
		return fmt.Sprintf("advisories[%d].%s", i, field)
	}
	if len(wa.Aliases) > MaxAliases {
		c.add(at+".aliases", at, nil, "update document: %s of package %q has %d aliases, more than the limit of %d",
			place("aliases"), code, len(wa.Aliases), MaxAliases)
	}
	for j, alias := range wa.Aliases {
		jat := fmt.Sprintf("%s.aliases[%d]", at, j)
		if err := checkAlias(alias); err != nil {
			c.add(jat, at, err, "update document: %s %q of package %q is %v", place(fmt.Sprintf("aliases[%d]", j)), alias, code, err)
		} else if strings.EqualFold(alias, a.ID) || slices.ContainsFunc(wa.Aliases[:j], func(s string) bool { return strings.EqualFold(s, alias) }) {
			c.add(jat, at, nil, "update document: %s %q of package %q repeats the advisory's id or an earlier alias",
				place(fmt.Sprintf("aliases[%d]", j)), alias, code)
		}
	}
	if len(wa.Aliases) > 0 {
		a.Aliases = slices.Clone(wa.Aliases)
	}
	if wa.CVSS != nil {
		if score, err := release.CVSSBaseScore(*wa.CVSS); err != nil {
			c.add(at+".cvss", at, err, "update document: %s %q of package %q: %v", place("cvss"), *wa.CVSS, code, err)
		} else {
			a.CVSS, a.CVSSScore = *wa.CVSS, score
			if a.Severity == "" {
				a.Severity = release.SeverityOfScore(score)
			}
		}
	}
	for _, t := range []struct {
		field string
		in    *string
		out   *time.Time
	}{{"withdrawn", wa.Withdrawn, &a.Withdrawn}, {"modified", wa.Modified, &a.Modified}} {
		if t.in == nil {
			continue
		}
		v, err := parseTime(*t.in)
		if err != nil {
			c.add(at+"."+t.field, at, err, "update document: %s %q of package %q is not an RFC 3339 time", place(t.field), *t.in, code)
		}
		*t.out = v
	}
	if len(wa.References) > MaxReferences {
		c.add(at+".references", at, nil, "update document: %s of package %q has %d references, more than the limit of %d",
			place("references"), code, len(wa.References), MaxReferences)
	}
	for j, wr := range wa.References {
		ref := fmt.Sprintf("references[%d]", j)
		rat := at + "." + ref
		switch {
		case wr.Type == nil:
			c.add(rat+".type", rat, nil, "update document: %s of package %q is missing", place(ref+".type"), code)
		case !slices.Contains(referenceTypes, *wr.Type):
			c.add(rat+".type", rat, nil, "update document: %s %q of package %q is not one of %s",
				place(ref+".type"), *wr.Type, code, strings.Join(referenceTypes, ", "))
		}
		if wr.URL == nil || *wr.URL == "" {
			c.add(rat+".url", rat, nil, "update document: %s of package %q is missing", place(ref+".url"), code)
			continue
		}
		if err := checkURL(*wr.URL); err != nil {
			c.add(rat+".url", rat, err, "update document: %s %q of package %q: %v", place(ref+".url"), *wr.URL, code, err)
			continue
		}
		if wr.Type != nil {
			a.References = append(a.References, release.Reference{Type: *wr.Type, URL: *wr.URL})
		}
	}
}
