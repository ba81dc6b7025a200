package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// initDir runs `publisher init` in a new folder and returns it.
func initDir(t *testing.T, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	if _, stderr, code := cliOut(t, nil, append([]string{"publisher", "init", "--dir", dir}, args...)...); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	return dir
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func parseFile(t *testing.T, path string) *updatedoc.Document {
	t.Helper()
	doc, err := updatedoc.Parse(readFile(t, path))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

// init writes a document that parses, and a key pair that signs it so
// that the public key verifies; it never overwrites.
func TestPublisherInit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stdout, stderr, code := cliOut(t, nil, "publisher", "init", "--dir", dir, "--publisher", "Acme Plugins",
		"--package", "blog,gallery", "--package", "forms", "--expires", "2027-01-31T00:00:00Z")
	if code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	want := `{
  "format": 1,
  "publisher": "Acme Plugins",
  "sequence": 1,
  "expires": "2027-01-31T00:00:00Z",
  "packages": {
    "blog": {},
    "gallery": {},
    "forms": {}
  }
}
`
	docPath := filepath.Join(dir, "updates.json")
	if got := string(readFile(t, docPath)); got != want {
		t.Fatalf("updates.json =\n%s\nwant\n%s", got, want)
	}
	doc := parseFile(t, docPath)
	if doc.Publisher != "Acme Plugins" || len(doc.Packages) != 3 {
		t.Fatalf("document = %+v", doc)
	}
	info, err := os.Stat(filepath.Join(dir, "publisher.key"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("publisher.key: %v, mode %v; want 0600", err, info.Mode())
	}
	pubText := strings.TrimSpace(string(readFile(t, filepath.Join(dir, "publisher.pub"))))
	if !strings.Contains(stdout, pubText) {
		t.Errorf("init output %q does not show the public key %s", stdout, pubText)
	}
	priv, err := updatedoc.ParsePrivateKey(strings.TrimSpace(string(readFile(t, filepath.Join(dir, "publisher.key")))))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := updatedoc.ParsePublicKey(pubText)
	if err != nil {
		t.Fatal(err)
	}
	body := readFile(t, docPath)
	if err := updatedoc.Verify(body, updatedoc.Sign(body, priv), pub); err != nil {
		t.Fatalf("the key pair does not match: %v", err)
	}

	// A second init in the same folder writes nothing.
	key := readFile(t, filepath.Join(dir, "publisher.key"))
	if _, stderr, code := cliOut(t, nil, "publisher", "init", "--dir", dir, "--publisher", "Other"); code != 1 || !strings.Contains(stderr, "exists") {
		t.Fatalf("init over an existing one: exit %d, %q; want 1 and a refusal", code, stderr)
	}
	if !bytes.Equal(readFile(t, docPath), body) || !bytes.Equal(readFile(t, filepath.Join(dir, "publisher.key")), key) {
		t.Fatal("init overwrote a file")
	}
	// Only the public key there is enough to refuse.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "publisher.pub"), []byte("mine\n"), 0o644)
	if _, _, code := cliOut(t, nil, "publisher", "init", "--dir", other, "--publisher", "acme"); code != 1 {
		t.Fatalf("init next to a publisher.pub: exit %d, want 1", code)
	}
	if entries, _ := os.ReadDir(other); len(entries) != 1 {
		t.Fatalf("refused init left %d files, want only publisher.pub", len(entries))
	}
}

// What the checker would refuse, init refuses, and writes nothing.
func TestPublisherInitRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"--package", "blog"}, 1, "publisher: publisher is missing"},
		{[]string{"--publisher", "acme", "--expires", "next year"}, 1, `expires: expires "next year" is not an RFC 3339 time`},
		{[]string{"--publisher", "acme", "--nope"}, 2, "flag provided but not defined"},
		{[]string{"--publisher", "acme", "extra"}, 2, `unexpected argument "extra"`},
	} {
		dir := t.TempDir()
		_, stderr, code := cliOut(t, nil, append([]string{"publisher", "init", "--dir", dir}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("init %q: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.stderr)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("init %q was refused but wrote %d files", tc.args, len(entries))
		}
	}
}

// release add appends the release with every field given, adds one to
// the sequence, and keeps the rest of the file as it was (member order,
// unknown members, the text of values).
func TestPublisherReleaseAdd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	docPath := filepath.Join(dir, "updates.json")
	os.WriteFile(docPath, []byte(`{"publisher": "acme", "format": 1, "sequence": 41, "x-mirror": "https://m.example/<a>",
	  "packages": {"blog": {"advisories": [{"id": "A-1", "affected": "<1.0.0"}],
	  "releases": [{"version": "1.0.0", "summary": "caf\u00e9"}]}}}`), 0o644)
	stdout, stderr, code := cliOut(t, nil, "publisher", "release", "add", "--package", "blog", "--version", "2.4.0",
		"--released", "2026-11-20T10:00:00Z", "--requires-core", ">=1.8.0", "--security", "--severity", "high",
		"--summary", "Fixes stored XSS", "--url", "https://acme.example/blog/2.4.0", docPath)
	if code != 0 || !strings.Contains(stdout, "sequence 42") {
		t.Fatalf("release add: exit %d, %q, %q", code, stdout, stderr)
	}
	want := `{
  "publisher": "acme",
  "format": 1,
  "sequence": 42,
  "x-mirror": "https://m.example/<a>",
  "packages": {
    "blog": {
      "advisories": [
        {
          "id": "A-1",
          "affected": "<1.0.0"
        }
      ],
      "releases": [
        {
          "version": "1.0.0",
          "summary": "caf\u00e9"
        },
        {
          "version": "2.4.0",
          "released": "2026-11-20T10:00:00Z",
          "requires_core": ">=1.8.0",
          "security": true,
          "severity": "high",
          "summary": "Fixes stored XSS",
          "url": "https://acme.example/blog/2.4.0"
        }
      ]
    }
  }
}
`
	if got := string(readFile(t, docPath)); got != want {
		t.Fatalf("after release add:\n%s\nwant\n%s", got, want)
	}
	// A package not yet in the document is added; "now" is the time now;
	// a new expires goes before the packages. Through a symbolic link, the
	// file it points to is edited and the link stays.
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(docPath, link); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := cliOut(t, nil, "publisher", "release", "add", "--package", "forms", "--version", "0.1.0", "--released", "now",
		"--expires", "2027-02-01T00:00:00Z", link); code != 0 {
		t.Fatalf("release add to a new package: exit %d: %s", code, stderr)
	}
	doc := parseFile(t, docPath)
	forms := doc.Packages["forms"]
	if doc.Sequence != 43 || forms == nil || len(forms.Releases) != 1 || forms.Releases[0].Released.IsZero() ||
		doc.Expires.Format(time.RFC3339) != "2027-02-01T00:00:00Z" {
		t.Fatalf("after adding to forms: sequence %d, expires %v, forms %+v", doc.Sequence, doc.Expires, forms)
	}
	if body := string(readFile(t, docPath)); !strings.Contains(body, "\"x-mirror\": \"https://m.example/<a>\",\n  \"expires\": \"2027-02-01T00:00:00Z\",\n  \"packages\"") {
		t.Fatalf("expires not before packages:\n%s", body)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", err, info.Mode())
	}
}

