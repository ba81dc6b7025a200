package readmodel

import "strings"

// SourceKind is how upcheck reads an update source, told by its address.
type SourceKind string

// The kinds.
const (
	// SourceHTTP: an http or https URL, fetched by the checks.
	SourceHTTP SourceKind = "http"
	// SourceOffline: an "offline:NAME" source, never fetched, whose
	// documents arrive by import only; it is stale only by its document's
	// expiry (upcheck_stale, source_state.offline).
	SourceOffline SourceKind = "offline"
)

// AllSourceKinds are the kinds, in this order.
func AllSourceKinds() []SourceKind { return []SourceKind{SourceHTTP, SourceOffline} }

// OfflinePrefix starts the address of an offline source, "offline:NAME".
// The read model's SQL knows it too (source_state.offline,
// upcheck_stale), which TestVocabulariesMatchSQL holds to it.
const OfflinePrefix = "offline:"

// SourceKindOf is the kind of the source at address url.
func SourceKindOf(url string) SourceKind {
	if strings.HasPrefix(url, OfflinePrefix) {
		return SourceOffline
	}
	return SourceHTTP
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
