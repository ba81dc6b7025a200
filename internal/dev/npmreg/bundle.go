// The attestation bundles the registry serves for versions published
// with provenance.

package npmreg

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/upcheck/upcheck/internal/npm"
)

// bundle is the attestation bundle of p's version v, as the registry
// serves it at the address its document gives: npm's publish attestation
// and a SLSA v1 provenance statement naming the repository the version
// says (Version.ProvenanceRepository) in a DSSE envelope, its signatures
// left empty (upcheck reads, it does not verify them); nil when v has no
// provenance or no repository to name.
func (p *pkg) bundle(v *packed) []byte {
	repo := v.ProvenanceRepository
	if repo == "" {
		switch r := p.repository.(type) {
		case string:
			repo = r
		case map[string]any:
			repo, _ = r["url"].(string)
		case map[string]string:
			repo = r["url"]
		}
	}
	if !v.Provenance || repo == "" {
		return nil
	}
	subject := []map[string]any{{"name": "pkg:npm/" + strings.ReplaceAll(p.name, "@", "%40") + "@" + v.version,
		"digest": map[string]string{"sha512": v.shasum}}}
	statement, _ := json.Marshal(map[string]any{
		"_type": "https://in-toto.io/Statement/v1", "subject": subject, "predicateType": npm.PredicateSLSAv1,
		"predicate": map[string]any{"buildDefinition": map[string]any{
			"buildType":          "https://slsa-framework.github.io/github-actions-buildtypes/workflow/v1",
			"externalParameters": map[string]any{"workflow": map[string]any{"ref": "refs/heads/main", "repository": repo, "path": ".github/workflows/release.yml"}},
		}, "runDetails": map[string]any{"builder": map[string]any{"id": "https://ci.example.test/runner"}}},
	})
	publish, _ := json.Marshal(map[string]any{"_type": "https://in-toto.io/Statement/v1", "subject": subject,
		"predicateType": "https://github.com/npm/attestation/tree/main/specs/publish/v0.1",
		"predicate":     map[string]any{"name": p.name, "version": v.version}})
	envelope := func(payload []byte) map[string]any {
		return map[string]any{"mediaType": "application/vnd.dev.sigstore.bundle+json;version=0.2", "verificationMaterial": map[string]any{},
			"dsseEnvelope": map[string]any{"payload": base64.StdEncoding.EncodeToString(payload),
				"payloadType": "application/vnd.in-toto+json", "signatures": []map[string]string{{"sig": "", "keyid": ""}}}}
	}
	body, _ := json.Marshal(map[string]any{"attestations": []map[string]any{
		{"predicateType": "https://github.com/npm/attestation/tree/main/specs/publish/v0.1", "bundle": envelope(publish)},
		{"predicateType": npm.PredicateSLSAv1, "bundle": envelope(statement)},
	}})
	return body
}
