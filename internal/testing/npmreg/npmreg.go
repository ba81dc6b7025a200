// Package npmreg is a small npm registry for tests that need a registry
// signing its versions with keys of its own (Verdaccio publishes no keys):
// the registry's protocol, full package documents with ETags (304 on
// If-None-Match), signing keys at /-/npm/v1/keys and a key rotation.
package npmreg

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/npm"
)

// Registry is a small npm registry in the registry's own protocol: full
// package documents with ETags (304 on If-None-Match), and signing keys
// at /-/npm/v1/keys, every version signed over NAME@VERSION:INTEGRITY.
type Registry struct {
	t *testing.T
	// URL is the registry's address (what UPCHECK_NPM_REGISTRY names).
	URL string
	srv *httptest.Server

	mu       sync.Mutex
	key      npm.SigningKey
	packages map[string]*pkg
	requests map[string]int // by path
	noKeys   bool           // the keys are not published (404)
}

// PublishKeys says whether the registry publishes its signing keys (it
// does from the start); its versions stay signed either way, and their
// documents unchanged.
func (r *Registry) PublishKeys(publish bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.noKeys = !publish
}

type pkg struct {
	latest     string
	versions   map[string]Version
	rev        int
	repository any // the document's "repository"; nil: none
	readme     int // the size of the document's readme, bytes
}

type Version struct {
	Deprecated string
	Peers      map[string]string
	Provenance bool
	Tamper     bool // integrity changed after signing
	Published  time.Time
	Publisher  string // _npmUser.name; "": no _npmUser, as Verdaccio serves
}

func New(t *testing.T) *Registry {
	r := &Registry{t: t, packages: map[string]*pkg{}, requests: map[string]int{}}
	r.Rotate()
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.URL = r.srv.URL + "/"
	t.Cleanup(r.srv.Close)
	return r
}

// Rotate replaces the registry's signing key (and so every document).
func (r *Registry) Rotate() {
	k, err := npm.NewSigningKey()
	if err != nil {
		r.t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.key = k
	for _, p := range r.packages {
		p.rev++
	}
}

func (r *Registry) Publish(name, latest string, versions map[string]Version) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.packages[name]
	if p == nil {
		p = &pkg{}
		r.packages[name] = p
	}
	p.latest, p.versions = latest, versions
	p.rev++
}

// SetRepository makes repo (a string or an object, as package.json has
// it) the "repository" of the package name's document, which must be
// published.
func (r *Registry) SetRepository(name string, repo any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.packages[name]
	p.repository = repo
	p.rev++
}

// SetReadme gives the package name's document (which must be published) a
// readme of size bytes: a document of megabytes, as popular packages have,
// sent uncompressed as every document of this registry is.
func (r *Registry) SetReadme(name string, size int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.packages[name]
	p.readme = size
	p.rev++
}

func (r *Registry) Count(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests[path]
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests[req.URL.EscapedPath()]++
	if req.URL.Path == "/-/npm/v1/keys" && r.noKeys {
		http.NotFound(w, req)
		return
	}
	if req.URL.Path == "/-/npm/v1/keys" {
		w.Write(npm.KeysDocument([]npm.Key{r.key.Key}))
		return
	}
	name, _ := url.PathUnescape(strings.TrimPrefix(req.URL.EscapedPath(), "/"))
	p := r.packages[name]
	if p == nil {
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		return
	}
	etag := fmt.Sprintf(`"%s-%d"`, strings.ReplaceAll(name, "/", "_"), p.rev)
	if req.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	times := map[string]string{}
	versions := map[string]any{}
	for v, rv := range p.versions {
		integrity := "sha512-" + base64.StdEncoding.EncodeToString([]byte(name+v))
		sig, err := r.key.Sign(name, v, integrity)
		if err != nil {
			r.t.Error(err)
		}
		if rv.Tamper {
			integrity = "sha512-" + base64.StdEncoding.EncodeToString([]byte("altered"))
		}
		dist := map[string]any{"integrity": integrity, "shasum": "00", "tarball": r.srv.URL + "/" + name + "/-/" + v + ".tgz",
			"signatures": []npm.Signature{sig}}
		if rv.Provenance {
			dist["attestations"] = map[string]any{"url": r.srv.URL + "/att", "provenance": map[string]string{"predicateType": "https://slsa.dev/provenance/v1"}}
		}
		m := map[string]any{"name": name, "version": v, "dist": dist, "readme": strings.Repeat("x", 100)}
		if rv.Deprecated != "" {
			m["deprecated"] = rv.Deprecated
		}
		if rv.Peers != nil {
			m["peerDependencies"] = rv.Peers
		}
		if rv.Publisher != "" {
			m["_npmUser"] = map[string]string{"name": rv.Publisher, "email": rv.Publisher + "@example.test"}
		}
		versions[v] = m
		times[v] = rv.Published.UTC().Format(time.RFC3339Nano)
	}
	doc := map[string]any{"name": name, "dist-tags": map[string]string{"latest": p.latest}, "time": times, "versions": versions}
	if p.repository != nil {
		doc["repository"] = p.repository
	}
	if p.readme > 0 {
		doc["readme"] = strings.Repeat("r", p.readme)
	}
	body, _ := json.Marshal(doc)
	w.Header().Set("ETag", etag)
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// KeyID is the id of the key the registry signs with now.
func (r *Registry) KeyID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.key.Key.KeyID
}
