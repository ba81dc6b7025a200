package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

// `upcheck source import`: an air-gapped site pins its publisher's key for
// an offline source, imports the signed document and its .sig from a USB
// stick, and sees its components evaluated; a document signed by another
// key, or older than the stored one, is refused in words and changes
// nothing; a check leaves the offline source alone.
func TestSourceImport(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	dir := t.TempDir()
	keygen := func() (pub, keyPath string) {
		out, code := cli(t, nil, "publisher", "keygen")
		var k struct {
			Public  string `json:"public_key"`
			Private string `json:"private_key"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &k) != nil {
			t.Fatalf("keygen: %s", out)
		}
		f, err := os.CreateTemp(dir, "key")
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(k.Private + "\n")
		f.Close()
		return k.Public, f.Name()
	}
	pub, key := keygen()
	_, otherKey := keygen()
	write := func(name, body, keyFile string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, code := cli(t, nil, "publisher", "sign", "--key-file", keyFile, "--write", path); code != 0 {
			t.Fatalf("sign %s failed", name)
		}
		return path
	}
	docAt := func(seq string) string {
		return `{"format": 1, "publisher": "acme", "sequence": ` + seq + `, "expires": "2099-01-01T00:00:00Z", "packages": {
		  "core": {"releases": [{"version": "1.10.0"}]},
		  "blog": {"releases": [{"version": "2.4.0", "security": true, "severity": "high"}]}}}`
	}
	good := write("feed.json", docAt("7"), key)
	forged := write("forged.json", docAt("8"), otherKey)
	older := write("older.json", docAt("6"), key)

	manifestPath := filepath.Join(dir, "manifest.yaml")
	os.WriteFile(manifestPath, []byte(`components:
  - {code: core, name: Core, version: 1.9.0, source: "offline:acme", key: "`+pub+`"}
  - {code: blog, name: Blog, version: 2.3.0, source: "offline:acme", key: "`+pub+`"}
`), 0o644)
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_MANIFEST": manifestPath}
	if out, code := cli(t, env, "components", "sync"); code != 0 {
		t.Fatalf("components sync: %s", out)
	}

	out, code := cli(t, env, "source", "import", "--source", "offline:acme", good, "--sig", good+".sig")
	if code != 0 || !strings.Contains(out, `"status":"imported"`) || !strings.Contains(out, `"sequence":7`) || !strings.Contains(out, `"components":2`) {
		t.Fatalf("import: %s (exit %d)", out, code)
	}
	var evaluated, security int
	d.QueryRow(t, "SELECT count(*) FILTER (WHERE evaluated), count(*) FILTER (WHERE security) FROM component_state").Scan(&evaluated, &security)
	if evaluated != 2 || security != 1 {
		t.Fatalf("after the import: %d evaluated, %d security, want 2 and 1", evaluated, security)
	}

	for name, tc := range map[string]struct{ file, problem string }{
		"forged": {forged, "does not match"},
		"older":  {older, "an older document (sequence 6, after 7"},
	} {
		out, code := cli(t, env, "source", "import", "--source", "offline:acme", "--sig", tc.file+".sig", tc.file)
		var line struct{ Status, Kind, Problem string }
		if err := json.Unmarshal([]byte(out), &line); err != nil || code != 8 || line.Status != "refused" || !strings.Contains(line.Problem, tc.problem) {
			t.Fatalf("%s: %s (exit %d), want refused (exit 8) saying %q", name, out, code, tc.problem)
		}
	}
	var seq int64
	var lastError *string
	d.QueryRow(t, "SELECT sequence, last_error FROM sources WHERE url = 'offline:acme'").Scan(&seq, &lastError)
	if seq != 7 || lastError != nil {
		t.Fatalf("source after refused imports: sequence %d, error %v; want 7 kept, no error", seq, lastError)
	}

	// The check has nothing to fetch: it completes, the offline source is
	// neither fetched nor failed.
	out, code = cli(t, env, "check")
	if code != 0 || !strings.Contains(out, `"sources":0`) || !strings.Contains(out, `"offline":1`) || !strings.Contains(out, `"failed":0`) {
		t.Fatalf("check: %s (exit %d)", out, code)
	}

	if _, code := cli(t, env, "source", "import", good); code != 2 {
		t.Fatalf("import without --source: exit %d, want 2", code)
	}
	if _, code := cli(t, env, "source", "import", "--source", "offline:other", good); code != 1 {
		t.Fatalf("import for a source no component uses: exit %d, want 1", code)
	}
}
