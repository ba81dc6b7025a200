package readmodel

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/upcheck/upcheck/internal/release"
)

// SourceKind is how upcheck reads an update source, told by its address.
type SourceKind string

// The kinds.
const (
	// SourceDocument: an http or https URL of an update document, fetched
	// by the checks.
	SourceDocument SourceKind = "document"
	// SourceOffline: an "offline:NAME" source, never fetched, whose
	// documents arrive by import only; it is stale only by its document's
	// expiry (upcheck_stale, source_state.offline).
	SourceOffline SourceKind = "offline"
	// SourceNpm: an "npm:NAME" source, a package of the npm registry that
	// the settings name for it (docs/npm.md), fetched by the checks.
	SourceNpm SourceKind = "npm"
)

// AllSourceKinds are the kinds, in this order.
func AllSourceKinds() []SourceKind { return []SourceKind{SourceDocument, SourceOffline, SourceNpm} }

// OfflinePrefix starts the address of an offline source, "offline:NAME".
// The read model's SQL knows it too (source_state.offline,
// upcheck_stale), which TestVocabulariesMatchSQL holds to it.
const OfflinePrefix = "offline:"

// offlineName is the NAME of "offline:NAME": short, lower-case, no spaces.
var offlineName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// CheckOfflineSource refuses an "offline:NAME" address whose NAME is not 1
// to 64 lower-case letters, digits, '.', '_' or '-', starting with a
// letter or a digit.
func CheckOfflineSource(source string) error {
	name, ok := strings.CutPrefix(source, OfflinePrefix)
	if !ok {
		return fmt.Errorf("%q does not start with %q", source, OfflinePrefix)
	}
	if !offlineName.MatchString(name) {
		return fmt.Errorf("offline source name %q must be 1 to 64 lower-case letters, digits, '.', '_' or '-', starting with a letter or a digit", name)
	}
	return nil
}

// NpmPrefix starts the address of an npm source, "npm:@acme/blog"; the
// read model's SQL knows it too (upcheck_source_kind).
const NpmPrefix = "npm:"

// SourceKindOf is the kind of the source at address url.
func SourceKindOf(url string) SourceKind {
	switch {
	case strings.HasPrefix(url, OfflinePrefix):
		return SourceOffline
	case strings.HasPrefix(url, NpmPrefix):
		return SourceNpm
	}
	return SourceDocument
}

// TrustState is what the stored document of a source is trusted as
// (sources.signature_state, whose CHECK constraint allows exactly
// AllTrustStates; source_state reads a source with none as unsigned).
type TrustState string

// The trust states.
const (
	// TrustUnsigned: no key verified the stored document (none is pinned,
	// or none is stored yet).
	TrustUnsigned TrustState = "unsigned"
	// TrustVerified: the keys trusted for the source verified it.
	TrustVerified TrustState = "verified"
)

// AllTrustStates are the trust states, in the order of the CHECK
// constraint.
func AllTrustStates() []TrustState { return []TrustState{TrustUnsigned, TrustVerified} }

// PackageOf is the npm package an npm source names, "" for other kinds.
func PackageOf(url string) string {
	name, _ := strings.CutPrefix(url, NpmPrefix)
	if name == url {
		return ""
	}
	return name
}

// UpdateCommand is how the operator installs version of a component whose
// source is url: for an npm package, the npm command; for a document, the
// release's URL (releaseURL, "" when the document names none). It is ""
// when there is no version to install.
func UpdateCommand(url, version, releaseURL string) string {
	return updateCommand(url, version, releaseURL)
}

// MajorJump reports whether version is in a newer major version than
// installed (14.1.0 → 16.5.0): an update that may break what runs, as
// npm audit's --force and Renovate's separate majors say.
func MajorJump(installed, version string) bool {
	iv, err1 := release.ParseVersion(installed)
	v, err2 := release.ParseVersion(version)
	return err1 == nil && err2 == nil && v.Major() > iv.Major()
}

// NewestVersion is the newest of versions, "" when there are none or one
// of them is not a version (then no newest can be told).
func NewestVersion(versions []string) string {
	var out *semver.Version
	for _, text := range versions {
		v, err := release.ParseVersion(text)
		if err != nil {
			return ""
		}
		if out == nil || v.GreaterThan(out) {
			out = v
		}
	}
	if out == nil {
		return ""
	}
	return out.Original()
}

// VersionText is a version to update to, said to be a new major version
// when it is one: "16.5.0 (a new major version: 14 → 16)".
func VersionText(installed, version string) string {
	if !MajorJump(installed, version) {
		return version
	}
	iv, _ := release.ParseVersion(installed)
	v, _ := release.ParseVersion(version)
	return fmt.Sprintf("%s (a new major version: %d → %d)", version, iv.Major(), v.Major())
}

// FixText is the smallest way out of a component's advisories beside its
// offered update (docs/policy.md): "update to 14.1.1 — fixes GHSA-x; 16.5.0
// (a new major version: 14 → 16) is the newest this site takes"; with no
// ids, "update to 14.1.1 to clear its advisories". When the only fix is
// across a major, it says so. "" when there is no fix, or it is the
// update.
func FixText(installed, fix, update string, ids []string) string {
	if fix == "" || fix == update {
		return ""
	}
	s := "update to " + VersionText(installed, fix)
	if len(ids) > 0 {
		s += " — fixes " + strings.Join(ids, ", ")
	} else {
		s += " to clear its advisories"
	}
	if MajorJump(installed, fix) {
		s += "; no release of the installed major version clears them all"
	}
	if update != "" {
		s += "; " + VersionText(installed, update) + " is the newest this site takes"
	}
	return s
}

func updateCommand(url, version, releaseURL string) string {
	switch {
	case version == "":
		return ""
	case SourceKindOf(url) == SourceNpm:
		return "npm install " + PackageOf(url) + "@" + version
	}
	return releaseURL
}
