package npm_test

import (
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/npm"
)

// A registry that does not answer is left the moment the caller cancels:
// the fetch ends with the cancellation, and no package is read.
func TestAHangingRegistryIsLeftAtCancellation(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	regs, err := npm.LoadRegistries(srv.URL, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	f := fetch.New(fetch.Config{AllowPrivate: true, Timeout: time.Minute}, nil)
	t.Cleanup(f.Close)
	ctx, cancel := context.WithCancelCause(t.Context())
	done := make(chan error, 1)
	go func() {
		got, err := (&npm.Client{Fetcher: f, Registries: regs}).Package(ctx, "@vitnode/blog", "", "")
		if got.Package != nil {
			err = errors.New("a package was read")
		}
		done <- err
	}()
	<-arrived
	lost := errors.New("lease lost")
	cancel(lost)
	if err := <-done; !fetch.IsCancelled(ctx, err) || !errors.Is(err, lost) {
		t.Errorf("after cancellation: %v; want the cancellation's cause", err)
	}
}

// A document that is not the package's own, or not a package document, is
// refused without a retry.
func TestARegistrysWrongDocumentIsRefused(t *testing.T) {
	t.Parallel()
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		if strings.Contains(r.URL.Path, "other") {
			_, _ = w.Write([]byte(`{"name": "someone-else", "versions": {}}`))
			return
		}
		_, _ = w.Write([]byte(`<html>maintenance</html>`))
	}))
	t.Cleanup(srv.Close)
	regs, err := npm.LoadRegistries(srv.URL, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	f := fetch.New(fetch.Config{AllowPrivate: true}, nil)
	t.Cleanup(f.Close)
	c := &npm.Client{Fetcher: f, Registries: regs}
	for _, name := range []npm.Name{"other", "page"} {
		if _, err := c.Package(t.Context(), name, "", ""); !errors.Is(err, npm.ErrDocument) {
			t.Errorf("%s: %v, want ErrDocument", name, err)
		}
	}
	if requests != 2 {
		t.Errorf("%d requests for two refusals: a refusal is not retried", requests)
	}
	if _, err := (&npm.Client{Fetcher: f}).Package(t.Context(), "x", "", ""); !errors.Is(err, npm.ErrNoRegistry) {
		t.Errorf("no registry: %v", err)
	}
}

// A package document is read as the registry compressed it, and the cap
// counts what it decompresses to: a small gzip of a document past the cap
// is refused as too large, never held whole.
func TestACompressedDocumentIsCappedDecompressed(t *testing.T) {
	t.Parallel()
	doc := `{"name": "big", "dist-tags": {"latest": "1.0.0"}, "readme": "` + strings.Repeat("r", 1<<20) + `",
	  "versions": {"1.0.0": {"name": "big", "version": "1.0.0", "dist": {"integrity": "sha512-x"}}}, "time": {"1.0.0": "2026-01-01T00:00:00Z"}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		_, _ = zw.Write([]byte(doc))
		_ = zw.Close()
	}))
	t.Cleanup(srv.Close)
	regs, err := npm.LoadRegistries(srv.URL, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	f := fetch.New(fetch.Config{AllowPrivate: true}, nil)
	t.Cleanup(f.Close)
	got, err := (&npm.Client{Fetcher: f, Registries: regs, MaxDocument: 2 << 20}).Package(t.Context(), "big", "", "")
	if err != nil || got.Package == nil || got.Package.DistTags["latest"] != "1.0.0" || got.Response.Body != nil {
		t.Fatalf("under the cap: %+v, %v", got, err)
	}
	_, err = (&npm.Client{Fetcher: f, Registries: regs, MaxDocument: 512 << 10}).Package(t.Context(), "big", "", "")
	if !errors.Is(err, npm.ErrTooLarge) {
		t.Fatalf("past the cap decompressed: %v, want ErrTooLarge", err)
	}
}

// A registry that redirects to another port of its own host (a mirror, a
// CDN) does not hand that port its token: each gets the token of its own
// .npmrc line, and a path with none gets none.
func TestARedirectGetsItsOwnTokenFromTheNpmrc(t *testing.T) {
	t.Parallel()
	got := make(chan string, 4)
	mirror := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- "mirror " + r.URL.Path + " " + r.Header.Get("Authorization")
		_, _ = w.Write([]byte(`{"name": "` + r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:] + `", "versions": {}}`))
	}))
	t.Cleanup(mirror.Close)
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- "registry " + r.URL.Path + " " + r.Header.Get("Authorization")
		target := r.URL.Path
		if target == "/npm/open" {
			target = "/keyless/open"
		}
		http.Redirect(w, r, mirror.URL+target, http.StatusFound)
	}))
	t.Cleanup(registry.Close)
	npmrc := "registry=" + registry.URL + "/npm/\n" +
		"//" + registry.Listener.Addr().String() + "/npm/:_authToken=registry-token\n" +
		"//" + mirror.Listener.Addr().String() + "/npm/:_authToken=mirror-token\n"
	regs, err := npm.ParseNpmrc(strings.NewReader(npmrc), ".npmrc", nil)
	if err != nil {
		t.Fatal(err)
	}
	f := fetch.New(fetch.Config{AllowPrivate: true}, nil)
	t.Cleanup(f.Close)
	for _, c := range []struct {
		name npm.Name
		want []string
	}{
		{"blog", []string{"registry /npm/blog Bearer registry-token", "mirror /npm/blog Bearer mirror-token"}},
		{"open", []string{"registry /npm/open Bearer registry-token", "mirror /keyless/open "}},
	} {
		if _, err := (&npm.Client{Fetcher: f, Registries: regs}).Package(t.Context(), c.name, "", ""); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, w := range c.want {
			if g := <-got; g != w {
				t.Errorf("%q, want %q", g, w)
			}
		}
	}
}
