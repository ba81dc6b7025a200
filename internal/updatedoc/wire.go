package updatedoc

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/release"
)

// The wire types use pointers where "absent" and "zero" must be told apart,
// and strings for times so that a bad time can be reported by field name
// instead of by the time package's layout message.
type wireDocument struct {
	// Format is read by Parse's probe before anything else; it is here so
	// that the member check (whose schema is derived from these types)
	// knows the name.
	Format    json.RawMessage         `json:"format"`
	Publisher *string                 `json:"publisher"`
	Sequence  *int64                  `json:"sequence"`
	Expires   *string                 `json:"expires"`
	Packages  map[string]*wirePackage `json:"packages"`
}

type wirePackage struct {
	Releases   []wireRelease  `json:"releases"`
	Advisories []wireAdvisory `json:"advisories"`
}

type wireRelease struct {
	Version      *string `json:"version"`
	Released     *string `json:"released"`
	RequiresCore *string `json:"requires_core"`
	Security     bool    `json:"security"`
	Severity     *string `json:"severity"`
	Summary      string  `json:"summary"`
	URL          string  `json:"url"`
}

type wireAdvisory struct {
	ID       string  `json:"id"`
	Severity *string `json:"severity"`
	Affected *string `json:"affected"`
	FixedIn  *string `json:"fixed_in"`
	Summary  string  `json:"summary"`
	URL      string  `json:"url"`
	// OSV's members (osv.go).
	Aliases    []string        `json:"aliases"`
	CVSS       *string         `json:"cvss"`
	Withdrawn  *string         `json:"withdrawn"`
	Modified   *string         `json:"modified"`
	References []wireReference `json:"references"`
}

