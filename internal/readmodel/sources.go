package readmodel

import "strings"

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
	switch {
	case version == "":
		return ""
	case SourceKindOf(url) == SourceNpm:
		return "npm install " + PackageOf(url) + "@" + version
	}
	return releaseURL
}