// Whatever the checker would refuse is refused, and the file is left
// exactly as it was.
func TestPublisherAddRefusesAndLeavesTheFile(t *testing.T) {
	t.Parallel()
	dir := initDir(t, "--publisher", "acme", "--package", "blog")
	docPath := filepath.Join(dir, "updates.json")
	if _, stderr, code := cliOut(t, nil, "publisher", "release", "add", "--package", "blog", "--version", "2.4.0", docPath); code != 0 {
		t.Fatalf("release add: %s", stderr)
	}
	if _, stderr, code := cliOut(t, nil, "publisher", "advisory", "add", "--package", "blog", "--id", "A-1", "--affected", "<2.4.0", docPath); code != 0 {
		t.Fatalf("advisory add: %s", stderr)
	}
	before := readFile(t, docPath)
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"release", "add", "--package", "blog", "--version", "2.4.0+b2"}, 1,
			`packages.blog.releases[1].version: releases[1].version "2.4.0+b2" of package "blog" repeats releases[0].version "2.4.0"`},
		{[]string{"release", "add", "--package", "blog", "--version", "v2.5.0"}, 1, `is not a semantic version`},
		{[]string{"release", "add", "--package", "blog"}, 1, `packages.blog.releases[1].version: releases[1].version of package "blog" is missing`},
		{[]string{"release", "add", "--package", "blog", "--version", "2.5.0", "--severity", "urgent", "--url", "javascript:x"}, 1,
			"packages.blog.releases[1].severity: releases[1].severity \"urgent\" of package \"blog\" is not one of low, medium, high, critical\n" +
				`packages.blog.releases[1].url: releases[1].url "javascript:x" of package "blog": not an absolute http or https URL`},
		{[]string{"release", "add", "--package", "blog", "--version", "2.5.0", "--requires-core", ">>1"}, 1, `is not a valid range`},
		{[]string{"release", "add", "--package", "blog", "--version", "2.5.0", "--released", "today"}, 1, `is not an RFC 3339 time`},
		{[]string{"release", "add", "--package", "blog", "--version", "2.5.0", "--security=maybe"}, 2, `invalid boolean value`},
		{[]string{"release", "add", "--package", "blog", "--version", "2.5.0", "--expires", "soon"}, 1, `expires: expires "soon" is not an RFC 3339 time`},
		{[]string{"release", "add", "--version", "2.5.0"}, 2, `want --package CODE`},
		{[]string{"release", "add", "--package", "", "--version", "2.5.0"}, 2, `want --package CODE`},
		{[]string{"release", "remove", "--package", "blog"}, 2, `want "add"`},
		{[]string{"advisory", "add", "--package", "blog", "--id", "A-1", "--affected", "<2.0.0"}, 1, `advisories[1].id "A-1" of package "blog" repeats advisories[0].id`},
		{[]string{"advisory", "add", "--package", "blog", "--id", "A-2"}, 1, `packages.blog.advisories[1].affected: advisories[1].affected of package "blog" is missing`},
		{[]string{"advisory", "add", "--package", "blog", "--id", "A-2", "--affected", "<=2.4.0", "--fixed-in", "2.4.0"}, 1,
			`advisories[1].fixed_in "2.4.0" of package "blog" is inside its affected range "<=2.4.0"`},
		{[]string{"advisory", "add", "--package", "blog", "--affected", "<1.0.0", "--url", "https://a@evil.example/"}, 1,
			"advisories[1].id of package \"blog\" is missing\npackages.blog.advisories[1].url"},
	} {
		args := append(append([]string{"publisher"}, tc.args...), docPath)
		_, stderr, code := cliOut(t, nil, args...)
		if code != tc.code || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%q: exit %d, stderr\n%s\nwant exit %d and\n%s", tc.args, code, stderr, tc.code, tc.stderr)
		}
		if tc.code == 1 && !strings.Contains(stderr, "nothing changed") {
			t.Errorf("%q: stderr %q does not say nothing changed", tc.args, stderr)
		}
		if !bytes.Equal(readFile(t, docPath), before) {
			t.Fatalf("%q was refused but changed the file", tc.args)
		}
	}

	// A document that already has problems is not edited at all.
	broken := filepath.Join(dir, "broken.json")
	brokenBody := []byte(`{"format": 1, "publisher": "acme", "sequence": 3, "packages": {"blog": {"releases": [{"version": "1.0"}]}}}`)
	os.WriteFile(broken, brokenBody, 0o644)
	_, stderr, code := cliOut(t, nil, "publisher", "release", "add", "--package", "blog", "--version", "2.0.0", broken)
	if code != 1 || !strings.Contains(stderr, broken+`:1:98: packages.blog.releases[0].version: releases[0].version "1.0"`) || !strings.Contains(stderr, "fix them first") {
		t.Fatalf("adding to a broken document: exit %d, %q", code, stderr)
	}
	if !bytes.Equal(readFile(t, broken), brokenBody) {
		t.Fatal("a broken document was edited")
	}
	// Sites refuse a document larger than the fetcher's cap.
	full := filepath.Join(dir, "full.json")
	fullBody := []byte(`{"format": 1, "publisher": "acme", "sequence": 3, "packages": {}, "x-pad": "` + strings.Repeat("a", maxDocument-100) + `"}` + "\n")
	os.WriteFile(full, fullBody, 0o644)
	_, stderr, code = cliOut(t, nil, "publisher", "release", "add", "--package", "blog", "--version", "2.0.0", "--summary", strings.Repeat("b", 100), full)
	if code != 1 || !strings.Contains(stderr, "larger than 2097152 bytes") || !bytes.Equal(readFile(t, full), fullBody) {
		t.Fatalf("growing a document past the cap: exit %d, %q", code, stderr)
	}
	if _, _, code := cliOut(t, nil, "publisher", "release", "add", "--package", "blog", "--version", "2.0.0", filepath.Join(dir, "missing.json")); code != 1 {
		t.Fatalf("adding to a missing file: exit %d, want 1", code)
	}
}

