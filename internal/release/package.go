package release

import (
	"time"

	"github.com/Masterminds/semver/v3"
)

// Package is what a source says about one component: its releases and
// its advisories, as every adapter produces them (the update document,
// the npm registry).
type Package struct {
	Releases   []Release  `json:"releases"`
	Advisories []Advisory `json:"advisories"`
	// Provenance says, for each release and the installed version, whether
	// it was published with provenance (an attestation of where it was
	// built); nil when the source says nothing of provenance (an update
	// document). Offer judges a loss of it (Evaluation.ProvenanceLost).
	Provenance map[string]bool `json:"-"`
}

// Release is one published version of a package.
type Release struct {
	Version string `json:"version"`
	// Released is the zero time when the publisher did not say.
	Released time.Time `json:"released,omitzero"`
	// ReleasedLate: Released is later than the last change of the
	// document that gives it (an npm package's time.modified), so it is
	// not a date a soak can be judged from (ReasonReleasedLate).
	ReleasedLate bool `json:"released_late,omitempty"`
	// RequiresCore is the range of core versions this release runs on;
	// empty means any.
	RequiresCore string `json:"requires_core,omitempty"`
	Security     bool   `json:"security,omitempty"`
	Severity     string `json:"severity,omitempty"`
	Summary      string `json:"summary,omitempty"`
	URL          string `json:"url,omitempty"`

	// The parsed forms, set by the adapter that validated the text
	// (SetParsedVersion, SetParsedRequiresCore) so that evaluations do not
	// parse again. Evaluate falls back to parsing the text when they are
	// nil (a Release built by hand).
	version      *semver.Version
	requiresCore *Range
}

// Advisory is a published vulnerability of a package.
type Advisory struct {
	ID       string `json:"id"`
	Severity string `json:"severity,omitempty"`
	// Affected is the range of vulnerable versions.
	Affected string `json:"affected"`
	// FixedIn is empty while there is no fix.
	FixedIn string `json:"fixed_in,omitempty"`
	Summary string `json:"summary,omitempty"`
	URL     string `json:"url,omitempty"`
	// OSV's members (osv.go). Aliases are other databases' ids of the same
	// advisory (CVE, GHSA, …).
	Aliases []string `json:"aliases,omitempty"`
	// CVSS is a CVSS v3.0, v3.1 or v4.0 vector and CVSSScore its base
	// score (meaningful only when CVSS is set). Severity is the
	// publisher's word, or when the publisher gave none, the word of the
	// score on CVSS's qualitative scale.
	CVSS      string  `json:"cvss,omitempty"`
	CVSSScore float64 `json:"cvss_score,omitempty"`
	// Withdrawn is when the publisher withdrew the advisory (zero: it
	// stands). A withdrawn advisory affects nothing: Evaluate lists it
	// apart, in Evaluation.Withdrawn.
	Withdrawn time.Time `json:"withdrawn,omitzero"`
	// Modified is when the publisher last changed the advisory (zero: not
	// said).
	Modified   time.Time   `json:"modified,omitzero"`
	References []Reference `json:"references,omitempty"`

	affected *Range
}

// Reference is one of OSV's references: a typed link.
type Reference struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// SetParsedVersion keeps v, the parsed Version, which the adapter that
// validated the text holds already.
func (r *Release) SetParsedVersion(v *semver.Version) { r.version = v }

// ParsedVersion is the version SetParsedVersion kept, nil when none was.
func (r *Release) ParsedVersion() *semver.Version { return r.version }

// SetParsedRequiresCore keeps rng, the parsed RequiresCore.
func (r *Release) SetParsedRequiresCore(rng Range) { r.requiresCore = &rng }

// SetParsedAffected keeps rng, the parsed Affected.
func (a *Advisory) SetParsedAffected(rng Range) { a.affected = &rng }
