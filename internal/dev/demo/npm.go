package demo

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/npm"
)

// RegistryPath is where the demo answers as an npm registry, below its
// address: the registry's URL is the demo's base + RegistryPath.
const RegistryPath = "/npm/"

// Scope is the demo packages' npm scope.
const Scope = "@demo"

// CorePackage is the demo core's npm package: plugins' peerDependencies on
// it give the core they require.
const CorePackage = Scope + "/core"

// npmTime is how the registry writes a publish time.
const npmTime = "2006-01-02T15:04:05.000Z07:00"

// demoVersion is one published version of a demo package.
type demoVersion struct {
	version    string
	published  time.Time
	deprecated string
	peers      map[string]string
	provenance bool
	// Made at start: the tarball, its integrity and shasum, and the
	// registry's signature of NAME@VERSION:INTEGRITY.
	tarball   []byte
	integrity string
	shasum    string
	signature npm.Signature
}

// demoPackage is a demo package; its last version is dist-tags.latest.
type demoPackage struct {
	name        string
	description string
	versions    []demoVersion // oldest first
}

// registry answers as an npm registry for the demo packages, in the
// registry's protocol: full package documents with ETags, the signing
// keys, and the tarballs the documents point at. Its key is made at start:
// the demo keeps no secret.
type registry struct {
	keys     []byte // the keys document
	packages map[string]*demoPackage
}

// newRegistry makes the demo packages, with released as the newest
// releases' publish time, and signs every version with a fresh key.
func newRegistry(released time.Time) (*registry, error) {
	key, err := npm.NewSigningKey()
	if err != nil {
		return nil, err
	}
	keys := npm.KeysDocument([]npm.Key{key.Key})
	day := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t }
	released = released.UTC().Truncate(time.Second)
	r := &registry{keys: keys, packages: map[string]*demoPackage{}}
	for _, p := range []*demoPackage{
		{name: CorePackage, description: "The demo site's core", versions: []demoVersion{
			{version: "1.9.0", published: day("2026-09-01T10:00:00Z"), provenance: true},
			{version: "1.10.0", published: released, provenance: true},
		}},
		{name: Scope + "/seo", description: "Search engine tags for every page", versions: []demoVersion{
			{version: "2.0.0", published: day("2026-06-10T09:00:00Z"),
				deprecated: "2.0.0 sends unpublished drafts to search engines: upgrade to 2.0.1"},
			{version: "2.0.1", published: day("2026-06-12T09:00:00Z")},
		}},
		{name: Scope + "/search", description: "Full-text search", versions: []demoVersion{
			{version: "3.0.0", published: day("2026-08-01T12:00:00Z"), peers: map[string]string{CorePackage: "^1.8.0"}},
			{version: "3.1.0", published: released, peers: map[string]string{CorePackage: ">=2.0.0"}},
		}},
		{name: Scope + "/comments", description: "Comments under articles", versions: []demoVersion{
			{version: "1.2.0", published: day("2026-07-20T08:00:00Z"), provenance: true},
			{version: "1.3.0", published: released},
		}},
		{name: Scope + "/analytics", description: "Privacy-friendly visitor counts", versions: []demoVersion{
			{version: "0.4.0", published: day("2026-05-05T15:00:00Z"), provenance: true},
			{version: "0.5.0", published: released, provenance: true},
		}},
	} {
		for i := range p.versions {
			if err := p.versions[i].pack(p, key); err != nil {
				return nil, err
			}
		}
		r.packages[p.name] = p
	}
	return r, nil
}

// pack makes v's tarball (package/package.json, as npm packs one), its
// integrity and shasum, and signs NAME@VERSION:INTEGRITY as the registry
// does.
func (v *demoVersion) pack(p *demoPackage, key npm.SigningKey) error {
	manifest, err := json.MarshalIndent(map[string]any{
		"name": p.name, "version": v.version, "description": p.description, "peerDependencies": v.peers,
	}, "", "  ")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: "package/package.json", Mode: 0o644, Size: int64(len(manifest)), ModTime: v.published}); err != nil {
		return err
	}
	if _, err := tw.Write(manifest); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	v.tarball = buf.Bytes()
	s512 := sha512.Sum512(v.tarball)
	v.integrity = "sha512-" + base64.StdEncoding.EncodeToString(s512[:])
	s1 := sha1.Sum(v.tarball)
	v.shasum = hex.EncodeToString(s1[:])
	v.signature, err = key.Sign(p.name, v.version, v.integrity)
	return err
}