// advisory add writes every field in the order of the format's table.
func TestPublisherAdvisoryAdd(t *testing.T) {
	t.Parallel()
	dir := initDir(t, "--publisher", "acme", "--package", "blog")
	docPath := filepath.Join(dir, "updates.json")
	if _, stderr, code := cliOut(t, nil, "publisher", "advisory", "add", "--package", "blog", "--id", "ACME-2026-007",
		"--affected", "<2.4.0", "--fixed-in", "2.4.0", "--severity", "critical", "--summary", "Stored XSS",
		"--url", "https://acme.example/advisories/ACME-2026-007", docPath); code != 0 {
		t.Fatalf("advisory add: exit %d: %s", code, stderr)
	}
	want := `
    "blog": {
      "advisories": [
        {
          "id": "ACME-2026-007",
          "severity": "critical",
          "affected": "<2.4.0",
          "fixed_in": "2.4.0",
          "summary": "Stored XSS",
          "url": "https://acme.example/advisories/ACME-2026-007"
        }
      ]
    }`
	body := string(readFile(t, docPath))
	if !strings.Contains(body, want) || !strings.Contains(body, `"sequence": 2,`) {
		t.Fatalf("after advisory add:\n%s", body)
	}
	a := parseFile(t, docPath).Packages["blog"].Advisories
	if len(a) != 1 || a[0].ID != "ACME-2026-007" || a[0].FixedIn != "2.4.0" {
		t.Fatalf("advisories = %+v", a)
	}

	// OSV's members: a flag each too.
	if _, stderr, code := cliOut(t, nil, "publisher", "advisory", "add", "--package", "blog", "--id", "ACME-2026-008",
		"--affected", "<2.5.0", "--aliases", "CVE-2026-1234,GHSA-jfh8-c2jp-5v3q", "--aliases", "PYSEC-2026-1",
		"--cvss", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", "--modified", "2026-11-21T00:00:00Z",
		"--withdrawn", "2026-11-22T00:00:00Z", "--references", "FIX=https://acme.example/fix", "--references", "WEB=https://acme.example/?a=b",
		docPath); code != 0 {
		t.Fatalf("advisory add with OSV members: exit %d: %s", code, stderr)
	}
	a = parseFile(t, docPath).Packages["blog"].Advisories
	if len(a) != 2 || !slices.Equal(a[1].Aliases, []string{"CVE-2026-1234", "GHSA-jfh8-c2jp-5v3q", "PYSEC-2026-1"}) ||
		a[1].CVSSScore != 9.8 || a[1].Severity != "critical" || a[1].Withdrawn.IsZero() || a[1].Modified.IsZero() ||
		!slices.Equal(a[1].References, []release.Reference{{Type: "FIX", URL: "https://acme.example/fix"}, {Type: "WEB", URL: "https://acme.example/?a=b"}}) {
		t.Fatalf("advisory with OSV members = %+v", a[1])
	}
	before := readFile(t, docPath)
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"--aliases", "CVE-26-1"}, 1, `packages.blog.advisories[2].aliases[0]: advisories[2].aliases[0] "CVE-26-1" of package "blog" is not a CVE id`},
		{[]string{"--cvss", "AV:N"}, 1, `packages.blog.advisories[2].cvss: `},
		{[]string{"--references", "BLOG=https://a.example/"}, 1, `packages.blog.advisories[2].references[0].type: `},
		{[]string{"--references", "https://a.example/"}, 2, `want TYPE=URL`},
	} {
		args := append(append([]string{"publisher", "advisory", "add", "--package", "blog", "--id", "X-9", "--affected", "<1.0.0"}, tc.args...), docPath)
		if _, stderr, code := cliOut(t, nil, args...); code != tc.code || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%q: exit %d, %q; want %d and %q", tc.args, code, stderr, tc.code, tc.stderr)
		}
		if !bytes.Equal(readFile(t, docPath), before) {
			t.Fatalf("%q was refused but changed the file", tc.args)
		}
	}
}

