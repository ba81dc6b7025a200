package npm

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const testDocument = `{
  "_id": "@acme/blog", "_rev": "7-abc",
  "name": "@acme/blog",
  "readme": "# Blog\n` + "with \\\"quotes\\\" and {braces} [brackets]" + `",
  "maintainers": [{"name": "a", "email": "a@example.test"}, []],
  "dist-tags": {"latest": "1.1.0", "next": "2.0.0-rc.1"},
  "versions": {
    "1.0.0": {"name": "@acme/blog", "version": "1.0.0", "deprecated": "use 1.1.0: it fixes a data loss",
      "scripts": {"test": "x"}, "dependencies": {"debug": "2.6.8"},
      "dist": {"integrity": "sha512-AAA", "shasum": "aaa", "tarball": "http://127.0.0.1/t.tgz",
        "signatures": [{"keyid": "SHA256:k1", "sig": "MEUC"}]}},
    "1.1.0": {"version": "1.1.0", "deprecated": false,
      "peerDependencies": {"@vitnode/core": "^2.1.0"},
      "dependencies": {"debug": "^2.6.9", "fsevents": "^1.0.0"}, "optionalDependencies": {"fsevents": "^2.0.0", "bufferutil": "4.0.1"},
      "dist": {"integrity": "sha512-BBB", "attestations": {"url": "http://127.0.0.1/att", "provenance": {"predicateType": "https://slsa.dev/provenance/v1"}}}},
    "2.0.0-rc.1": {"dist": {"integrity": "sha512-CCC"}}
  },
  "time": {"created": "2024-01-01T00:00:00.000Z", "modified": "2024-03-01T00:00:00.000Z",
    "1.0.0": "2024-01-01T00:00:00.000Z", "1.1.0": "2024-02-01T12:30:00.5Z", "2.0.0-rc.1": "not a time"},
  "users": {"x": true}
}`

func TestDecodePackageKeepsWhatItNeeds(t *testing.T) {
	t.Parallel()
	pkg, err := DecodePackage(strings.NewReader(testDocument), DefaultMaxDocument)
	if err != nil {
		t.Fatal(err)
	}
	if pkg.Name != "@acme/blog" || pkg.DistTags["latest"] != "1.1.0" || pkg.DistTags["next"] != "2.0.0-rc.1" {
		t.Errorf("name and tags: %q %v", pkg.Name, pkg.DistTags)
	}
	if len(pkg.Versions) != 3 {
		t.Fatalf("versions: %v", pkg.Versions)
	}
	v1, v11 := pkg.Versions["1.0.0"], pkg.Versions["1.1.0"]
	if v1.Deprecated != "use 1.1.0: it fixes a data loss" || v11.Deprecated != "" {
		t.Errorf("deprecated: %q, %q", v1.Deprecated, v11.Deprecated)
	}
	if len(v1.Dist.Signatures) != 1 || v1.Dist.Signatures[0] != (Signature{KeyID: "SHA256:k1", Sig: "MEUC"}) || v1.Dist.Integrity != "sha512-AAA" || v1.Dist.Attestations != nil {
		t.Errorf("1.0.0 dist: %+v", v1.Dist)
	}
	if a := v11.Dist.Attestations; a == nil || a.URL != "http://127.0.0.1/att" || a.PredicateType != "https://slsa.dev/provenance/v1" {
		t.Errorf("1.1.0 attestations: %+v", a)
	}
	if v11.PeerDependencies["@vitnode/core"] != "^2.1.0" {
		t.Errorf("1.1.0 peers: %v", v11.PeerDependencies)
	}
	want := map[string]time.Time{"1.0.0": time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), "1.1.0": time.Date(2024, 2, 1, 12, 30, 0, 5e8, time.UTC)}
	if len(pkg.Published) != len(want) {
		t.Errorf("published: %v (created, modified and a time that is none are not versions)", pkg.Published)
	}
	for v, at := range want {
		if !pkg.Published[v].Equal(at) {
			t.Errorf("published %s: %v, want %v", v, pkg.Published[v], at)
		}
	}
	if !pkg.Modified.Equal(time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("modified: %v, want 2024-03-01", pkg.Modified)
	}
}

