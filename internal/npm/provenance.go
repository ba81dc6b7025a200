package npm

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/upcheck/upcheck/internal/fetch"
)

// MaxBundle caps a version's attestation bundle, in bytes: npm's hold
// two attestations of a few kilobytes each (a statement, a certificate
// chain, a signature).
const MaxBundle = 1 << 20

// The predicate types of the SLSA provenance statements read
// (ProvenanceRepositoryOf): v1, and v0.2 (what older npm clients and
// GitLab's builds attest).
const (
	PredicateSLSAv1  = "https://slsa.dev/provenance/v1"
	PredicateSLSAv02 = "https://slsa.dev/provenance/v0.2"
)

// ErrBundle is wrapped by every error of an attestation bundle that does
// not read as one.
var ErrBundle = errors.New("not an npm attestation bundle")

// BundleRequest is the fetch of a version's attestation bundle at addr
// (its Dist.Attestations.URL), with the token npm would send there, held
// to MaxBundle; repository, once the request's Consume ran, is the
// repository its SLSA provenance names (ProvenanceRepositoryOf).
type BundleRequest struct {
	Request    fetch.Request
	Repository string
}

// BundleRequest prepares the fetch of the attestation bundle at addr;
// an address that is not http or https is refused.
func (c *Client) BundleRequest(addr string) (*BundleRequest, error) {
	u, err := url.Parse(addr)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: its address %q is not an http or https URL", ErrBundle, addr)
	}
	br := &BundleRequest{}
	br.Request = c.request(u, fetch.Request{Accept: "application/json", MaxBody: MaxBundle, Consume: func(r io.Reader) error {
		var err error
		br.Repository, err = ProvenanceRepositoryOf(r)
		return err
	}})
	return br, nil
}

// ProvenanceRepositoryOf reads an npm attestation bundle
// ({"attestations": [{"predicateType", "bundle": {"dsseEnvelope":
// {"payload", "payloadType"}}}]}) and returns the source repository its
// SLSA provenance statement names, normalized (NormalizeRepository): the
// in-toto statement in the DSSE envelope's payload, its
// predicate.buildDefinition.externalParameters.workflow.repository (SLSA
// v1), else its predicate.invocation.configSource.uri without its
// "@ref" (v0.2). "" when no provenance statement of the bundle names one
// that normalizes. The signatures are not verified here: what is read is
// what the bundle says.
func ProvenanceRepositoryOf(r io.Reader) (string, error) {
	var doc struct {
		Attestations []struct {
			PredicateType string `json:"predicateType"`
			Bundle        struct {
				DSSE *struct {
					Payload     string `json:"payload"`
					PayloadType string `json:"payloadType"`
				} `json:"dsseEnvelope"`
			} `json:"bundle"`
		} `json:"attestations"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return "", fmt.Errorf("%w: %v", ErrBundle, err)
	}
	for _, a := range doc.Attestations {
		if (a.PredicateType != PredicateSLSAv1 && a.PredicateType != PredicateSLSAv02) || a.Bundle.DSSE == nil {
			continue
		}
		payload, err := base64.StdEncoding.DecodeString(a.Bundle.DSSE.Payload)
		if err != nil {
			return "", fmt.Errorf("%w: the provenance's payload: %v", ErrBundle, err)
		}
		if repo := statementRepository(payload); repo != "" {
			return repo, nil
		}
	}
	return "", nil
}

// statementRepository is the repository an in-toto statement's SLSA
// provenance names, normalized; "" when none.
func statementRepository(payload []byte) string {
	var st struct {
		PredicateType string `json:"predicateType"`
		Predicate     struct {
			BuildDefinition struct {
				ExternalParameters struct {
					Workflow struct {
						Repository string `json:"repository"`
					} `json:"workflow"`
				} `json:"externalParameters"`
			} `json:"buildDefinition"`
			Invocation struct {
				ConfigSource struct {
					URI string `json:"uri"`
				} `json:"configSource"`
			} `json:"invocation"`
		} `json:"predicate"`
	}
	if json.Unmarshal(payload, &st) != nil {
		return ""
	}
	switch st.PredicateType {
	case PredicateSLSAv1:
		return NormalizeRepository(st.Predicate.BuildDefinition.ExternalParameters.Workflow.Repository)
	case PredicateSLSAv02:
		return NormalizeRepository(withoutRef(st.Predicate.Invocation.ConfigSource.URI))
	}
	return ""
}

// withoutRef is a v0.2 configSource's uri without the "@REF" its path
// ends with ("git+https://HOST/o/r@refs/heads/main").
func withoutRef(uri string) string {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		return uri
	}
	host, path, _ := strings.Cut(rest, "/")
	if i := strings.IndexByte(path, '@'); i >= 0 {
		path = path[:i]
	}
	return scheme + "://" + host + "/" + path
}

// SameRepository reports whether two repositories, as NormalizeRepository
// makes them, are one: compared without regard to case (the hosts that
// serve repositories take an owner's and a repository's name in any
// case). Either "" is never the same.
func SameRepository(a, b string) bool {
	return a != "" && b != "" && strings.EqualFold(a, b)
}
