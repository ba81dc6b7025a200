// The words of an npm source on Source health: its package, the registry
// it is read from and the registry's signing keys pinned on first sight,
// and a change of those keys, a trust event.

package views

import (
	"strings"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// sourceKindText names a source's kind.
func sourceKindText(k readmodel.SourceKind) string {
	switch k {
	case readmodel.SourceDocument:
		return "update document"
	case readmodel.SourceOffline:
		return "offline source, fed by import"
	case readmodel.SourceNpm:
		return "npm package"
	}
	return string(k)
}

// isNpmSource: the source is an npm package.
func isNpmSource(s readmodel.SourceRow) bool {
	return readmodel.SourceKindOf(s.URL) == readmodel.SourceNpm
}

// registryTrust is one registry the npm sources are read from, as Source
// health says it once above the sources (not once per source): its
// trust line (registryLine) and how many sources it serves.
type registryTrust struct {
	Registry, Line string
	Sources        int
}

// registriesOf are the registries of sources' npm sources, in the order
// they first appear.
func registriesOf(sources []readmodel.SourceRow) []registryTrust {
	var out []registryTrust
	at := map[string]int{}
	for _, s := range sources {
		if !isNpmSource(s) || s.Registry == "" {
			continue
		}
		if i, ok := at[s.Registry]; ok {
			out[i].Sources++
			continue
		}
		at[s.Registry] = len(out)
		out = append(out, registryTrust{Registry: s.Registry, Line: upperFirst(registryLine(s)), Sources: 1})
	}
	return out
}

// registrySourcesText is "(17 npm sources)".
func registrySourcesText(n int) string {
	return " (" + countNoun(n, "npm source", "npm sources") + ")"
}

// registryRowText is an npm source's trust in its row, short: the
// registry's own line is said once above the table (registriesOf).
func registryRowText(s readmodel.SourceRow) string {
	switch {
	case s.Registry == "":
		return "No registry read yet"
	case len(s.RegistryKeys) == 0:
		return "No signature verified: its registry publishes no signing keys"
	}
	return "Signatures verified with its registry’s pinned keys"
}

// registryLine is an npm source's trust in one line: the registry's
// pinned key ids, or plainly that it publishes none, so nothing is
// verified.
func registryLine(s readmodel.SourceRow) string {
	switch {
	case s.Registry == "":
		return "no registry read yet"
	case len(s.RegistryKeys) == 0:
		return "the registry publishes no signing keys, so no signature is verified"
	case len(s.RegistryKeys) == 1:
		return "signatures verified with the registry’s key " + s.RegistryKeys[0] + ", pinned on first sight"
	}
	return "signatures verified with the registry’s keys " + strings.Join(s.RegistryKeys[:len(s.RegistryKeys)-1], ", ") +
		" and " + s.RegistryKeys[len(s.RegistryKeys)-1] + ", pinned on first sight"
}

// keysChangedText is "The registry’s signing keys changed on 2026-11-30."
// ("" when they never changed after first sight).
func keysChangedText(s readmodel.SourceRow) string {
	if s.KeysChangedAt == nil {
		return ""
	}
	return "The registry’s signing keys changed on " + s.KeysChangedAt.UTC().Format("2006-01-02") +
		": check with the registry’s operator that they rotated them."
}
