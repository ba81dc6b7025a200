package npm

import (
	"slices"

	"github.com/Masterminds/semver/v3"

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
	o := Offer{Provenance: map[string]bool{}, SignedBy: map[string]string{}}
	iv, err := release.ParseVersion(installed)
	if inst, ok := pkg.Versions[installed]; ok {
		o.Deprecated = inst.Deprecated
		o.Provenance[installed] = inst.Dist.Attestations != nil
	} else {
		o.Unlisted = true
	}
	latest, _ := release.ParseVersion(pkg.DistTags["latest"])
	ceiling := latest
	var line *semver.Version // the newest tagged prerelease of the installed line
	if err == nil && iv.Prerelease() != "" {
		for _, tagged := range pkg.DistTags {
			tv, err := release.ParseVersion(tagged)
			if err != nil || tv.Prerelease() == "" || !sameLine(tv, iv) || !tv.GreaterThan(iv) {
				continue
			}
			if line == nil || tv.GreaterThan(line) {
				line = tv
			}
		}
	}
	type candidate struct {
		v *semver.Version
		r release.Release
	}
	var rs []candidate
	type refusal struct {
		v *semver.Version
		r Refused
	}
	var refused []refusal
	// Only versions newer than the installed one can be offered; of the
	// others the newest is kept, so that the newest release is known of a
	// site that has it. Signatures are verified for those alone: a
	// package of thousands of versions costs a handful of verifications,
	// not thousands.
	var floor *candidate
	offer := func(text string, v *semver.Version) {
		ver := pkg.Versions[text]
		if len(keys) > 0 {
			verified, err := VerifySignature(keys, pkg.Name, text, ver, pkg.Published[text])
			if err != nil {
				refused = append(refused, refusal{v, Refused{Version: text, Err: err}})
				return
			}
			o.SignedBy[text] = verified.KeyID
		}
		o.Provenance[text] = ver.Dist.Attestations != nil
		r := release.Release{Version: text, Released: pkg.Published[text], URL: pkg.Repository}
		if core != "" && core != pkg.Name {
			r.RequiresCore = ver.PeerDependencies[core]
		}
		rs = append(rs, candidate{v, r})
	}
	for text, ver := range pkg.Versions {
		v, err := release.ParseVersion(text)
		if err != nil || ver.Deprecated != "" {
			continue
		}
		switch {
		case v.Prerelease() == "":
			if ceiling == nil || v.GreaterThan(ceiling) {
				continue
			}
		case line == nil || !sameLine(v, line) || v.GreaterThan(line):
			continue
		}
		if iv != nil && !v.GreaterThan(iv) {
			if floor == nil || v.GreaterThan(floor.v) {
				floor = &candidate{v: v, r: release.Release{Version: text}}
			}
			continue
		}
		offer(text, v)
	}
	if floor != nil {
		offer(floor.r.Version, floor.v)
	}
	if _, listed := pkg.Versions[installed]; listed && len(keys) > 0 && o.SignedBy[installed] == "" {
		if verified, err := VerifySignature(keys, pkg.Name, installed, pkg.Versions[installed], pkg.Published[installed]); err == nil {
			o.SignedBy[installed] = verified.KeyID
		}
	}
	slices.SortFunc(rs, func(a, b candidate) int { return b.v.Compare(a.v) })
	o.Package.Releases = make([]release.Release, len(rs))
	for i, r := range rs {
		o.Package.Releases[i] = r.r
	}
	slices.SortFunc(refused, func(a, b refusal) int { return b.v.Compare(a.v) })
	for _, r := range refused {
		o.Refused = append(o.Refused, r.r)
	}
	// Whether a release loses the installed version's provenance is the
	// offer's to judge (release.Evaluation.ProvenanceLost): it knows what
	// the site's policy offers.
	o.Package.Provenance = o.Provenance
	return o
}

// sameLine reports whether a and b share major, minor and patch.
func sameLine(a, b *semver.Version) bool {
	return a.Major() == b.Major() && a.Minor() == b.Minor() && a.Patch() == b.Patch()
}
