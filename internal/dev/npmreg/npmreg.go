// Package npmreg is the one fake npm registry, an http.Handler in the
// registry's own protocol: full package documents with ETags (304 on a
// matching If-None-Match), signing keys at /-/npm/v1/keys (published or
// not, rotated on demand), every version signed over
// NAME@VERSION:INTEGRITY, and real tarballs the documents point at, which
// the npm client installs. The demo (internal/dev/demo) serves it below its
// address; tests start it through internal/testing/npmreg; the bench
// (cmd/upcheck-bench) serves its sized documents with it (sized.go). It
// depends on no test package.
package npmreg

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/upcheck/upcheck/internal/npm"
)

// npmTime is how the registry writes a publish time.
const npmTime = "2006-01-02T15:04:05.000Z07:00"

// Version is one published version of a package.
type Version struct {
	Deprecated string
	Peers      map[string]string // peerDependencies
	Provenance bool              // an attestation is announced, its bundle served (Bundle)
	// ProvenanceRepository is the source repository the served bundle's
	// SLSA provenance names; "": the package's repository, as the
	// registry requires of a version published with provenance (none
	// served when the package has none).
	ProvenanceRepository string
	Tamper               bool // the integrity is changed after signing
	Published            time.Time
	Publisher            string // _npmUser.name; "": no _npmUser, as Verdaccio serves
	// TrustedPublisher: _npmUser.trustedPublisher is set (published
	// through trusted publishing; needs a Publisher).
	TrustedPublisher bool
	Dependencies     map[string]string // dependencies
	Optional         map[string]string // optionalDependencies
	Scripts          map[string]string // scripts
	HasInstallScript bool              // hasInstallScript
}

// packed is a version with what is made when it is published: its
// tarball, integrity and shasum, and the registry's signature.
type packed struct {
	Version
	version   string
	tarball   []byte
	integrity string
	shasum    string
	signature npm.Signature
}

type pkg struct {
	name        string
	description string
	latest      string
	versions    []*packed // by publish time, then version text
	repository  any       // the document's "repository"; nil: none
	readme      int       // the size of the document's readme, bytes
}

// Registry is the fake registry. Its zero value is not usable: New makes
// one. Every method is safe for concurrent use with ServeHTTP.
type Registry struct {
	prefix string

	mu       sync.Mutex
	key      npm.SigningKey
	noKeys   bool
	packages map[string]*pkg
	sized    map[string]*Sized
	latency  time.Duration
	requests map[string]int // by escaped path
	// bundlesFail makes every attestation bundle answer 500.
	bundlesFail bool

	// Plain sends every sized document uncompressed whatever the client
	// accepts, as some registries and proxies do; otherwise gzip goes to a
	// client that accepts it.
	Plain atomic.Bool
	// SentBytes counts the sized documents' body bytes sent (as sent:
	// gzipped or not), counted before they are sent: a client may have
	// the body before the handler returns.
	SentBytes atomic.Int64
	// Answered and NotModified count the sized documents' 200 and 304
	// answers.
	Answered, NotModified atomic.Int64
	// DependencyAnswered and DependencyNotModified count the sized
	// dependencies' documents' 200 and 304 answers (Sized.Dependency),
	// which count in nothing above.
	DependencyAnswered, DependencyNotModified atomic.Int64
}

// New makes an empty registry answering below prefix ("/" when empty;
// the demo's is "/npm/"), signing with a fresh key.
func New(prefix string) (*Registry, error) {
	if prefix == "" {
		prefix = "/"
	}
	r := &Registry{prefix: prefix, packages: map[string]*pkg{}, sized: map[string]*Sized{}, requests: map[string]int{}}
	if err := r.Rotate(); err != nil {
		return nil, err
	}
	return r, nil
}

