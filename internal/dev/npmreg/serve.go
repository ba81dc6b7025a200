// What the registry answers: package documents, tarballs, keys and the
// bench's sized documents, with ETags and 304s.

package npmreg

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/upcheck/upcheck/internal/npm"
)

// ServeHTTP answers below the registry's prefix: GET NAME (a scoped
// name's slash escaped or not) the package document, -/npm/v1/keys the
// signing keys, NAME/-/FILE.tgz a tarball. Documents and keys carry an
// ETag and answer 304 to a matching If-None-Match.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.requests[req.URL.EscapedPath()]++
	latency := r.latency
	sized := r.sized[strings.TrimPrefix(req.URL.Path, r.prefix)]
	r.mu.Unlock()
	if latency > 0 {
		time.Sleep(latency)
	}
	if sized != nil {
		r.serveSized(w, req, sized)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		registryError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	// The path as decoded: "@demo%2fseo" and "@demo/seo" are one package.
	rest := strings.TrimPrefix(req.URL.Path, r.prefix)
	if rest == npm.KeysPath {
		if r.noKeys {
			registryError(w, http.StatusNotFound, "Not found")
			return
		}
		answerJSON(w, req, npm.KeysDocument([]npm.Key{r.key.Key}))
		return
	}
	if spec, ok := strings.CutPrefix(rest, attestationsPath); ok {
		r.serveBundle(w, spec)
		return
	}
	name, file, isFile := strings.Cut(rest, "/-/")
	p := r.packages[name]
	switch {
	case p == nil:
		registryError(w, http.StatusNotFound, "Not found")
	case isFile:
		for _, v := range p.versions {
			if tarballName(p.name, v.version) == file {
				w.Header().Set("Content-Type", "application/octet-stream")
				w.Write(v.tarball)
				return
			}
		}
		registryError(w, http.StatusNotFound, "Not found")
	default:
		body, err := p.document("http://" + req.Host + r.prefix)
		if err != nil {
			registryError(w, http.StatusInternalServerError, "the registry could not write the document")
			return
		}
		answerJSON(w, req, body)
	}
}

// serveSized sends a sized document as the bench's registry does: no
// lock held, so that hundreds are sent at once.
func (r *Registry) serveSized(w http.ResponseWriter, req *http.Request, d *Sized) {
	etag := fmt.Sprintf(`W/"%s-v1"`, strings.ReplaceAll(d.Name, "/", "-"))
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Vary", "Accept-Encoding, Accept")
	if d.Dependency {
		if req.Header.Get("If-None-Match") == etag {
			r.DependencyNotModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		r.DependencyAnswered.Add(1)
		h.Set("Content-Type", "application/json")
		h.Set("Content-Encoding", "gzip")
		w.Write(d.Gzipped)
		return
	}
	if req.Header.Get("If-None-Match") == etag {
		r.NotModified.Add(1)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	r.Answered.Add(1)
	h.Set("Content-Type", "application/json")
	if !r.Plain.Load() && strings.Contains(req.Header.Get("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", strconv.Itoa(len(d.Gzipped)))
		r.SentBytes.Add(int64(len(d.Gzipped)))
		w.Write(d.Gzipped)
		return
	}
	zr, err := gzip.NewReader(bytes.NewReader(d.Gzipped))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	// No Content-Length: sent chunked, as a proxy that decompresses does.
	r.SentBytes.Add(int64(d.Raw))
	io.Copy(w, zr)
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

// attestationsPath is where the registry serves a version's attestation
// bundle, below its prefix: attestationsPath + NAME@VERSION.
const attestationsPath = "-/npm/v1/attestations/"

// serveBundle answers the attestation bundle of spec (NAME@VERSION), or
// 500 while bundles fail (FailBundles); r.mu is held.
func (r *Registry) serveBundle(w http.ResponseWriter, spec string) {
	if r.bundlesFail {
		registryError(w, http.StatusInternalServerError, "the attestations could not be read")
		return
	}
	at := strings.LastIndexByte(spec, '@')
	if at <= 0 {
		registryError(w, http.StatusNotFound, "Not found")
		return
	}
	if p := r.packages[spec[:at]]; p != nil {
		for _, v := range p.versions {
			if v.version != spec[at+1:] {
				continue
			}
			if body := p.bundle(v); body != nil {
				w.Header().Set("Content-Type", "application/json")
				w.Write(body)
				return
			}
		}
	}
	registryError(w, http.StatusNotFound, "Not found")
}
