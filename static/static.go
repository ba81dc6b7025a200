// Package static embeds the AdminCP's CSS, JavaScript and images so the
// binary serves them itself.
//
// Every file has a fingerprinted URL, its content hash in the name:
// Path("css/app.css") is "/static/css/app.1a2b3c4d5e6f.css". A browser may
// keep such a URL forever (Cache-Control: immutable), because new content
// gets a new URL. Handler serves both the fingerprinted and the plain names;
// plain names are revalidated on every use (no-cache plus an ETag).
package static

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
)

// FS holds every static asset.
//
//go:embed css js img robots.txt
var FS embed.FS

// Prefix is the URL path under which Handler serves the files.
const Prefix = "/static/"

// hashLen is how many hex digits of the SHA-256 of a file go in its name:
// 48 bits, plenty to tell versions of one file apart.
const hashLen = 12

const (
	cacheImmutable = "public, max-age=31536000, immutable"
	// cacheRevalidate is for plain names, whose content changes with a
	// deploy: the browser keeps a copy but asks (If-None-Match) each time.
	cacheRevalidate = "no-cache"
)

// contentTypes are set explicitly so a response never depends on the
// machine's MIME tables.
var contentTypes = map[string]string{
	".css":   "text/css; charset=utf-8",
	".js":    "text/javascript; charset=utf-8",
	".svg":   "image/svg+xml",
	".png":   "image/png",
	".ico":   "image/x-icon",
	".txt":   "text/plain; charset=utf-8",
	".woff2": "font/woff2",
	".json":  "application/json",
}

// Path returns the fingerprinted URL of the embedded file name (e.g.
// "css/app.css"). An unknown name gets its plain URL, which answers 404: a
// missing asset shows up in the browser, it does not break the page render.
func Path(name string) string {
	return embedded().path(name)
}

// Handler serves the embedded files: GET and HEAD of Prefix+name, with a
// fingerprinted or a plain name, and of /robots.txt. Mount it on
// "/static/*" and "/robots.txt" with the full request path.
//
// A fingerprinted name whose hash is not the current one (a page rendered
// by an instance running another version, during a rolling deploy) gets the
// current file, revalidated rather than cached forever, instead of a 404
// that would leave the page unstyled.
func Handler() http.Handler {
	return embedded()
}

// embedded is the asset set of FS, hashed once on first use.
var embedded = sync.OnceValue(func() *assets {
	a, err := load(FS)
	if err != nil {
		panic(fmt.Sprintf("static: embedded assets: %v", err)) // cannot happen: embed checked them at build time
	}
	return a
})

// asset is one file and its fingerprint.
type asset struct {
	name        string // "css/app.css"
	hashedName  string // "css/app.1a2b3c4d5e6f.css"
	etag        string
	contentType string
	body        []byte
}

// assets is a hashed set of files; it is the http.Handler.
type assets struct {
	byName   map[string]*asset
	byHashed map[string]*asset
}

// load reads and hashes every file of fsys.
func load(fsys fs.FS) (*assets, error) {
	a := &assets{byName: map[string]*asset{}, byHashed: map[string]*asset{}}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		hash := hex.EncodeToString(sum[:])[:hashLen]
		f := &asset{
			name:        name,
			hashedName:  hashedName(name, hash),
			etag:        `"` + hash + `"`,
			contentType: contentType(name),
			body:        body,
		}
		a.byName[name] = f
		a.byHashed[f.hashedName] = f
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// hashedName puts the hash before the extension: "css/app.<hash>.css".
func hashedName(name, hash string) string {
	ext := path.Ext(name)
	return strings.TrimSuffix(name, ext) + "." + hash + ext
}

// unhashedName undoes hashedName for any hash: "css/app.<hex>.css" is
// "css/app.css"; ok is false when name carries no hash.
func unhashedName(name string) (string, bool) {
	ext := path.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	dot := strings.LastIndexByte(stem, '.')
	if dot < 0 || len(stem)-dot-1 != hashLen {
		return "", false
	}
	for _, c := range stem[dot+1:] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", false
		}
	}
	return stem[:dot] + ext, true
}

func contentType(name string) string {
	ext := strings.ToLower(path.Ext(name))
	if ct, ok := contentTypes[ext]; ok {
		return ct
	}
	if ct := mime.TypeByExtension(ext); ct != "" {
		return ct
	}
	return "application/octet-stream"
}

func (a *assets) path(name string) string {
	name = strings.TrimPrefix(name, "/")
	if f, ok := a.byName[name]; ok {
		return Prefix + f.hashedName
	}
	return Prefix + name
}

// lookup finds the file a request path names and how long it may be cached.
func (a *assets) lookup(urlPath string) (f *asset, cache string, ok bool) {
	if urlPath == "/robots.txt" {
		f, ok = a.byName["robots.txt"]
		return f, cacheRevalidate, ok
	}
	name, found := strings.CutPrefix(urlPath, Prefix)
	if !found || !fs.ValidPath(name) {
		return nil, "", false
	}
	if f, ok := a.byHashed[name]; ok {
		return f, cacheImmutable, true
	}
	if f, ok := a.byName[name]; ok {
		return f, cacheRevalidate, true
	}
	if plain, hashed := unhashedName(name); hashed {
		if f, ok := a.byName[plain]; ok {
			return f, cacheRevalidate, true // another version's hash
		}
	}
	return nil, "", false
}

// ServeHTTP serves one file; see Handler.
func (a *assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	f, cache, ok := a.lookup(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("Cache-Control", cache)
	h.Set("ETag", f.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	// ServeContent answers If-None-Match with 304 and handles Range; the
	// zero time leaves Last-Modified out, the ETag is the validator.
	http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(f.body))
}
