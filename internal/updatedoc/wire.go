package updatedoc

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
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

func (w *wireDocument) validate() (*Document, error) {
	doc := &Document{Format: Format}

	if w.Publisher == nil || strings.TrimSpace(*w.Publisher) == "" {
		return nil, invalidf(nil, "update document: publisher is missing")
	}
	doc.Publisher = *w.Publisher

	if w.Sequence == nil {
		return nil, invalidf(nil, "update document: sequence is missing")
	}
	if *w.Sequence < 0 {
		return nil, invalidf(nil, "update document: sequence %d is negative", *w.Sequence)
	}
	doc.Sequence = *w.Sequence

	if w.Expires != nil {
		t, err := parseTime(*w.Expires)
		if err != nil {
			return nil, invalidf(err, "update document: expires %q is not an RFC 3339 time", *w.Expires)
		}
		doc.Expires = t
	}

	if w.Packages == nil {
		return nil, invalidf(nil, "update document: packages is missing")
	}
	if len(w.Packages) > MaxPackages {
		return nil, invalidf(nil, "update document: %d packages, more than the limit of %d", len(w.Packages), MaxPackages)
	}
	doc.Packages = make(map[string]*Package, len(w.Packages))
	codes := make([]string, 0, len(w.Packages))
	for code := range w.Packages {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	for _, code := range codes {
		wp := w.Packages[code]
		if strings.TrimSpace(code) == "" {
			return nil, invalidf(nil, "update document: a package has an empty code")
		}
		if wp == nil {
			return nil, invalidf(nil, "update document: package %q is null", code)
		}
		p, err := wp.validate(code)
		if err != nil {
			return nil, err
		}
		doc.Packages[code] = p
	}
	return doc, nil
}

func (wp *wirePackage) validate(code string) (*Package, error) {
	if len(wp.Releases) > MaxReleasesPerPackage {
		return nil, invalidf(nil, "update document: package %q has %d releases, more than the limit of %d",
			code, len(wp.Releases), MaxReleasesPerPackage)
	}
	if len(wp.Advisories) > MaxAdvisoriesPerPackage {
		return nil, invalidf(nil, "update document: package %q has %d advisories, more than the limit of %d",
			code, len(wp.Advisories), MaxAdvisoriesPerPackage)
	}
	p := &Package{
		Releases:   make([]Release, 0, len(wp.Releases)),
		Advisories: make([]Advisory, 0, len(wp.Advisories)),
	}
	for i, wr := range wp.Releases {
		r, err := wr.validate(code, i)
		if err != nil {
			return nil, err
		}
		// Two entries for one version would make "the newest release"
		// depend on their order; versions differing only in build metadata
		// are the same version.
		for j, earlier := range p.Releases {
			if earlier.version.Equal(r.version) {
				return nil, invalidf(nil, "update document: releases[%d].version %q of package %q repeats releases[%d].version %q",
					i, r.Version, code, j, earlier.Version)
			}
		}
		p.Releases = append(p.Releases, r)
	}
	for i, wa := range wp.Advisories {
		a, err := wa.validate(code, i)
		if err != nil {
			return nil, err
		}
		// Dismissals are by id, so an id must name one advisory.
		for j, earlier := range p.Advisories {
			if earlier.ID == a.ID {
				return nil, invalidf(nil, "update document: advisories[%d].id %q of package %q repeats advisories[%d].id",
					i, a.ID, code, j)
			}
		}
		p.Advisories = append(p.Advisories, a)
	}
	return p, nil
}

func (wr *wireRelease) validate(code string, i int) (Release, error) {
	place := func(field string) string {
		return fmt.Sprintf("releases[%d].%s", i, field)
	}
	if wr.Version == nil {
		return Release{}, invalidf(nil, "update document: %s of package %q is missing", place("version"), code)
	}
	v, err := semver.StrictNewVersion(*wr.Version)
	if err != nil {
		return Release{}, invalidf(err, "update document: %s %q of package %q is not a semantic version",
			place("version"), *wr.Version, code)
	}
	r := Release{
		Version:  *wr.Version,
		Security: wr.Security,
		Summary:  wr.Summary,
		URL:      wr.URL,
		version:  v,
	}
	if wr.Released != nil {
		t, err := parseTime(*wr.Released)
		if err != nil {
			return Release{}, invalidf(err, "update document: %s %q of package %q is not an RFC 3339 time",
				place("released"), *wr.Released, code)
		}
		r.Released = t
	}
	if wr.RequiresCore != nil {
		rng, err := ParseRange(*wr.RequiresCore)
		if err != nil {
			return Release{}, invalidf(err, "update document: %s of package %q: %v", place("requires_core"), code, err)
		}
		r.RequiresCore = rng.String()
		r.requiresCore = &rng
	}
	if wr.Severity != nil {
		if err := checkSeverity(*wr.Severity); err != nil {
			return Release{}, invalidf(err, "update document: %s %q of package %q is not one of %s",
				place("severity"), *wr.Severity, code, strings.Join(severities, ", "))
		}
		r.Severity = *wr.Severity
	}
	if err := checkURL(wr.URL); err != nil {
		return Release{}, invalidf(err, "update document: %s %q of package %q: %v", place("url"), wr.URL, code, err)
	}
	return r, nil
}

func (wa *wireAdvisory) validate(code string, i int) (Advisory, error) {
	place := func(field string) string {
		return fmt.Sprintf("advisories[%d].%s", i, field)
	}
	if strings.TrimSpace(wa.ID) == "" {
		return Advisory{}, invalidf(nil, "update document: %s of package %q is missing", place("id"), code)
	}
	a := Advisory{ID: wa.ID, Summary: wa.Summary, URL: wa.URL}
	// An advisory that does not say which versions it affects cannot be
	// evaluated; guessing "all" or "none" would both be wrong somewhere.
	if wa.Affected == nil {
		return Advisory{}, invalidf(nil, "update document: %s of package %q is missing", place("affected"), code)
	}
	rng, err := ParseRange(*wa.Affected)
	if err != nil {
		return Advisory{}, invalidf(err, "update document: %s of package %q: %v", place("affected"), code, err)
	}
	a.Affected = rng.String()
	a.affected = &rng
	if wa.FixedIn != nil {
		fixed, err := semver.StrictNewVersion(*wa.FixedIn)
		if err != nil {
			return Advisory{}, invalidf(err, "update document: %s %q of package %q is not a semantic version",
				place("fixed_in"), *wa.FixedIn, code)
		}
		// A fix that is itself affected is a contradiction the operator
		// would act on ("update to 2.4.0") and stay vulnerable.
		if rng.Contains(fixed) {
			return Advisory{}, invalidf(nil, "update document: %s %q of package %q is inside its affected range %q",
				place("fixed_in"), *wa.FixedIn, code, a.Affected)
		}
		a.FixedIn = *wa.FixedIn
	}
	if wa.Severity != nil {
		if err := checkSeverity(*wa.Severity); err != nil {
			return Advisory{}, invalidf(err, "update document: %s %q of package %q is not one of %s",
				place("severity"), *wa.Severity, code, strings.Join(severities, ", "))
		}
		a.Severity = *wa.Severity
	}
	if err := checkURL(wa.URL); err != nil {
		return Advisory{}, invalidf(err, "update document: %s %q of package %q: %v", place("url"), wa.URL, code, err)
	}
	if err := wa.validateOSV(code, i, &a); err != nil {
		return Advisory{}, err
	}
	return a, nil
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
