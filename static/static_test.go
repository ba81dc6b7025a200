package static

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

var hashedCSS = regexp.MustCompile(`^/static/css/app\.[0-9a-f]{12}\.css$`)

func TestFingerprintFollowsContent(t *testing.T) {
	t.Parallel()
	build := func(css string) *assets {
		t.Helper()
		a, err := load(fstest.MapFS{
			"css/app.css": {Data: []byte(css)},
			"js/app.js":   {Data: []byte("console.log(1)")},
		})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	v1, v1again, v2 := build("body{color:red}"), build("body{color:red}"), build("body{color:blue}")

	p1 := v1.path("css/app.css")
	if !hashedCSS.MatchString(p1) {
		t.Fatalf("path %q is not fingerprinted", p1)
	}
	if p := v1again.path("css/app.css"); p != p1 {
		t.Errorf("same content, different URLs: %q and %q", p1, p)
	}
	if p := v2.path("css/app.css"); p == p1 {
		t.Errorf("changed content kept the URL %q", p)
	}
	if v1.path("js/app.js") != v2.path("js/app.js") {
		t.Error("an unchanged file's URL changed with another file's content")
	}
	if p := v1.path("/css/app.css"); p != p1 {
		t.Errorf("a leading slash changes the URL: %q", p)
	}
}

func TestPath(t *testing.T) {
	t.Parallel()
	if p := Path("css/app.css"); !hashedCSS.MatchString(p) {
		t.Errorf("Path(css/app.css) = %q", p)
	}
	if p := Path("js/app.js"); !regexp.MustCompile(`^/static/js/app\.[0-9a-f]{12}\.js$`).MatchString(p) {
		t.Errorf("Path(js/app.js) = %q", p)
	}
	if p := Path("css/missing.css"); p != "/static/css/missing.css" {
		t.Errorf("unknown file: %q, want its plain URL", p)
	}
}

func TestEmbedded(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"css/app.css", "js/app.js", "img/favicon.svg", "robots.txt"} {
		if _, err := fs.Stat(FS, name); err != nil {
			t.Errorf("%s not embedded: %v", name, err)
		}
	}
	if _, err := fs.Stat(FS, "static.go"); err == nil {
		t.Error("source code is embedded")
	}
}

func TestHandler(t *testing.T) {
	t.Parallel()
	h := Handler()
	read := func(name string) string {
		b, err := fs.ReadFile(FS, name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		name, method, path string
		status             int
		contentType, cache string
		body               string
	}{
		{"fingerprinted css", "GET", Path("css/app.css"), 200, "text/css; charset=utf-8", cacheImmutable, read("css/app.css")},
		{"fingerprinted js", "GET", Path("js/app.js"), 200, "text/javascript; charset=utf-8", cacheImmutable, read("js/app.js")},
		{"fingerprinted svg", "GET", Path("img/favicon.svg"), 200, "image/svg+xml", cacheImmutable, read("img/favicon.svg")},
		{"plain name revalidates", "GET", "/static/css/app.css", 200, "text/css; charset=utf-8", "no-cache", read("css/app.css")},
		{"another version's hash", "GET", "/static/css/app.0123456789ab.css", 200, "text/css; charset=utf-8", "no-cache", read("css/app.css")},
		{"robots.txt", "GET", "/robots.txt", 200, "text/plain; charset=utf-8", "no-cache", read("robots.txt")},
		{"head", "HEAD", Path("css/app.css"), 200, "text/css; charset=utf-8", cacheImmutable, ""},
		{"unknown name", "GET", "/static/css/nope.css", 404, "", "", ""},
		{"unknown hashed name", "GET", "/static/css/nope.0123456789ab.css", 404, "", "", ""},
		{"directory", "GET", "/static/css", 404, "", "", ""},
		{"directory slash", "GET", "/static/css/", 404, "", "", ""},
		{"escape", "GET", "/static/../static.go", 404, "", "", ""},
		{"source", "GET", "/static/static.go", 404, "", "", ""},
		{"outside prefix", "GET", "/css/app.css", 404, "", "", ""},
		{"post", "POST", Path("css/app.css"), 405, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			res := rec.Result()
			if res.StatusCode != tc.status {
				t.Fatalf("%s %s: status %d, want %d", tc.method, tc.path, res.StatusCode, tc.status)
			}
			if tc.status != 200 {
				return
			}
			if got := res.Header.Get("Content-Type"); got != tc.contentType {
				t.Errorf("Content-Type %q, want %q", got, tc.contentType)
			}
			if got := res.Header.Get("Cache-Control"); got != tc.cache {
				t.Errorf("Cache-Control %q, want %q", got, tc.cache)
			}
			if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q", got)
			}
			if got := rec.Body.String(); got != tc.body {
				t.Errorf("body: %d bytes, want %d", len(got), len(tc.body))
			}
		})
	}
}

func TestHandlerRevalidation(t *testing.T) {
	t.Parallel()
	h := Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/static/js/app.js", nil))
	etag := rec.Header().Get("ETag")
	hash := strings.TrimSuffix(strings.TrimPrefix(Path("js/app.js"), "/static/js/app."), ".js")
	if etag != `"`+hash+`"` {
		t.Fatalf("ETag %q, want the fingerprint %q", etag, hash)
	}
	req := httptest.NewRequest("GET", "/static/js/app.js", nil)
	req.Header.Set("If-None-Match", etag)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Errorf("If-None-Match: status %d with %d bytes, want 304 and none", rec.Code, rec.Body.Len())
	}
}

func TestUnhashedName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"css/app.0123456789ab.css": "css/app.css",
		"robots.0123456789ab.txt":  "robots.txt",
		"css/app.0123456789AB.css": "", // upper case is never produced
		"css/app.0123456789a.css":  "",
		"css/app.css":              "",
		"app.0123456789ab":         "",
	} {
		got, ok := unhashedName(in)
		if ok != (want != "") || got != want {
			t.Errorf("unhashedName(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}
