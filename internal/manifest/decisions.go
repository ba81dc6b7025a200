package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/upcheck/upcheck/internal/jsonpos"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
)

// The limits of a dismissal's and a skip's free text: an advisory id is
// short ("GHSA-xxxx-xxxx-xxxx", "CVE-2026-12345"), a reason a sentence or
// two; anything longer is a paste gone wrong.
const (
	MaxAdvisory = readmodel.MaxAdvisoryID // bytes: every advisory id's limit
	MaxReason   = 500
)

// Dismissal says that an advisory does not apply to the site's copy of a
// component ("the vulnerable module is not loaded"), until it expires.
type Dismissal struct {
	// Component is the code of a component of the manifest.
	Component string `json:"component" yaml:"component"`
	// Advisory is the advisory's id as a feed or a document names it;
	// compared without regard to case.
	Advisory string `json:"advisory" yaml:"advisory"`
	// Reason is why the site judged the advisory not to apply.
	Reason string `json:"reason" yaml:"reason"`
	// Expires is when the dismissal lapses: an RFC 3339 time, or a date
	// YYYY-MM-DD meaning 00:00 UTC of that date (so "2027-01-01" has
	// lapsed as 2027 begins in UTC). "" never lapses.
	Expires string `json:"expires,omitempty" yaml:"expires,omitempty"`
}

// ExpiresAt is when d lapses; false when it never does. It is false also
// for an Expires that does not parse (Validate refuses it).
func (d Dismissal) ExpiresAt() (time.Time, bool) {
	t, err := parseExpires(d.Expires)
	if err != nil || t.IsZero() {
		return time.Time{}, false
	}
	return t, true
}

// parseExpires reads an Expires: the zero time for "".
func parseExpires(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil // time.Parse gives a date without a zone 00:00 UTC
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("expires %q is neither an RFC 3339 time nor a date (YYYY-MM-DD)", s)
	}
	// To the database's precision, so that the expiry the sync compares
	// with the stored one is the one stored: a finer one would read as
	// changed, and replace the dismissal, on every sync.
	return t.Truncate(time.Microsecond), nil
}

// Skip says that the site passes over one release of a component: it is
// not offered, and a newer one is offered as usual.
type Skip struct {
	// Component is the code of a component of the manifest.
	Component string `json:"component" yaml:"component"`
	// Version is the release passed over, newer than the installed one.
	Version string `json:"version" yaml:"version"`
	// Reason is why.
	Reason string `json:"reason" yaml:"reason"`
}

// PolicyOf is the policy c is offered under: the manifest's, overridden by
// each member c's own policy sets.
func (m *Manifest) PolicyOf(c Component) release.Policy {
	return m.Policy.With(c.Policy)
}

// component is the component of m with the given code.
func (m *Manifest) component(code string) (Component, bool) {
	for _, c := range m.Components {
		if c.Code == code {
			return c, true
		}
	}
	return Component{}, false
}

// dismissalProblems words what is wrong with m's dismissals, one line a
// problem, each naming its entry. An expiry in the past is not one: the
// dismissal has simply lapsed, which the product shows, and a manifest
// that was valid yesterday must not be refused today for it.
func (m *Manifest) dismissalProblems() []string {
	var problems []string
	add := func(i int, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("dismissals[%d]: ", i)+fmt.Sprintf(format, args...))
	}
	seen := map[[2]string]int{}
	for i, d := range m.Dismissals {
		problems = append(problems, m.componentProblem("dismissals", i, d.Component)...)
		switch {
		case d.Advisory == "":
			add(i, "advisory is missing")
		case len(d.Advisory) > MaxAdvisory:
			add(i, "advisory is longer than %d bytes", MaxAdvisory)
		case strings.ContainsFunc(d.Advisory, unicode.IsControl):
			add(i, "advisory %q has a control character", d.Advisory)
		default:
			key := [2]string{d.Component, strings.ToLower(d.Advisory)}
			if j, dup := seen[key]; dup {
				add(i, "advisory %s of %q is dismissed already by dismissals[%d]", d.Advisory, d.Component, j)
			} else {
				seen[key] = i
			}
		}
		if p := reasonProblem(d.Reason); p != "" {
			add(i, "%s", p)
		}
		if _, err := parseExpires(d.Expires); err != nil {
			add(i, "%v", err)
		}
	}
	return problems
}

// skipProblems words what is wrong with m's skips, as dismissalProblems.
func (m *Manifest) skipProblems() []string {
	var problems []string
	add := func(i int, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("skips[%d]: ", i)+fmt.Sprintf(format, args...))
	}
	seen := map[string]int{}
	for i, s := range m.Skips {
		problems = append(problems, m.componentProblem("skips", i, s.Component)...)
		if j, dup := seen[s.Component]; dup && s.Component != "" {
			add(i, "component %q has a skip already in skips[%d]: one skip a component", s.Component, j)
		} else {
			seen[s.Component] = i
		}
		v, err := release.ParseVersion(s.Version)
		if err != nil {
			add(i, "version %q is not a semantic version", s.Version)
		} else if c, ok := m.component(s.Component); ok {
			// An installed version that does not parse is the component's
			// own error, reported once there.
			if inst, err := release.ParseVersion(c.Version); err == nil && !v.GreaterThan(inst) {
				add(i, "version %s is not newer than the installed %s: a skip passes over a release not yet installed", s.Version, c.Version)
			}
		}
		if p := reasonProblem(s.Reason); p != "" {
			add(i, "%s", p)
		}
	}
	return problems
}

// componentProblem says, for entry i of list, that code names no
// component of m.
func (m *Manifest) componentProblem(list string, i int, code string) []string {
	if code == "" {
		return []string{fmt.Sprintf("%s[%d]: component is missing", list, i)}
	}
	if _, ok := m.component(code); !ok {
		return []string{fmt.Sprintf("%s[%d]: component %q is not a component of the manifest", list, i, code)}
	}
	return nil
}

func reasonProblem(reason string) string {
	switch {
	case strings.TrimSpace(reason) == "":
		return "reason is missing: say why, for whoever reads the manifest next"
	case utf8.RuneCountInString(reason) > MaxReason:
		return fmt.Sprintf("reason is longer than %d characters", MaxReason)
	}
	return ""
}

// ParsePolicy reads a policy given on its own, as JSON (the object a
// manifest's "policy" holds, as `upcheck components sync --policy` takes
// it), with the manifest's strictness: an unknown member, trailing data
// and a member that is not valid are refused, named with their place.
func ParsePolicy(body []byte) (release.Policy, error) {
	var p release.Policy
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return release.Policy{}, errors.New(describeJSON(body, err, "the policy", reflect.TypeFor[release.Policy]()))
	}
	if line, col, ok := jsonpos.Trailing(body, dec.InputOffset()); ok {
		return release.Policy{}, fmt.Errorf("unexpected data after the policy at line %d, column %d", line, col)
	}
	if err := p.Validate(); err != nil {
		return release.Policy{}, err
	}
	return p, nil
}
