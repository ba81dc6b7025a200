package npm

import (
	"slices"

	"github.com/Masterminds/semver/v3"

	"github.com/upcheck/upcheck/internal/npmver"
	"github.com/upcheck/upcheck/internal/release"
)

// Offer is what a package document offers a site that has installed one
// of its versions, in the terms update documents use, so that one
// evaluation (release.Evaluate) decides for both what is an update,
// what is blocked by the core and what the newest release is.
type Offer struct {
	// Package holds the releases that may be offered, newest first (and,
	// of those not newer than the installed version, the newest alone):
	//   - no version newer than the one dist-tags.latest names (npm installs
	//     "latest"; a newer version under another tag is not for everyone);
	//   - no prerelease, unless the installed version is a prerelease and a
	//     dist-tag names a newer prerelease of its own line (same
	//     major.minor.patch): then that tag's version and the prereleases of
	//     the line up to it;
	//   - no deprecated version.
	// Each release carries its publish time, the package's repository as
	// its notes link (Package.Repository; none when unknown) and, from its
	// peerDependencies on the core's package, the core it requires.
	Package release.Package
	// Deprecated is the publisher's message on the installed version, ""
	// when it is not deprecated.
	Deprecated string
	// Unlisted means the registry does not list the installed version (it
	// was unpublished, or never was).
	Unlisted bool
	// Refused are the versions that would have been offered but whose
	// registry signature fails (when the registry publishes keys), newest
	// first: they are never offered.
	Refused []Refused
	// Provenance says, for each offered version and the installed one,
	// whether it was published with provenance (dist.attestations).
	Provenance map[string]bool
	// SignedBy is, for each offered version and the installed one, the id
	// of the registry key whose signature verified (empty when the
	// registry publishes no keys, or the installed version's fails).
	SignedBy map[string]string
}

// Refused is a version held back because its signature fails.
type Refused struct {
	Version string
	Err     error // ErrUnsigned, ErrUnknownKey, ErrExpiredKey or ErrBadSignature
}

// OfferFor reads pkg for a site with version installed; core is the core's
// package name, whose peerDependencies range becomes RequiresCore ("" for
// the core's own package, or when no core is known). keys are the
// registry's signing keys: when there are any, a version is offered only
// if its signature verifies (VerifySignature). Versions that are not
// semantic versions are passed over: npm refuses to publish them.
func OfferFor(pkg *Package, installed, core string, keys []Key) Offer {
	b := offerBuilder{pkg: pkg, core: core, keys: keys,
		o: Offer{Provenance: map[string]bool{}, SignedBy: map[string]string{}}}
	iv, err := npmver.Parse(installed)
	if err != nil {
		iv = nil
	}
	if inst, ok := pkg.Versions[installed]; ok {
		b.o.Deprecated = inst.Deprecated
		b.o.Provenance[installed] = inst.Dist.Attestations != nil
	} else {
		b.o.Unlisted = true
	}
	ceiling, _ := npmver.Parse(pkg.DistTags["latest"])
	line := taggedLine(pkg, iv)
	// Only versions newer than the installed one can be offered; of the
	// others the newest is kept, so that the newest release is known of a
	// site that has it. Signatures are verified for those alone: a
	// package of thousands of versions costs a handful of verifications,
	// not thousands.
	var floor *candidate
	for text, ver := range pkg.Versions {
		v, err := npmver.Parse(text)
		if err != nil || ver.Deprecated != "" || !offerable(v, ceiling, line) {
			continue
		}
		if iv != nil && !v.GreaterThan(iv) {
			if floor == nil || v.GreaterThan(floor.v) {
				floor = &candidate{v: v, r: release.Release{Version: text}}
			}
			continue
		}
		b.add(text, v)
	}
	if floor != nil {
		b.add(floor.r.Version, floor.v)
	}
	b.signInstalled(installed)
	return b.finish()
}

// candidate is a release OfferFor offers, with its version parsed.
type candidate struct {
	v *semver.Version
	r release.Release
}

