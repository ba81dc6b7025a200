// Package release is the product's domain, independent of any wire format:
// what a source says of a package ([Package]: releases and advisories),
// versions (read by internal/npmver, npm's strict SemVer), ranges ([Range]), a
// site's policy ([Policy]), the evaluation of an installed version
// ([Evaluate]) and what is offered of it and why ([Evaluation.Offer]), and
// CVSS scores. It does no I/O, and words nothing: why a release is not
// offered is a [Reason], a kind and its arguments, which
// readmodel.OfferReasonText words when a page reads it (release imports
// no readmodel).
//
// versionrange stays a leaf below it: it is a range's syntax only, which
// views reads too (to word a range) without importing the domain; release
// gives the terms their meaning, so both read a range one way. Every adapter (the publisher's update
// document, the npm registry, the OSV feed) turns what it reads into these
// values, so that evaluation, trust and the read model never see the
// outside format.
//
// # Ranges and pre-releases
//
// Ranges are written in the syntax of github.com/Masterminds/semver, whose
// parser decides what is well written, but [Range] gives them their meaning
// itself: npm's, where a partial version stands for every version with that
// prefix ("<=2.4" holds 2.4.7), rather than whatever one library version
// makes of partial versions. Both npm and the library leave pre-releases out
// of a range unless the range itself names one, so an installed
// 2.3.0-beta.1 would not be inside the affected range "<2.4.0" and a
// vulnerable beta would look safe; in a [Range] a pre-release is inside
// exactly when its place in the version order is. Offering updates is a
// different question: pre-releases are offered only to a site already
// running one (see [Evaluation]).
package release
