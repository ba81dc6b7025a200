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
