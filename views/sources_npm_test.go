package views

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/readmodel"
)

// npmSources are two npm sources: one whose registry's keys changed, one
// whose registry publishes none.
func npmSources() []readmodel.SourceRow {
	changed := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	return []readmodel.SourceRow{
		{URL: "npm:@acme/blog", Kind: readmodel.SourceNpm, Package: "@acme/blog", Registry: "http://127.0.0.1:4873/",
			RegistryKeys:  []string{"SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA", "SHA256:DhQ8wR5APBvFHLF/+Tc+AYvPOdTpcIDqOhxsBHRwC7U"},
			KeysChangedAt: &changed, Components: 1, HasDocument: true, LastSuccessAt: ago(time.Hour), LastAttemptAt: ago(time.Hour),
			SignatureState: "unsigned"},
		{URL: "npm:left-pad", Kind: readmodel.SourceNpm, Package: "left-pad", Registry: "http://127.0.0.1:4874/",
			Components: 1, HasDocument: true, LastSuccessAt: ago(time.Hour), LastAttemptAt: ago(time.Hour), SignatureState: "unsigned"},
	}
}

// Source health shows an npm source's kind, package and registry, its
// pinned key ids, and the day its registry's keys changed; a registry that
// publishes no keys is said plainly, never as verified; an npm source has
// no import link and no document signature state.
func TestSourcesWordNpmSources(t *testing.T) {
	t.Parallel()
	root := doc(t, SourceHealth(SourceHealthProps{Layout: layout(calm(), true), Sources: npmSources()}))
	rows := byTestID(root, "source-row")
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	blog, pad := rows[0], rows[1]
	if got := text(one(t, blog, "source-package")); got != "@acme/blog" {
		t.Errorf("package %q", got)
	}
	if got := text(one(t, blog, "source-registry")); got != "npm package, from http://127.0.0.1:4873/" {
		t.Errorf("registry %q", got)
	}
	if got := text(one(t, blog, "source-registry-keys")); got != "Signatures verified with its registry’s pinned keys" {
		t.Errorf("keys %q", got)
	}
	// Each registry's keys are said once, above the sources it serves.
	regs := byTestID(root, "registry-trust")
	if len(regs) != 2 || text(regs[0]) != "http://127.0.0.1:4873/: Signatures verified with the registry’s keys SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA and SHA256:DhQ8wR5APBvFHLF/+Tc+AYvPOdTpcIDqOhxsBHRwC7U, pinned on first sight (1 npm source)." ||
		text(regs[1]) != "http://127.0.0.1:4874/: The registry publishes no signing keys, so no signature is verified (1 npm source)." {
		t.Errorf("the registries: %d, %v", len(regs), func() (out []string) {
			for _, r := range regs {
				out = append(out, text(r))
			}
			return out
		}())
	}
	if got := text(one(t, blog, "source-keys-changed")); !strings.HasPrefix(got, "The registry’s signing keys changed on 2026-11-30") {
		t.Errorf("keys changed %q", got)
	}
	if !strings.Contains(text(blog), "Registry keys changed") {
		t.Errorf("no badge for the changed keys: %q", text(blog))
	}
	padKeys := text(one(t, pad, "source-registry-keys"))
	if padKeys != "No signature verified: its registry publishes no signing keys" {
		t.Errorf("no keys %q", padKeys)
	}
	if strings.Contains(strings.ReplaceAll(text(pad), "No signature verified", ""), "erified") {
		t.Errorf("a source whose registry publishes no keys claims a verification: %q", text(pad))
	}
	if n := len(byTestID(pad, "source-keys-changed")); n != 0 {
		t.Errorf("%d key changes for a registry whose keys never changed", n)
	}
	for _, r := range rows {
		if len(byTestID(r, "source-import")) != 0 {
			t.Error("an npm source offers a document import")
		}
	}
}

// Seventeen sources of one registry that publishes no keys: the registry's
// sentence is said once, not once a source.
func TestSourcesSayARegistryOnce(t *testing.T) {
	t.Parallel()
	var sources []readmodel.SourceRow
	for i := range 17 {
		sources = append(sources, readmodel.SourceRow{URL: fmt.Sprintf("npm:p%d", i), Kind: readmodel.SourceNpm, Package: fmt.Sprintf("p%d", i),
			Registry: "http://127.0.0.1:4874/", Components: 1, HasDocument: true, LastSuccessAt: ago(time.Hour), SignatureState: "unsigned"})
	}
	page := render(t, SourceHealth(SourceHealthProps{Layout: layout(calm(), true), Sources: sources}))
	if n := strings.Count(page, "The registry publishes no signing keys"); n != 1 {
		t.Errorf("the registry's sentence is said %d times, want once", n)
	}
	if !strings.Contains(page, "(17 npm sources)") {
		t.Error("the registry's line does not count its sources")
	}
}
