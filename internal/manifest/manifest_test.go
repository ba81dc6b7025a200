package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/keys"
	"github.com/upcheck/upcheck/internal/npm"
)

func TestParseJSONAndYAMLAgree(t *testing.T) {
	t.Parallel()
	pub, _, err := keys.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	jsonDoc := `{"components": [
	  {"code": "core", "name": "Core", "version": "1.9.0", "source": "https://updates.example.org/core.json"},
	  {"code": "blog", "name": "Blog", "version": "2.3.0", "source": "https://acme.example/updates.json", "key": "` + pub.String() + `"},
	  {"code": "local", "name": "Local thing", "version": "0.1.0"},
	  {"code": "mirrored", "name": "Mirrored", "version": "1.0.0", "source": "offline:acme-2026", "key": "` + pub.String() + `"}
	]}`
	yamlDoc := `components:
  - code: core
    name: Core
    version: 1.9.0
    source: https://updates.example.org/core.json
  - code: blog
    name: Blog
    version: "2.3.0"
    source: https://acme.example/updates.json
    key: ` + pub.String() + `
  - code: local
    name: Local thing
    version: 0.1.0
  - code: mirrored
    name: Mirrored
    version: 1.0.0
    source: offline:acme-2026
    key: ` + pub.String() + `
`
	j, err := ParseJSON([]byte(jsonDoc))
	if err != nil {
		t.Fatal(err)
	}
	y, err := ParseYAML([]byte(yamlDoc))
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Components) != 4 || len(y.Components) != 4 {
		t.Fatalf("components: json %d, yaml %d", len(j.Components), len(y.Components))
	}
	for i := range j.Components {
		if !reflect.DeepEqual(j.Components[i], y.Components[i]) {
			t.Errorf("entry %d: json %+v, yaml %+v", i, j.Components[i], y.Components[i])
		}
	}
	if core, ok := j.Core(); !ok || core.Version != "1.9.0" {
		t.Fatalf("core = %+v %v", core, ok)
	}
}

func TestInvalidManifestsNameEntryAndField(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, doc, want string }{
		{"duplicate code", `{"components":[{"code":"a","name":"A","version":"1.0.0"},{"code":"a","name":"A2","version":"1.0.0"}]}`, `components[1] ("a"): code is a duplicate of components[0]`},
		{"bad semver", `{"components":[{"code":"a","name":"A","version":"1.0"}]}`, `components[0] ("a"): version "1.0" is not a semantic version`},
		{"bad url", `{"components":[{"code":"a","name":"A","version":"1.0.0","source":"ftp://x/y"}]}`, `components[0] ("a"): source "ftp://x/y" is not an http(s) URL`},
		{"offline source with a bad name", `{"components":[{"code":"a","name":"A","version":"1.0.0","source":"offline:Acme Feed"}]}`, `components[0] ("a"): source: offline source name "Acme Feed" must be 1 to 64 lower-case letters`},
		{"offline source without a name", `{"components":[{"code":"a","name":"A","version":"1.0.0","source":"offline:"}]}`, `components[0] ("a"): source: offline source name ""`},
		{"bad key", `{"components":[{"code":"a","name":"A","version":"1.0.0","source":"https://x/y","key":"ed25519:nope"}]}`, `components[0] ("a"): key:`},
		{"missing code", `{"components":[{"name":"A","version":"1.0.0"}]}`, `components[0]: code is missing`},
		{"missing name", `{"components":[{"code":"a","version":"1.0.0"}]}`, `components[0] ("a"): name is missing`},
		{"unknown field", `{"components":[{"code":"a","name":"A","verison":"1.0.0"}]}`, `unknown field "verison"`},
		{"key without source", `{"components":[{"code":"a","name":"A","version":"1.0.0","key":"ed25519:AAAA"}]}`, `key is set but there is no source`},
		{"trailing data", `{"components":[]} {}`, `unexpected data after the manifest at line 1, column 19`},
		{"no core", `{"components":[{"code":"a","name":"A","version":"1.0.0"}]}`, `no component has code "core"`},
		{"npm source with a bad name", `{"components":[{"code":"a","name":"A","version":"1.0.0","source":"npm:Acme Blog"}]}`, `components[0] ("a"): source: `},
		{"npm source with a key", `{"components":[{"code":"a","name":"A","version":"1.0.0","source":"npm:@acme/blog","key":"ed25519:AAAA"}]}`, `components[0] ("a"): key: an npm source is verified with its registry's signing keys`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseJSON([]byte(tc.doc))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want ErrInvalid containing %q", err, tc.want)
			}
		})
	}
	_, err := ParseYAML([]byte("components:\n  - code: a\n    name: A\n    version: 1.0.0\n    colour: red\n"))
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("yaml with unknown field: %v", err)
	}
}