// tarballName is the file name npm gives a version's tarball: the name
// without its scope, a dash, the version.
func tarballName(p *demoPackage, v demoVersion) string {
	_, bare, _ := strings.Cut(p.name, "/")
	return bare + "-" + v.version + ".tgz"
}

// The package document's parts, in the registry's field names.
type (
	wireDocument struct {
		Name        string                 `json:"name"`
		Description string                 `json:"description"`
		DistTags    map[string]string      `json:"dist-tags"`
		Time        map[string]string      `json:"time"`
		Versions    map[string]wireVersion `json:"versions"`
	}
	wireVersion struct {
		Name             string            `json:"name"`
		Version          string            `json:"version"`
		Description      string            `json:"description"`
		Deprecated       string            `json:"deprecated,omitempty"`
		PeerDependencies map[string]string `json:"peerDependencies,omitempty"`
		Dist             wireDist          `json:"dist"`
	}
	wireDist struct {
		Integrity    string           `json:"integrity"`
		Shasum       string           `json:"shasum"`
		Tarball      string           `json:"tarball"`
		Signatures   []npm.Signature  `json:"signatures"`
		Attestations *wireAttestation `json:"attestations,omitempty"`
	}
	wireAttestation struct {
		URL        string `json:"url"`
		Provenance struct {
			PredicateType string `json:"predicateType"`
		} `json:"provenance"`
	}
)

// document is p's full package document, its tarballs and attestations
// below the registry at reg (".../npm/").
func (p *demoPackage) document(reg string) ([]byte, error) {
	latest := p.versions[len(p.versions)-1]
	doc := wireDocument{Name: p.name, Description: p.description, DistTags: map[string]string{"latest": latest.version},
		Time:     map[string]string{"created": p.versions[0].published.Format(npmTime), "modified": latest.published.Format(npmTime)},
		Versions: map[string]wireVersion{}}
	for _, v := range p.versions {
		doc.Time[v.version] = v.published.Format(npmTime)
		w := wireVersion{Name: p.name, Version: v.version, Description: p.description, Deprecated: v.deprecated, PeerDependencies: v.peers,
			Dist: wireDist{Integrity: v.integrity, Shasum: v.shasum, Tarball: reg + p.name + "/-/" + tarballName(p, v),
				Signatures: []npm.Signature{v.signature}}}
		if v.provenance {
			a := &wireAttestation{URL: reg + "-/npm/v1/attestations/" + p.name + "@" + v.version}
			a.Provenance.PredicateType = "https://slsa.dev/provenance/v1"
			w.Dist.Attestations = a
		}
		doc.Versions[v.version] = w
	}
	return json.Marshal(doc)
}

// ServeHTTP answers below RegistryPath: GET /npm/@demo%2fNAME (or
// /npm/@demo/NAME) the package document, /npm/-/npm/v1/keys the signing
// keys, /npm/@demo/NAME/-/FILE.tgz a tarball. Documents and keys carry an
// ETag and answer 304 to a matching If-None-Match.
func (r *registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		registryError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	// The path as decoded: "@demo%2fseo" and "@demo/seo" are one package.
	rest := strings.TrimPrefix(req.URL.Path, RegistryPath)
	if rest == npm.KeysPath {
		answerJSON(w, req, r.keys)
		return
	}
	name, file, isFile := strings.Cut(rest, "/-/")
	p := r.packages[name]
	switch {
	case p == nil:
		registryError(w, http.StatusNotFound, "Not found")
	case isFile:
		for _, v := range p.versions {
			if tarballName(p, v) == file {
				w.Header().Set("Content-Type", "application/octet-stream")
				w.Write(v.tarball)
				return
			}
		}
		registryError(w, http.StatusNotFound, "Not found")
	default:
		body, err := p.document("http://" + req.Host + RegistryPath)
		if err != nil {
			registryError(w, http.StatusInternalServerError, "the demo could not write the document")
			return
		}
		answerJSON(w, req, body)
	}
}

// answerJSON sends body with its ETag, or 304 when If-None-Match names it.
func answerJSON(w http.ResponseWriter, req *http.Request, body []byte) {
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	w.Header().Set("ETag", etag)
	if matches(req.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// matches reports whether an If-None-Match list names etag (weakly, as
// RFC 9110 compares for If-None-Match).
func matches(header, etag string) bool {
	for tag := range strings.SplitSeq(header, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == "*" || tag == etag {
			return true
		}
	}
	return false
}

// registryError answers as the registry does: {"error": "..."}.
func registryError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, "{\"error\":%q}\n", msg)
}
