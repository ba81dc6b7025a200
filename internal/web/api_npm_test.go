package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/web"
)

// contractOK validates body as the 200 answer of GET path against
// openapi.json (strict: a member it does not describe fails).
func contractOK(t *testing.T, path string, body []byte) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	checkContract(t, req, http.StatusOK, http.Header{"Content-Type": {"application/json"}}, body)
}

// members decodes a JSON object.
func members(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return m
}

// The catalog's items carry source_kind, package, update_command,
// deprecated and provenance_lost, as openapi.json describes them: an npm
// component's values, a document's (package null, its release URL as the
// command) and a component with no source (all null).
func TestCatalogItemsCarryNpmFields(t *testing.T) {
	t.Parallel()
	npm := readmodel.CatalogRow{Code: "acme-blog", Name: "Blog", Installed: "2.3.0", SourceURL: "npm:@acme/blog",
		SourceKind: readmodel.SourceNpm, Package: "@acme/blog", Evaluated: true, Latest: "2.4.0", UpdateVersion: "2.4.0",
		UpdateAvailable: true, UpdateCommand: "npm install @acme/blog@2.4.0", Deprecated: "use @acme/journal",
		ProvenanceLost: "2.4.0", Advisories: []byte("[]")}
	doc := readmodel.CatalogRow{Code: "gallery", Name: "Gallery", Installed: "1.0.0", SourceURL: "https://acme.example/u.json",
		SourceKind: readmodel.SourceDocument, Evaluated: true, Latest: "1.1.0", UpdateVersion: "1.1.0", UpdateAvailable: true,
		ReleaseURL: "https://acme.example/gallery/1.1.0", UpdateCommand: "https://acme.example/gallery/1.1.0", Advisories: []byte("[]")}
	none := readmodel.CatalogRow{Code: "local", Name: "Local", Installed: "1.0.0", Advisories: []byte("[]")}
	body, err := web.CatalogJSON(npm, doc, none)
	if err != nil {
		t.Fatal(err)
	}
	contractOK(t, "/api/admin/plugins/updates", body)
	var got struct{ Components []map[string]any }
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"source_kind": "npm", "package": "@acme/blog", "update_command": "npm install @acme/blog@2.4.0",
			"deprecated": "use @acme/journal", "provenance_lost": "2.4.0"},
		{"source_kind": "document", "package": nil, "update_command": "https://acme.example/gallery/1.1.0",
			"deprecated": nil, "provenance_lost": nil},
		{"source_kind": nil, "package": nil, "update_command": nil, "deprecated": nil, "provenance_lost": nil},
	}
	for i, w := range want {
		for k, v := range w {
			if g, ok := got.Components[i][k]; !ok || g != v {
				t.Errorf("component %d: %s = %#v (present %v), want %#v", i, k, g, ok, v)
			}
		}
	}
}

// Source health carries source_kind and, for npm sources, the package, the
// registry, its pinned key ids and when they changed; other kinds have
// nulls and no keys.
func TestSourcesCarryRegistryFields(t *testing.T) {
	t.Parallel()
	changed := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	npm := readmodel.SourceRow{URL: "npm:@acme/blog", Kind: readmodel.SourceNpm, Package: "@acme/blog",
		Registry: "http://127.0.0.1:4873/", RegistryKeys: []string{"SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA"},
		KeysChangedAt: &changed, Components: 1, HasDocument: true, SignatureState: "unsigned"}
	doc := readmodel.SourceRow{URL: "https://acme.example/u.json", Kind: readmodel.SourceDocument, Components: 2,
		SignatureState: "verified"}
	body, err := web.SourcesJSON(npm, doc)
	if err != nil {
		t.Fatal(err)
	}
	contractOK(t, "/api/admin/sources", body)
	var got struct{ Sources []map[string]any }
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	n, d := got.Sources[0], got.Sources[1]
	if n["source_kind"] != "npm" || n["package"] != "@acme/blog" || n["registry"] != "http://127.0.0.1:4873/" ||
		n["keys_changed_at"] != "2026-11-30T03:00:00Z" {
		t.Errorf("npm source: %v", n)
	}
	if keys, _ := n["registry_keys"].([]any); len(keys) != 1 || keys[0] != npm.RegistryKeys[0] {
		t.Errorf("npm source's registry_keys = %v", n["registry_keys"])
	}
	if d["source_kind"] != "document" || d["package"] != nil || d["registry"] != nil || d["keys_changed_at"] != nil {
		t.Errorf("document source: %v", d)
	}
	if keys, ok := d["registry_keys"].([]any); !ok || len(keys) != 0 {
		t.Errorf("document source's registry_keys = %#v, want []", d["registry_keys"])
	}
}