// A manifest that does not decode is refused with the line and column of
// the problem, in JSON and in YAML, so the operator can find it in an
// editor.
func TestDecodeErrorsNameLineAndColumn(t *testing.T) {
	t.Parallel()
	entry := `{"code": "core", "name": "Core", "version": "1.0.0"}`
	cases := []struct{ name, doc, want string }{
		{"syntax error on a later line", "{\"components\": [\n  " + entry + ",\n  {\"code\": \"blog\" \"name\": \"Blog\"}\n]}",
			`malformed JSON at line 3, column 19: invalid character '"' after object key:value pair`},
		{"unexpected end", "{\"components\": [\n  " + entry, `malformed JSON at line 2, column 55: unexpected end of input`},
		{"wrong type", "{\"components\": [\n  {\"code\": \"core\", \"name\": \"Core\",\n   \"version\": 1.0}]}",
			`components[0].version at line 3, column 15 must be a string, not a JSON number`},
		{"whole manifest of the wrong type", `[]`, `the manifest at line 1, column 1 must be an object, not a JSON array`},
		{"unknown field", "{\"components\": [\n  {\"code\": \"core\", \"name\": \"Core\",\n      \"verison\" : \"1.0.0\"}]}",
			`unknown field "verison" at line 3, column 7`},
		{"characters before the problem count once each", "{\"components\": [{\"code\": \"core\", \"name\": \"Café\", \"version\": 1}]}",
			`components[0].version at line 1, column 61 must be a string`},
		{"a stray bracket after the manifest", `{"components":[]}]`, `unexpected data after the manifest at line 1, column 18`},
		{"empty file", ``, `invalid manifest: empty body`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseJSON([]byte(tc.doc))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want ErrInvalid containing %q", err, tc.want)
			}
		})
	}
	yamlCases := []struct{ name, doc, want string }{
		{"unknown field", "components:\n  - code: core\n    verison: 1.0.0\n", `unknown field "verison" at line 3, column 5`},
		{"syntax error", "components:\n  - code: [core\n", `at line 2, column 11`},
		{"wrong type", "components: 5\n", `at line 1, column 13`},
	}
	for _, tc := range yamlCases {
		t.Run("yaml "+tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseYAML([]byte(tc.doc))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error = %q, want ErrInvalid containing %q, on one line", err, tc.want)
			}
		})
	}
}

func TestLoadPicksFormatByExtension(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if m, err := Load(write("m.yml", "components:\n  - {code: core, name: Core, version: 1.0.0}\n")); err != nil || len(m.Components) != 1 {
		t.Fatalf("yml: %v %v", m, err)
	}
	if _, err := Load(write("m.toml", "")); !errors.Is(err, ErrInvalid) {
		t.Fatalf("toml: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Fatal("missing file accepted")
	}
}

// An npm source is a manifest entry like any other; one whose registry no
// setting names is refused by CheckRegistries, which names the setting.
func TestNpmSources(t *testing.T) {
	t.Parallel()
	m, err := ParseJSON([]byte(`{"components":[
	  {"code":"core","name":"Core","version":"3.0.0","source":"npm:@vitnode/core"},
	  {"code":"left-pad","name":"left-pad","version":"1.3.0","source":"npm:left-pad"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	err = m.CheckRegistries(npm.Registries{})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `components[0] ("core"): source npm:@vitnode/core: `) ||
		!strings.Contains(err.Error(), "UPCHECK_NPM_REGISTRY") || !strings.Contains(err.Error(), `components[1] ("left-pad")`) {
		t.Fatalf("no registry: %v", err)
	}
	u, err := npm.ParseRegistryURL("https://registry.example/")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckRegistries(npm.Registries{Default: u}); err != nil {
		t.Fatalf("with a registry: %v", err)
	}
}
