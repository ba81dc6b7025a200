package views

import (
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
	if got := text(one(t, blog, "source-registry-keys")); got != "Signatures verified with the registry’s keys SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA and SHA256:DhQ8wR5APBvFHLF/+Tc+AYvPOdTpcIDqOhxsBHRwC7U, pinned on first sight" {
		t.Errorf("keys %q", got)
	}
	if got := text(one(t, blog, "source-keys-changed")); !strings.HasPrefix(got, "The registry’s signing keys changed on 2026-11-30") {
		t.Errorf("keys changed %q", got)
	}
	if !strings.Contains(text(blog), "Registry keys changed") {
		t.Errorf("no badge for the changed keys: %q", text(blog))
	}
	padKeys := text(one(t, pad, "source-registry-keys"))
	if padKeys != "The registry publishes no signing keys, so no signature is verified" {
		t.Errorf("no keys %q", padKeys)
	}
	if strings.Contains(strings.ReplaceAll(text(pad), "no signature is verified", ""), "erified") {
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