// validate checks what decoding cannot and records every problem with c;
// the document it returns is only meaningful when there were none.
func (w *wireDocument) validate(c *checker) *Document {
	doc := &Document{Format: Format}

	if w.Publisher == nil || strings.TrimSpace(*w.Publisher) == "" {
		c.add("publisher", "", nil, "update document: publisher is missing")
	} else {
		doc.Publisher = *w.Publisher
	}

	switch {
	case w.Sequence == nil:
		c.add("sequence", "", nil, "update document: sequence is missing")
	case *w.Sequence < 0:
		c.add("sequence", "", nil, "update document: sequence %d is negative", *w.Sequence)
	default:
		doc.Sequence = *w.Sequence
	}

	if w.Expires != nil {
		t, err := parseTime(*w.Expires)
		if err != nil {
			c.add("expires", "", err, "update document: expires %q is not an RFC 3339 time", *w.Expires)
		}
		doc.Expires = t
	}

	if w.Packages == nil {
		c.add("packages", "", nil, "update document: packages is missing")
		return doc
	}
	if len(w.Packages) > MaxPackages {
		c.add("packages", "", nil, "update document: %d packages, more than the limit of %d", len(w.Packages), MaxPackages)
	}
	doc.Packages = make(map[string]*release.Package, len(w.Packages))
	codes := make([]string, 0, len(w.Packages))
	for code := range w.Packages {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	for _, code := range codes {
		wp := w.Packages[code]
		at := joinPath("packages", code)
		if strings.TrimSpace(code) == "" {
			c.add(at, "packages", nil, "update document: a package has an empty code")
			continue
		}
		if wp == nil {
			c.add(at, "packages", nil, "update document: package %q is null", code)
			continue
		}
		doc.Packages[code] = wp.validate(c, code, at)
	}
	return doc
}

func (wp *wirePackage) validate(c *checker, code, at string) *release.Package {
	if len(wp.Releases) > MaxReleasesPerPackage {
		c.add(at+".releases", at, nil, "update document: package %q has %d releases, more than the limit of %d",
			code, len(wp.Releases), MaxReleasesPerPackage)
	}
	if len(wp.Advisories) > MaxAdvisoriesPerPackage {
		c.add(at+".advisories", at, nil, "update document: package %q has %d advisories, more than the limit of %d",
			code, len(wp.Advisories), MaxAdvisoriesPerPackage)
	}
	p := &release.Package{
		Releases:   make([]release.Release, 0, len(wp.Releases)),
		Advisories: make([]release.Advisory, 0, len(wp.Advisories)),
	}
	for i, wr := range wp.Releases {
		rat := fmt.Sprintf("%s.releases[%d]", at, i)
		r := wr.validate(c, code, i, rat)
		// Two entries for one version would make "the newest release"
		// depend on their order; versions differing only in build metadata
		// are the same version.
		for j, earlier := range p.Releases {
			if v, ev := r.ParsedVersion(), earlier.ParsedVersion(); v != nil && ev != nil && ev.Equal(v) {
				c.add(rat+".version", rat, nil, "update document: releases[%d].version %q of package %q repeats releases[%d].version %q",
					i, r.Version, code, j, earlier.Version)
				break
			}
		}
		p.Releases = append(p.Releases, r)
	}
	for i, wa := range wp.Advisories {
		aat := fmt.Sprintf("%s.advisories[%d]", at, i)
		a := wa.validate(c, code, i, aat)
		// Dismissals are by id, so an id must name one advisory.
		for j, earlier := range p.Advisories {
			if strings.TrimSpace(a.ID) != "" && earlier.ID == a.ID {
				c.add(aat+".id", aat, nil, "update document: advisories[%d].id %q of package %q repeats advisories[%d].id",
					i, a.ID, code, j)
				break
			}
		}
		p.Advisories = append(p.Advisories, a)
	}
	return p
}

// validate checks release i of package code, whose JSON path is at.
func (wr *wireRelease) validate(c *checker, code string, i int, at string) release.Release {
	place := func(field string) string {
		return fmt.Sprintf("releases[%d].%s", i, field)
	}
	r := release.Release{
		Security: wr.Security,
		Summary:  wr.Summary,
		URL:      wr.URL,
	}
	if wr.Version == nil {
		c.add(at+".version", at, nil, "update document: %s of package %q is missing", place("version"), code)
	} else if v, err := release.ParseVersion(*wr.Version); err != nil {
		c.add(at+".version", at, err, "update document: %s %q of package %q is not a semantic version",
			place("version"), *wr.Version, code)
	} else {
		r.Version = *wr.Version
		r.SetParsedVersion(v)
	}
	if wr.Released != nil {
		t, err := parseTime(*wr.Released)
		if err != nil {
			c.add(at+".released", at, err, "update document: %s %q of package %q is not an RFC 3339 time",
				place("released"), *wr.Released, code)
		}
		r.Released = t
	}
	if wr.RequiresCore != nil {
		rng, err := release.ParseRange(*wr.RequiresCore)
		if err != nil {
			c.add(at+".requires_core", at, err, "update document: %s of package %q: %v", place("requires_core"), code, err)
		} else {
			r.RequiresCore = rng.String()
			r.SetParsedRequiresCore(rng)
		}
	}
	if wr.Severity != nil {
		if err := checkSeverity(*wr.Severity); err != nil {
			c.add(at+".severity", at, err, "update document: %s %q of package %q is not one of %s",
				place("severity"), *wr.Severity, code, strings.Join(severities, ", "))
		}
		r.Severity = *wr.Severity
	}
	if err := checkURL(wr.URL); err != nil {
		c.add(at+".url", at, err, "update document: %s %q of package %q: %v", place("url"), wr.URL, code, err)
	}
	return r
}

// validate checks advisory i of package code, whose JSON path is at.
func (wa *wireAdvisory) validate(c *checker, code string, i int, at string) release.Advisory {
	place := func(field string) string {
		return fmt.Sprintf("advisories[%d].%s", i, field)
	}
	a := release.Advisory{ID: wa.ID, Summary: wa.Summary, URL: wa.URL}
	if strings.TrimSpace(wa.ID) == "" {
		c.add(at+".id", at, nil, "update document: %s of package %q is missing", place("id"), code)
	} else if len(wa.ID) > MaxAdvisoryID {
		c.add(at+".id", at, nil, "update document: %s of package %q has %d bytes, more than the limit of %d",
			place("id"), code, len(wa.ID), MaxAdvisoryID)
	}
	// An advisory that does not say which versions it affects cannot be
	// evaluated; guessing "all" or "none" would both be wrong somewhere.
	var rng *release.Range
	if wa.Affected == nil {
		c.add(at+".affected", at, nil, "update document: %s of package %q is missing", place("affected"), code)
	} else if parsed, err := release.ParseRange(*wa.Affected); err != nil {
		c.add(at+".affected", at, err, "update document: %s of package %q: %v", place("affected"), code, err)
	} else {
		rng = &parsed
		a.Affected = rng.String()
		a.SetParsedAffected(*rng)
	}
	if wa.FixedIn != nil {
		fixed, err := release.ParseVersion(*wa.FixedIn)
		switch {
		case err != nil:
			c.add(at+".fixed_in", at, err, "update document: %s %q of package %q is not a semantic version",
				place("fixed_in"), *wa.FixedIn, code)
		// A fix that is itself affected is a contradiction the operator
		// would act on ("update to 2.4.0") and stay vulnerable.
		case rng != nil && rng.Contains(fixed):
			c.add(at+".fixed_in", at, nil, "update document: %s %q of package %q is inside its affected range %q",
				place("fixed_in"), *wa.FixedIn, code, a.Affected)
		}
		a.FixedIn = *wa.FixedIn
	}
	if wa.Severity != nil {
		if err := checkSeverity(*wa.Severity); err != nil {
			c.add(at+".severity", at, err, "update document: %s %q of package %q is not one of %s",
				place("severity"), *wa.Severity, code, strings.Join(severities, ", "))
		}
		a.Severity = *wa.Severity
	}
	if err := checkURL(wa.URL); err != nil {
		c.add(at+".url", at, err, "update document: %s %q of package %q: %v", place("url"), wa.URL, code, err)
	}
	wa.validateOSV(c, code, i, at, &a)
	return a
}

func parseTime(s string) (time.Time, error) {
	return time.Parse(time.RFC3339, s)
}

func checkSeverity(s string) error {
	if slices.Contains(severities, s) {
		return nil
	}
	return errors.New("unknown severity")
}

// checkURL accepts an empty URL or an absolute http(s) one without user
// information. The admin UI turns these URLs into links; a "javascript:"
// or "data:" URL from a publisher must never get that far, and neither may
// https://acme.example@evil.example/, which reads as a link to acme.example
// but goes to evil.example (no legitimate release notes need a user name
// in the link, and a password there would be published to every site).
func checkURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return errors.New("not a valid URL")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("not an absolute http or https URL")
	}
	if u.User != nil {
		return fmt.Errorf(`user information before "@" is not allowed (the link goes to %s)`, u.Host)
	}
	return nil
}