func TestDecodePackageCap(t *testing.T) {
	t.Parallel()
	doc := `{"name": "big", "readme": "` + strings.Repeat("x", 10_000) + `", "versions": {}}`
	if _, err := DecodePackage(strings.NewReader(doc), int64(len(doc))); err != nil {
		t.Errorf("a document of exactly the cap: %v", err)
	}
	_, err := DecodePackage(strings.NewReader(doc), int64(len(doc)-1))
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("one byte over the cap: %v, want ErrTooLarge", err)
	}
}

func TestDecodePackageRefusesWhatIsNotOne(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{``, `[]`, `{"name": 1}`, `{"versions": {"1.0.0": []}, "name": "x"}`, `{"versions": []}`,
		`{"name": "x"`, `{"dist-tags": {"latest": 1}, "name": "x"}`, `{}`, `<html>`} {
		if _, err := DecodePackage(strings.NewReader(doc), DefaultMaxDocument); !errors.Is(err, ErrDocument) {
			t.Errorf("%q: %v, want ErrDocument", doc, err)
		}
	}
}

// The document is read as encoding/json read it, whatever decoder reads
// it now: invalid UTF-8 (an old readme, a deprecation message) is read as
// U+FFFD, a name given twice is allowed and the last wins, names match
// whatever their case.
func TestDecodePackageReadsAsEncodingJSONDid(t *testing.T) {
	t.Parallel()
	doc := "{\"name\": \"old\", \"readme\": \"caf\xe9\", \"dist-tags\": {\"latest\": \"0.9.0\"}, \"dist-tags\": {\"latest\": \"1.0.0\"},\n" +
		"\"versions\": {\"1.0.0\": {\"dependencies\": {\"a\": \"1\", \"a\": \"2\"}, \"deprecated\": \"gone \xff\",\n" +
		"  \"Dist\": {\"Integrity\": \"sha512-X\", \"tarball\": \"http://127.0.0.1/old.tgz\"}}}}"
	pkg, err := DecodePackage(strings.NewReader(doc), DefaultMaxDocument)
	if err != nil {
		t.Fatal(err)
	}
	v := pkg.Versions["1.0.0"]
	if pkg.DistTags["latest"] != "1.0.0" || v.Deprecated != "gone \uFFFD" || v.Dist.Integrity != "sha512-X" {
		t.Errorf("latest %q, deprecated %q, integrity %q", pkg.DistTags["latest"], v.Deprecated, v.Dist.Integrity)
	}
}

// A document read for a fix keeps the dependencies (optional ones
// included, their own range winning) of the versions asked for, and the
// rest of each version as DecodePackage keeps it; read without, none.
func TestDecodePackageKeepsDependenciesAskedFor(t *testing.T) {
	t.Parallel()
	pkg, err := DecodePackageKeeping(strings.NewReader(testDocument), DefaultMaxDocument, func(v string) bool { return v != "1.0.0" })
	if err != nil {
		t.Fatal(err)
	}
	v1, v11 := pkg.Versions["1.0.0"], pkg.Versions["1.1.0"]
	want := map[string]string{"debug": "^2.6.9", "fsevents": "^2.0.0", "bufferutil": "4.0.1"}
	if v1.Dependencies != nil || len(v11.Dependencies) != len(want) {
		t.Fatalf("dependencies: 1.0.0 %v, 1.1.0 %v", v1.Dependencies, v11.Dependencies)
	}
	for name, r := range want {
		if v11.Dependencies[name] != r {
			t.Errorf("1.1.0 %s: %q, want %q", name, v11.Dependencies[name], r)
		}
	}
	if v11.Dist.Integrity != "sha512-BBB" || v11.Dist.Attestations == nil || v11.PeerDependencies["@vitnode/core"] != "^2.1.0" {
		t.Errorf("1.1.0 read with its dependencies lost the rest: %+v", v11)
	}
	plain, err := DecodePackage(strings.NewReader(testDocument), DefaultMaxDocument)
	if err != nil {
		t.Fatal(err)
	}
	for v, ver := range plain.Versions {
		if ver.Dependencies != nil {
			t.Errorf("%s kept its dependencies unasked: %v", v, ver.Dependencies)
		}
	}
}