// The detail API carries the registry's facts whole (versions with their
// publish times, provenance, signing key and core range; refused versions
// and their reasons), the update command, and deprecated and
// provenance_lost read from them; a document component has registry null.
func TestDetailCarriesRegistryFacts(t *testing.T) {
	t.Parallel()
	pub := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	d := catalog.Detail{ComponentDetail: store.ComponentDetail{DetailRow: readmodel.DetailRow{Code: "acme-blog", Name: "Blog",
		Installed: "2.3.0", SourceURL: "npm:@acme/blog", Evaluated: true, Latest: "2.5.0", UpdateAvailable: true,
		Deprecated: "use @acme/journal", ProvenanceLost: "2.5.0",
		UpdateCommand: "npm install @acme/blog@2.5.0",
		Registry: &readmodel.RegistryFacts{Package: "@acme/blog", Registry: "http://127.0.0.1:4873/", Deprecated: "use @acme/journal",
			KeysPublished: true, ProvenanceLost: "2.5.0",
			Versions: []readmodel.RegistryVersion{
				{Version: "2.5.0", Published: pub.Add(48 * time.Hour), SignedBy: "SHA256:abc", RequiresCore: "^2.0.0"},
				{Version: "2.3.0", Published: pub, Installed: true, Provenance: true, SignedBy: "SHA256:abc"}},
			Refused: []readmodel.RefusedVersion{{Version: "2.4.0", Reason: "its signature does not verify"}}}}}}
	body, err := web.DetailJSON(d)
	if err != nil {
		t.Fatal(err)
	}
	contractOK(t, "/api/admin/plugins/acme-blog", body)
	m := members(t, body)
	if m["source_kind"] != "npm" || m["package"] != "@acme/blog" || m["update_command"] != "npm install @acme/blog@2.5.0" ||
		m["deprecated"] != "use @acme/journal" || m["provenance_lost"] != "2.5.0" {
		t.Errorf("detail: %s", body)
	}
	reg, _ := m["registry"].(map[string]any)
	if reg == nil || reg["keys_published"] != true || !strings.Contains(string(body), `"refused":[{"version":"2.4.0","reason":"its signature does not verify"}]`) ||
		!strings.Contains(string(body), `"requires_core":"^2.0.0"`) || !strings.Contains(string(body), `"published":"2026-11-01T12:00:00Z"`) {
		t.Errorf("registry facts: %s", body)
	}

	d.SourceURL, d.Registry, d.UpdateCommand, d.Deprecated, d.ProvenanceLost = "https://acme.example/u.json", nil, "", "", ""
	body, err = web.DetailJSON(d)
	if err != nil {
		t.Fatal(err)
	}
	contractOK(t, "/api/admin/plugins/acme-blog", body)
	m = members(t, body)
	for _, k := range []string{"registry", "package", "update_command", "deprecated", "provenance_lost"} {
		if v, ok := m[k]; !ok || v != nil {
			t.Errorf("document component: %s = %#v (present %v), want null", k, v, ok)
		}
	}
	if m["source_kind"] != "document" {
		t.Errorf("document component: source_kind = %v", m["source_kind"])
	}
}

// The summary's deprecated and trust_downgrades counts and its attention
// items of the kinds provenance_lost and deprecated are in the contract.
func TestSummaryCarriesNpmCounts(t *testing.T) {
	t.Parallel()
	msg, lost := "use @acme/journal", "2.5.0"
	sum := readmodel.Summary{Components: 2, Deprecated: 1, TrustDowngrades: 1, Attention: []readmodel.AttentionItem{
		{Code: "acme-blog", Name: "Blog", Installed: "2.3.0", Kind: readmodel.KindProvenanceLost, ProvenanceLost: &lost, UpdateVersion: &lost},
		{Code: "acme-old", Name: "Old", Installed: "1.0.0", Kind: readmodel.KindDeprecated, Deprecated: &msg},
	}}
	body, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	contractOK(t, "/api/admin/plugins/updates/summary", body)
	m := members(t, body)
	if m["deprecated"] != float64(1) || m["trust_downgrades"] != float64(1) {
		t.Errorf("summary: %s", body)
	}
}
