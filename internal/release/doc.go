// Package release is the product's domain, independent of any wire format:
// versions (one [ParseVersion], npm's strict SemVer), and what the adapters
// produce from the outside formats. Every adapter (the publisher's update
// document, the npm registry, the OSV feed) turns what it reads into these
// values, so that evaluation, trust and the read model never see the
// outside format.
package release
