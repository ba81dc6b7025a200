package npm

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

// bundleOf is an attestation bundle holding one statement of
// predicateType whose payload is statement (JSON).
func bundleOf(predicateType, statement string) string {
	payload := base64.StdEncoding.EncodeToString([]byte(statement))
	return `{"attestations": [{"predicateType": "https://github.com/npm/attestation/tree/main/specs/publish/v0.1",
		"bundle": {"dsseEnvelope": {"payload": "` + base64.StdEncoding.EncodeToString([]byte(`{"predicateType": "x"}`)) + `"}}},
		{"predicateType": "` + predicateType + `", "bundle": {"mediaType": "application/vnd.dev.sigstore.bundle+json;version=0.2",
		"dsseEnvelope": {"payload": "` + payload + `", "payloadType": "application/vnd.in-toto+json", "signatures": []}}}]}`
}

// The repository a bundle's SLSA provenance names is read from the
// in-toto statement in its DSSE envelope, v1 and v0.2, and normalized;
// a bundle that names none gives "", one that is no bundle an error.
func TestProvenanceRepositoryOf(t *testing.T) {
	t.Parallel()
	v1 := func(repo string) string {
		return bundleOf(PredicateSLSAv1, `{"_type": "https://in-toto.io/Statement/v1", "predicateType": "`+PredicateSLSAv1+`",
			"predicate": {"buildDefinition": {"externalParameters": {"workflow": {"ref": "refs/heads/main", "repository": "`+repo+`"}}}}}`)
	}
	v02 := bundleOf(PredicateSLSAv02, `{"_type": "https://in-toto.io/Statement/v0.1", "predicateType": "`+PredicateSLSAv02+`",
		"predicate": {"invocation": {"configSource": {"uri": "git+https://git.example.test/acme/blog@refs/heads/main"}}}}`)
	for name, c := range map[string]struct{ bundle, want string }{
		"v1":            {v1("https://git.example.test/acme/blog"), "https://git.example.test/acme/blog"},
		"v1 git+ .git":  {v1("git+https://git.example.test/acme/blog.git"), "https://git.example.test/acme/blog"},
		"v0.2":          {v02, "https://git.example.test/acme/blog"},
		"no repository": {bundleOf(PredicateSLSAv1, `{"predicateType": "`+PredicateSLSAv1+`", "predicate": {}}`), ""},
		"no provenance": {`{"attestations": [{"predicateType": "https://github.com/npm/attestation/tree/main/specs/publish/v0.1",
			"bundle": {"dsseEnvelope": {"payload": ""}}}]}`, ""},
		"statement not JSON": {bundleOf(PredicateSLSAv1, `not json`), ""},
		"http repository":    {v1("http://git.example.test/acme/blog"), ""},
	} {
		got, err := ProvenanceRepositoryOf(strings.NewReader(c.bundle))
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, c.want)
		}
	}
	for name, bundle := range map[string]string{
		"not JSON":    `<html>`,
		"bad payload": `{"attestations": [{"predicateType": "` + PredicateSLSAv1 + `", "bundle": {"dsseEnvelope": {"payload": "%%%"}}}]}`,
	} {
		if _, err := ProvenanceRepositoryOf(strings.NewReader(bundle)); !errors.Is(err, ErrBundle) {
			t.Errorf("%s: %v, want ErrBundle", name, err)
		}
	}
}

// Two repositories are the same whatever the case of their host, owner
// and name once normalized; none is never the same.
func TestSameRepository(t *testing.T) {
	t.Parallel()
	pkg := NormalizeRepository("git+https://GIT.example.test/Acme/Blog.git")
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{pkg, "https://git.example.test/acme/blog", true},
		{pkg, "https://git.example.test/acme-evil/blog", false},
		{pkg, "https://other.example.test/acme/blog", false},
		{pkg, "", false},
		{"", "", false},
	} {
		if got := SameRepository(c.a, c.b); got != c.same {
			t.Errorf("SameRepository(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

// A bundle's address must be http or https.
func TestBundleRequestRefusesOtherSchemes(t *testing.T) {
	t.Parallel()
	c := &Client{}
	for _, addr := range []string{"file:///etc/passwd", "ftp://x.example.test/b", "/-/npm/v1/attestations/a@1.0.0", "https://"} {
		if _, err := c.BundleRequest(addr); !errors.Is(err, ErrBundle) {
			t.Errorf("%q: %v, want ErrBundle", addr, err)
		}
	}
	if _, err := c.BundleRequest("https://registry.example.test/-/npm/v1/attestations/a@1.0.0"); err != nil {
		t.Errorf("https: %v", err)
	}
}
