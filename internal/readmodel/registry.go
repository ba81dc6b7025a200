package readmodel

import "time"

// RegistryFacts are what an npm registry said about a component's package
// when its result was evaluated (component_results.registry_facts): the
// detail page and GET /api/admin/plugins/{code} show them in the words
// documents get.
type RegistryFacts struct {
	// Package is the package's name, Registry the URL it was read from
	// (never with credentials).
	Package  string `json:"package"`
	Registry string `json:"registry"`
	// Deprecated is the publisher's deprecation message of the installed
	// version ("" when it is not deprecated); Unlisted: the registry does
	// not list the installed version (unpublished, or never published).
	Deprecated string `json:"deprecated,omitempty"`
	Unlisted   bool   `json:"unlisted,omitempty"`
	// KeysPublished: the registry publishes signing keys, so every offered
	// version's signature was verified.
	KeysPublished bool `json:"keys_published"`
	// Versions are the installed version (when listed) and every version
	// offered, newest first.
	Versions []RegistryVersion `json:"versions"`
	// Refused are the versions held back because their signature fails,
	// newest first.
	Refused []RefusedVersion `json:"refused,omitempty"`
	// ProvenanceLost is the newest offered version when it was published
	// without the provenance the installed version has; "" when none.
	ProvenanceLost string `json:"provenance_lost,omitempty"`
	// Brings are the signals of what the offered update brings that the
	// installed version did not (Signal, worded by SignalText), most
	// pressing first; none when nothing is offered or it brings nothing.
	Brings []Signal `json:"brings,omitempty"`
	// BringsUnread are the registry dependencies the offered update adds
	// whose package's first publish time is not known (UnreadText), so
	// whether each is a young dependency is not said either way.
	BringsUnread []UnreadDependency `json:"brings_unread,omitempty"`
	// ProvenanceUnread are the offered versions published with
	// provenance whose provenance's repository was not compared with the
	// package's (ProvenanceUnreadText), so no provenance_repository is
	// said of them either way.
	ProvenanceUnread []ProvenanceUnread `json:"provenance_unread,omitempty"`
	// Approval is what a version awaits an admin's approval for, when the
	// policy holds it (docs/policy.md "Approvals"): the release held for
	// it, or a security fix offered all the same; nil when none awaits.
	Approval *ApprovalAsk `json:"approval,omitempty"`
}

// ApprovalAsk is what one version brings that the policy's approve holds
// until an admin approves it: Lines in words ("postinstall script
// sha256:…", "optionalDependencies setup from github:acme/setup#0abc"),
// and Digest, the SHA-256 the approval names (the manifest declares it so).
// Offered: it is a security fix, offered all the same.
type ApprovalAsk struct {
	Version string   `json:"version"`
	Digest  string   `json:"digest"`
	Lines   []string `json:"lines"`
	Offered bool     `json:"offered,omitempty"`
}

// RegistryVersion is one version as the registry publishes it.
type RegistryVersion struct {
	Version   string    `json:"version"`
	Published time.Time `json:"published"`
	// Installed: the installed version.
	Installed bool `json:"installed,omitempty"`
	// Provenance: published with provenance (dist.attestations).
	Provenance bool `json:"provenance"`
	// SignedBy is the id of the registry key whose signature verified;
	// "" when the registry publishes no keys.
	SignedBy string `json:"signed_by,omitempty"`
	// RequiresCore is the core's range from peerDependencies; "" none.
	RequiresCore string `json:"requires_core,omitempty"`
}

// RefusedVersion is a version that is never offered, and why.
type RefusedVersion struct {
	Version string `json:"version"`
	// Reason says why in words: "signed by a key the registry does not
	// publish", "its signature does not verify", ….
	Reason string `json:"reason"`
}