// refusedVersion is a version refused for its signature, with its version parsed.
type refusedVersion struct {
	v *semver.Version
	r Refused
}

// offerBuilder gathers OfferFor's releases and refusals.
type offerBuilder struct {
	pkg     *Package
	core    string
	keys    []Key
	o       Offer
	rs      []candidate
	refused []refusedVersion
}

// taggedLine is the newest prerelease a dist-tag names on the installed
// version's line (same major.minor.patch) and newer than it; nil when the
// installed version is no prerelease (or none is tagged).
func taggedLine(pkg *Package, iv *semver.Version) *semver.Version {
	if iv == nil || iv.Prerelease() == "" {
		return nil
	}
	var line *semver.Version
	for _, tagged := range pkg.DistTags {
		tv, err := npmver.Parse(tagged)
		if err != nil || tv.Prerelease() == "" || !sameLine(tv, iv) || !tv.GreaterThan(iv) {
			continue
		}
		if line == nil || tv.GreaterThan(line) {
			line = tv
		}
	}
	return line
}

// offerable: a release no newer than latest (ceiling), or a prerelease of
// the tagged line up to its tagged version (Offer.Package says why).
func offerable(v, ceiling, line *semver.Version) bool {
	if v.Prerelease() == "" {
		return ceiling != nil && !v.GreaterThan(ceiling)
	}
	return line != nil && sameLine(v, line) && !v.GreaterThan(line)
}

// add offers the version text (v parsed), or refuses it when the registry
// publishes keys and its signature fails.
func (b *offerBuilder) add(text string, v *semver.Version) {
	ver := b.pkg.Versions[text]
	if len(b.keys) > 0 {
		verified, err := VerifySignature(b.keys, b.pkg.Name, text, ver, b.pkg.Published[text])
		if err != nil {
			b.refused = append(b.refused, refusedVersion{v, Refused{Version: text, Err: err}})
			return
		}
		b.o.SignedBy[text] = verified.KeyID
	}
	b.o.Provenance[text] = ver.Dist.Attestations != nil
	r := release.Release{Version: text, Released: b.pkg.Published[text], URL: b.pkg.Repository}
	r.ReleasedLate = !r.Released.IsZero() && !b.pkg.Modified.IsZero() && r.Released.After(b.pkg.Modified)
	if b.core != "" && b.core != b.pkg.Name {
		r.RequiresCore = ver.PeerDependencies[b.core]
	}
	b.rs = append(b.rs, candidate{v, r})
}

// signInstalled records the key that signed the installed version, when
// the registry publishes keys and add did not verify it already.
func (b *offerBuilder) signInstalled(installed string) {
	ver, listed := b.pkg.Versions[installed]
	if !listed || len(b.keys) == 0 || b.o.SignedBy[installed] != "" {
		return
	}
	if verified, err := VerifySignature(b.keys, b.pkg.Name, installed, ver, b.pkg.Published[installed]); err == nil {
		b.o.SignedBy[installed] = verified.KeyID
	}
}

// finish orders the releases and the refusals newest first.
func (b *offerBuilder) finish() Offer {
	slices.SortFunc(b.rs, func(a, c candidate) int { return c.v.Compare(a.v) })
	b.o.Package.Releases = make([]release.Release, len(b.rs))
	for i, r := range b.rs {
		b.o.Package.Releases[i] = r.r
	}
	slices.SortFunc(b.refused, func(a, c refusedVersion) int { return c.v.Compare(a.v) })
	for _, r := range b.refused {
		b.o.Refused = append(b.o.Refused, r.r)
	}
	// Whether a release loses the installed version's provenance is the
	// offer's to judge (release.Evaluation.ProvenanceLost): it knows what
	// the site's policy offers.
	b.o.Package.Provenance = b.o.Provenance
	return b.o
}

// sameLine reports whether a and b share major, minor and patch.
func sameLine(a, b *semver.Version) bool {
	return a.Major() == b.Major() && a.Minor() == b.Minor() && a.Patch() == b.Patch()
}
