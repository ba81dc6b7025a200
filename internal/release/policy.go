package release

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Tier says which releases newer than the installed version a site may be
// offered, judged against the installed version (docs/policy.md).
// Security releases are offered whatever the tier.
type Tier string

const (
	OfferAll      Tier = "all"      // every release
	OfferMinor    Tier = "minor"    // the installed major's releases
	OfferPatch    Tier = "patch"    // the installed major.minor's releases
	OfferSecurity Tier = "security" // security releases only
)

// Valid reports whether t is one of the tiers ("" is not: it means "not
// set" in a Policy, never a tier).
func (t Tier) Valid() bool {
	switch t {
	case OfferAll, OfferMinor, OfferPatch, OfferSecurity:
		return true
	}
	return false
}

// Policy is what a site is offered and when: a manifest's site-wide
// "policy", a component's own, or both merged (With). The zero Policy
// offers every release at once.
type Policy struct {
	// Offer is the tier; "" is OfferAll.
	Offer Tier `json:"offer,omitempty" yaml:"offer,omitempty"`
	// Hold is a range (ParseRange) outside which nothing is offered, not
	// even a security release: "<3.0.0" holds the major. "" holds nothing;
	// None clears the site's hold (With).
	Hold string `json:"hold,omitempty" yaml:"hold,omitempty"`
	// Soak is how long ago a release must have been published to be
	// offered ("72h", "3d", "90m"); security releases skip it. "" is none;
	// None clears the site's soak (With).
	Soak string `json:"soak,omitempty" yaml:"soak,omitempty"`
	// Approve is what an update must have an admin's approval for before
	// it is offered: ApproveScripts holds one whose diff against the
	// installed version adds or changes an install-time script, or
	// declares a dependency from outside the registry, until an admin
	// approves that exact version and text (docs/policy.md "Approvals");
	// a security release is offered all the same, the approval asked for
	// beside it. "" none; None clears the site's (With).
	Approve string `json:"approve,omitempty" yaml:"approve,omitempty"`
}

// ApproveScripts is the Policy.Approve that holds an update bringing an
// install script or a source outside the registry until it is approved.
const ApproveScripts = "scripts"

// MaxSoak bounds a soak: a longer one is a typo more often than a wish.
const MaxSoak = 365 * 24 * time.Hour

// IsZero reports whether p offers every release at once.
func (p Policy) IsZero() bool { return p == Policy{} }

// None is the hold or soak that sets none, so that a component's policy
// can clear the site's: {"soak": "none"}.
const None = "none"

// With is p overridden by the members c sets: a component's policy over
// the site's. A member set to None is cleared, so the result never holds
// None and its Text is the same for every way of saying "no soak".
func (p Policy) With(c Policy) Policy {
	if c.Offer != "" {
		p.Offer = c.Offer
	}
	if c.Hold != "" {
		p.Hold = c.Hold
	}
	if c.Soak != "" {
		p.Soak = c.Soak
	}
	if c.Approve != "" {
		p.Approve = c.Approve
	}
	if p.Approve == None {
		p.Approve = ""
	}
	if p.Hold == None {
		p.Hold = ""
	}
	if p.Soak == None {
		p.Soak = ""
	}
	return p
}

// Validate names the first member of p that is not valid.
func (p Policy) Validate() error {
	if p.Offer != "" && !p.Offer.Valid() {
		return fmt.Errorf("offer %q is not one of all, minor, patch, security", p.Offer)
	}
	if p.Hold != "" && p.Hold != None {
		if _, err := ParseRange(p.Hold); err != nil {
			return fmt.Errorf("hold: %w", err)
		}
	}
	if _, err := p.SoakDuration(); err != nil {
		return err
	}
	if p.Approve != "" && p.Approve != ApproveScripts && p.Approve != None {
		return fmt.Errorf("approve %q is not %s or %s", p.Approve, ApproveScripts, None)
	}
	return nil
}

// SoakDuration is the soak as a duration: Go's durations ("72h", "90m")
// and whole days ("3d"); 0 when none ("" or None).
func (p Policy) SoakDuration() (time.Duration, error) {
	if p.Soak == "" || p.Soak == None {
		return 0, nil
	}
	d, err := parseSoak(p.Soak)
	switch {
	case err != nil:
		return 0, fmt.Errorf("soak %q is not a duration (say 72h, 3d or 90m)", p.Soak)
	case d <= 0:
		return 0, fmt.Errorf("soak %q is not longer than zero", p.Soak)
	case d > MaxSoak:
		return 0, fmt.Errorf("soak %q is longer than a year", p.Soak)
	}
	return d, nil
}

func parseSoak(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil {
			return 0, err
		}
		if n > int(MaxSoak/(24*time.Hour)) {
			return MaxSoak + 1, nil // refused as longer than a year, never wrapped round
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// Text is p's canonical JSON, as components.policy stores it and a result
// records the policy it was evaluated under; "" for the zero Policy.
func (p Policy) Text() string {
	if p.IsZero() {
		return ""
	}
	// Unescaped: "<3.0.0" reads as itself in the database and the API.
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		panic(err) // four strings always encode
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// ParsePolicyText reads what Text wrote ("" is the zero Policy).
func ParsePolicyText(s string) (Policy, error) {
	var p Policy
	if s == "" {
		return p, nil
	}
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return Policy{}, fmt.Errorf("stored policy: %w", err)
	}
	if err := p.Validate(); err != nil {
		return Policy{}, errors.Join(errors.New("stored policy"), err)
	}
	return p, nil
}