// lint lists every problem with file, line, column and path, and exits 1;
// a good document gets one ok line and exit 0.
func TestPublisherLint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{
  "format": 1,
  "publisher": "acme",
  "sequence": 7,
  "packages": {
    "blog": {
      "releases": [{"version": "1.0.0", "Summary": "x"}, {"version": "abc"}],
      "advisories": [{"id": "A-1", "affected": "<1.0.0", "url": "ftp://acme.example/a"}]
    }
  }
}`), 0o644)
	stdout, stderr, code := cliOut(t, nil, "publisher", "lint", bad)
	want := bad + `:7:41: packages.blog.releases[0].Summary: packages.blog.releases[0]: member "Summary" must be spelled "summary" (member names are case-sensitive)
` + bad + `:7:70: packages.blog.releases[1].version: releases[1].version "abc" of package "blog" is not a semantic version
` + bad + `:8:65: packages.blog.advisories[0].url: advisories[0].url "ftp://acme.example/a" of package "blog": not an absolute http or https URL
`
	if code != 1 || stdout != want || !strings.Contains(stderr, "has 3 problems") {
		t.Fatalf("lint: exit %d, stdout\n%s\nwant\n%s\nstderr %q", code, stdout, want, stderr)
	}

	good := initDir(t, "--publisher", "acme", "--package", "blog", "--expires", "2027-01-01T00:00:00Z")
	stdout, _, code = cliOut(t, nil, "publisher", "lint", filepath.Join(good, "updates.json"))
	if code != 0 || !regexp.MustCompile(`^.*updates\.json: ok \(publisher "acme", sequence 1, 1 packages, expires 2027-01-01T00:00:00Z\)\n$`).MatchString(stdout) {
		t.Fatalf("lint of a good document: exit %d, %q", code, stdout)
	}
	if _, _, code := cliOut(t, nil, "publisher", "lint"); code != 2 {
		t.Fatalf("lint without a file: exit %d, want 2", code)
	}
	if _, _, code := cliOut(t, nil, "publisher", "lint", filepath.Join(dir, "none.json")); code != 1 {
		t.Fatalf("lint of a missing file: exit %d, want 1", code)
	}
}
