// The detail page's words for what an npm registry said of a component's
// package (readmodel.RegistryFacts), in the words documents get: published,
// provenance, the key that verified a signature, the core a version needs.
// A claim is made only from a fact: without the registry's keys nothing was
// verified, and the page says so.

package views

import (
	"github.com/upcheck/upcheck/internal/readmodel"
)

// isNpm: the component's source is an npm package.
func isNpm(p DetailProps) bool {
	return readmodel.SourceKindOf(p.SourceURL) == readmodel.SourceNpm
}

// advisoriesUnread: the component is an npm package whose advisories come
// from the feeds alone, and no OSV feed was ever read: the page must not
// read as "no known advisory".
func advisoriesUnread(p DetailProps) bool { return isNpm(p) && p.OSVReadAt == nil }

// npmAdvisoriesText stands where such a component's advisories would be.
const npmAdvisoriesText = "The advisories of npm packages come from an OSV feed, and none has been read: upcheck cannot tell whether one affects this version. Configure one in UPCHECK_FEEDS (docs/feeds.md)."

// noAdvisoryText says that no known advisory affects the installed
// version, and, for a package whose advisories come from the feeds, when
// they were last read.
func noAdvisoryText(p DetailProps) string {
	text := "No known advisory affects the installed version " + p.Installed
	if p.OSVReadAt != nil {
		text += " (OSV advisories last read " + readmodel.TimeText(*p.OSVReadAt) + ")"
	}
	return text + "."
}

// provenanceText is whether a version was published with provenance.
func provenanceText(v readmodel.RegistryVersion) string {
	if v.Provenance {
		return "published with provenance"
	}
	return "no provenance"
}

// signatureText is what verified a version: a key of the registry's, or
// nothing, when the registry publishes no keys (never a claim of
// verification without one).
func signatureText(f readmodel.RegistryFacts, v readmodel.RegistryVersion) string {
	switch {
	case !f.KeysPublished:
		return "signature not verified: the registry publishes no signing keys"
	case v.SignedBy != "":
		return "signature verified by key " + v.SignedBy
	}
	return "signature not verified"
}

// deprecatedText is "The installed version 2.3.0 is deprecated by its
// publisher: MESSAGE" (templ escapes the publisher's message).
func deprecatedText(installed, message string) string {
	return "The installed version " + installed + " is deprecated by its publisher: " + message
}

// unlistedText says the registry no longer lists the installed version.
func unlistedText(installed string) string {
	return "The registry no longer lists the installed version " + installed +
		": its publisher unpublished it, or it was never published there."
}

// provenanceLostText is the trust downgrade: "2.5.0 was published without
// the provenance that 2.3.0 had".
func provenanceLostText(lost, installed string) string {
	return lost + " was published without the provenance that " + installed + " had"
}

// noKeysText says plainly that nothing was verified.
const noKeysText = "The registry publishes no signing keys, so no version’s signature was verified."

// updateCommandLabel labels the update command: an npm command, or a
// document's release page.
func updateCommandLabel(p DetailProps) string {
	label := "Update from"
	if isNpm(p) {
		label = "Update command"
	}
	version := p.UpdateVersion
	if p.FixShown() && p.PageCommand() == p.FixCommand {
		version = p.FixVersion
		label += " (" + version + " clears its advisories"
		if readmodel.MajorJump(p.Installed, version) {
			label += "; a new major version"
		}
		return label + ")"
	}
	if readmodel.MajorJump(p.Installed, version) {
		label += " (" + readmodel.VersionText(p.Installed, version) + ")"
	}
	return label
}

// registryIndex is the registry's facts by version (nil for a component
// that is no npm package): the releases table looks each release up in it.
func registryIndex(f *readmodel.RegistryFacts) map[string]readmodel.RegistryVersion {
	if f == nil {
		return nil
	}
	idx := make(map[string]readmodel.RegistryVersion, len(f.Versions))
	for _, v := range f.Versions {
		idx[v.Version] = v
	}
	return idx
}