// Rotate replaces the registry's signing key and signs every version
// again (so every document changes).
func (r *Registry) Rotate() error {
	k, err := npm.NewSigningKey()
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.key = k
	for _, p := range r.packages {
		for _, v := range p.versions {
			if err := v.sign(p.name, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// PublishKeys says whether the registry publishes its signing keys (it
// does from the start); its versions stay signed either way, and their
// documents unchanged.
func (r *Registry) PublishKeys(publish bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.noKeys = !publish
}

// SigningKey is the key the registry signs with now (and publishes), to
// sign sized documents with (GenerateSized).
func (r *Registry) SigningKey() npm.SigningKey {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.key
}

// AddSized serves docs as they are (made by GenerateSized with
// SigningKey): gzipped to a client that accepts it unless Plain, with a
// weak ETag and 304 on If-None-Match.
func (r *Registry) AddSized(docs ...*Sized) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range docs {
		r.sized[d.Name] = d
	}
}

// SetLatency makes every answer wait d first, as a distant registry's
// do (the bench's).
func (r *Registry) SetLatency(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.latency = d
}

// KeyID is the id of the key the registry signs with now.
func (r *Registry) KeyID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.key.Key.KeyID
}

// Publish makes versions the package name's versions, latest its
// dist-tags.latest, packing and signing each.
func (r *Registry) Publish(name, latest string, versions map[string]Version) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.packages[name]
	if p == nil {
		p = &pkg{name: name}
		r.packages[name] = p
	}
	p.latest, p.versions = latest, nil
	for _, v := range slices.Sorted(maps.Keys(versions)) {
		pv := &packed{Version: versions[v], version: v}
		p.versions = append(p.versions, pv)
	}
	slices.SortStableFunc(p.versions, func(a, b *packed) int { return a.Published.Compare(b.Published) })
	for _, v := range p.versions {
		if err := v.pack(p); err != nil {
			return err
		}
		if err := v.sign(name, r.key); err != nil {
			return err
		}
	}
	return nil
}

// SetDescription gives the package name (which must be published) a
// description, in its document and in its tarballs' package.json.
func (r *Registry) SetDescription(name, text string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.packages[name]
	p.description = text
	for _, v := range p.versions {
		if err := v.pack(p); err != nil {
			return err
		}
		if err := v.sign(name, r.key); err != nil {
			return err
		}
	}
	return nil
}

// SetRepository makes repo (a string or an object, as package.json has
// it) the "repository" of the package name's document, which must be
// published.
func (r *Registry) SetRepository(name string, repo any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.packages[name].repository = repo
}

// FailBundles makes every attestation bundle answer 500 (fail) or be
// served again.
func (r *Registry) FailBundles(fail bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bundlesFail = fail
}

// SetReadme gives the package name's document (which must be published) a
// readme of size bytes: a document of megabytes, as popular packages have,
// sent uncompressed as every document of this registry is.
func (r *Registry) SetReadme(name string, size int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.packages[name].readme = size
}

// Count is how many requests the registry answered for path (escaped, as
// sent: "/@acme%2fblog").
func (r *Registry) Count(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests[path]
}

// pack makes v's tarball (package/package.json, as npm packs one), its
// integrity and shasum.
func (v *packed) pack(p *pkg) error {
	manifest, err := json.MarshalIndent(map[string]any{
		"name": p.name, "version": v.version, "description": p.description, "peerDependencies": v.Peers,
	}, "", "  ")
	if err != nil {
		return err
	}
	modTime := v.Published
	if modTime.IsZero() {
		modTime = time.Unix(0, 0)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: "package/package.json", Mode: 0o644, Size: int64(len(manifest)), ModTime: modTime}); err != nil {
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
	return nil
}

// sign signs NAME@VERSION:INTEGRITY as the registry does; a tampered
// version's integrity is then changed, so its signature no longer holds.
func (v *packed) sign(name string, key npm.SigningKey) error {
	s512 := sha512.Sum512(v.tarball)
	v.integrity = "sha512-" + base64.StdEncoding.EncodeToString(s512[:])
	sig, err := key.Sign(name, v.version, v.integrity)
	if err != nil {
		return err
	}
	v.signature = sig
	if v.Tamper {
		v.integrity = "sha512-" + base64.StdEncoding.EncodeToString([]byte("altered"))
	}
	return nil
}

// tarballName is the file name npm gives a version's tarball: the name
// without its scope, a dash, the version.
func tarballName(name, version string) string {
	return name[strings.LastIndexByte(name, '/')+1:] + "-" + version + ".tgz"
}

// The package document's parts, in the registry's field names.
type (
	wireDocument struct {
		Name        string                 `json:"name"`
		Description string                 `json:"description"`
		DistTags    map[string]string      `json:"dist-tags"`
		Time        map[string]string      `json:"time"`
		Versions    map[string]wireVersion `json:"versions"`
		Repository  any                    `json:"repository,omitempty"`
		Readme      string                 `json:"readme,omitempty"`
	}
	wireVersion struct {
		Name             string            `json:"name"`
		Version          string            `json:"version"`
		Description      string            `json:"description"`
		Deprecated       string            `json:"deprecated,omitempty"`
		PeerDependencies map[string]string `json:"peerDependencies,omitempty"`
		Dependencies     map[string]string `json:"dependencies,omitempty"`
		Optional         map[string]string `json:"optionalDependencies,omitempty"`
		Scripts          map[string]string `json:"scripts,omitempty"`
		HasInstallScript bool              `json:"hasInstallScript,omitempty"`
		NpmUser          *wireUser         `json:"_npmUser,omitempty"`
		Dist             wireDist          `json:"dist"`
	}
	wireUser struct {
		Name             string         `json:"name"`
		Email            string         `json:"email"`
		TrustedPublisher map[string]any `json:"trustedPublisher,omitempty"`
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
// below the registry at reg (".../").
func (p *pkg) document(reg string) ([]byte, error) {
	doc := wireDocument{Name: p.name, Description: p.description, DistTags: map[string]string{"latest": p.latest},
		Time: map[string]string{}, Versions: map[string]wireVersion{}, Repository: p.repository}
	if len(p.versions) > 0 {
		doc.Time["created"] = p.versions[0].Published.Format(npmTime)
		doc.Time["modified"] = p.versions[len(p.versions)-1].Published.Format(npmTime)
	}
	if p.readme > 0 {
		doc.Readme = strings.Repeat("r", p.readme)
	}
	for _, v := range p.versions {
		doc.Time[v.version] = v.Published.UTC().Format(npmTime)
		w := wireVersion{Name: p.name, Version: v.version, Description: p.description, Deprecated: v.Deprecated, PeerDependencies: v.Peers,
			Dependencies: v.Dependencies, Optional: v.Optional, Scripts: v.Scripts, HasInstallScript: v.HasInstallScript,
			Dist: wireDist{Integrity: v.integrity, Shasum: v.shasum, Tarball: reg + p.name + "/-/" + tarballName(p.name, v.version),
				Signatures: []npm.Signature{v.signature}}}
		if v.Publisher != "" {
			w.NpmUser = &wireUser{Name: v.Publisher, Email: v.Publisher + "@example.test"}
			if v.TrustedPublisher {
				w.NpmUser.TrustedPublisher = map[string]any{"id": "github", "oidcConfigId": "oidc:test"}
			}
		}
		if v.Provenance {
			a := &wireAttestation{URL: reg + attestationsPath + p.name + "@" + v.version}
			a.Provenance.PredicateType = "https://slsa.dev/provenance/v1"
			w.Dist.Attestations = a
		}
		doc.Versions[v.version] = w
	}
	return json.Marshal(doc)
}
