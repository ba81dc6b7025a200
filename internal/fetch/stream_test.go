package fetch

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// A consumed body arrives as a stream (decompressed when the server
// gzips it), is held to the request's own cap after decompression, and the
// request carries Accept and the bearer token, which no log line shows.
func TestConsumeStreamsTheBody(t *testing.T) {
	t.Parallel()
	const size = 8 << 20
	var gotAccept, gotAuth atomic.Value
	srv := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAccept.Store(r.Header.Get("Accept"))
		gotAuth.Store(r.Header.Get("Authorization"))
		w.Header().Set("ETag", `"p1"`)
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			_, _ = zw.Write(bytes.Repeat([]byte("x"), size))
			_ = zw.Close()
			return
		}
		t.Error("the fetcher did not ask for gzip")
	}))
	var log bytes.Buffer
	f := New(Config{AllowPrivate: true}, slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(f.Close)
	var read int64
	resp, err := f.Fetch(t.Context(), Request{URL: srv.URL + "/pkg", Accept: "application/json", Bearer: tokens{"//" + srv.Addr() + "/": "tok-123"}.For, MaxBody: size,
		Consume: func(r io.Reader) error {
			n, err := io.Copy(io.Discard, r)
			read = n
			return err
		}})
	if err != nil {
		t.Fatal(err)
	}
	if read != size || resp.Bytes != size || resp.Body != nil || resp.ETag != `"p1"` {
		t.Errorf("consumed %d, Bytes %d, Body %d bytes, ETag %q", read, resp.Bytes, len(resp.Body), resp.ETag)
	}
	if gotAccept.Load() != "application/json" || gotAuth.Load() != "Bearer tok-123" {
		t.Errorf("Accept %q, Authorization %q", gotAccept.Load(), gotAuth.Load())
	}
	if strings.Contains(log.String(), "tok-123") {
		t.Errorf("the token is in the log:\n%s", log.String())
	}
	// The cap counts decompressed bytes: a small gzip of a large body is refused.
	_, err = f.Fetch(t.Context(), Request{URL: srv.URL + "/pkg", MaxBody: size - 1, Consume: func(r io.Reader) error {
		_, err := io.Copy(io.Discard, r)
		return err
	}})
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("one byte over the request's cap: %v, want ErrTooLarge", err)
	}
}

// A consumer's refusal ends the fetch at once: the body was read, retrying
// would read the same. A body cut off by the network is retried, and the
// consumer starts again from the beginning.
func TestConsumeErrorsAndRetries(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	srv := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := requests.Add(1)
		if r.URL.Path == "/cut" && n == 1 {
			w.Header().Set("Content-Length", "100")
			_, _ = io.WriteString(w, "partial")
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		_, _ = io.WriteString(w, "whole body")
	}))
	f := setup(t, Config{AllowPrivate: true})
	refused := errors.New("not a package document")
	_, err := f.Fetch(t.Context(), Request{URL: srv.URL + "/doc", Consume: func(r io.Reader) error { return refused }})
	if !errors.Is(err, refused) || requests.Load() != 1 {
		t.Errorf("a refusal: %v after %d requests; want it, after 1", err, requests.Load())
	}
	requests.Store(0)
	var bodies []string
	_, err = f.Fetch(t.Context(), Request{URL: srv.URL + "/cut", Consume: func(r io.Reader) error {
		b, err := io.ReadAll(r)
		bodies = append(bodies, string(b))
		return err
	}})
	if err != nil || requests.Load() != 2 || len(bodies) != 2 || bodies[1] != "whole body" {
		t.Errorf("a cut body: %v after %d requests, consumer saw %q", err, requests.Load(), bodies)
	}
}

// A Compressed request asks for gzip and gets the body as it was sent:
// the caller decompresses it, after the host's slot is free. A server that
// does not compress gives the plain body.
func TestCompressedKeepsTheBodyAsSent(t *testing.T) {
	t.Parallel()
	payload := bytes.Repeat([]byte(`{"x":1}`), 4096)
	srv := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/gz" && r.Header.Get("Accept-Encoding") == "gzip" {
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			_, _ = zw.Write(payload)
			_ = zw.Close()
			return
		}
		_, _ = w.Write(payload)
	}))
	f := New(Config{AllowPrivate: true}, slog.Default())
	t.Cleanup(f.Close)
	resp, err := f.Fetch(t.Context(), Request{URL: srv.URL + "/gz", Compressed: true})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Gzip || int(resp.Bytes) != len(resp.Body) || len(resp.Body) >= len(payload) {
		t.Fatalf("gzip %v, %d bytes read, body %d bytes (plain %d)", resp.Gzip, resp.Bytes, len(resp.Body), len(payload))
	}
	zr, err := gzip.NewReader(bytes.NewReader(resp.Body))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("decompressed %d bytes, %v", len(got), err)
	}
	plain, err := f.Fetch(t.Context(), Request{URL: srv.URL + "/plain", Compressed: true})
	if err != nil || plain.Gzip || !bytes.Equal(plain.Body, payload) {
		t.Fatalf("a plain answer: gzip %v, %d bytes, %v", plain.Gzip, len(plain.Body), err)
	}
}

// A Compressed request whose body comes uncompressed anyway (a registry
// or proxy that ignores Accept-Encoding) and larger than SpoolAbove is
// written to a temporary file as it arrives, never held in memory whole:
// the fetch allocates a fraction of the body, the file has no name on
// disk from the start, and Close releases it. A body cut off is retried
// into a new file; one past the cap leaves nothing behind; where no
// temporary file can be made, the body is held in memory as before. Not
// parallel: the runtime's count of allocations is the whole process's,
// and TMPDIR is set for the test.
func TestCompressedSpoolsALargePlainBody(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	const size = 16 << 20
	payload := bytes.Repeat([]byte(`{"x":"0123456789"},`), size/19+1)[:size]
	var cuts atomic.Int32
	srv := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "gzip" {
			t.Error("the fetcher did not ask for gzip")
		}
		if r.URL.Path == "/cut" && cuts.Add(1) == 1 {
			w.Header().Set("Content-Length", strconv.Itoa(size))
			_, _ = w.Write(payload[:size/2])
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		_, _ = w.Write(payload) // chunked: no Content-Length
	}))
	f := setup(t, Config{AllowPrivate: true})
	left := func() []os.DirEntry {
		entries, _ := os.ReadDir(tmp)
		return entries
	}

	var resp Response
	var err error
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	resp, err = f.Fetch(t.Context(), Request{URL: srv.URL + "/doc", Compressed: true, MaxBody: size})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > size/4 {
		t.Errorf("fetching %d MiB allocated %.1f MiB; want under a quarter of it", size>>20, float64(n)/(1<<20))
	}
	if resp.Body != nil || resp.Spool == nil || resp.Gzip || resp.Bytes != size {
		t.Fatalf("body %d bytes, spool %v, gzip %v, %d bytes read", len(resp.Body), resp.Spool != nil, resp.Gzip, resp.Bytes)
	}
	if l := left(); len(l) > 0 {
		t.Errorf("the spooled file has a name on disk: %v", l)
	}
	if got, err := io.ReadAll(resp.Reader()); err != nil || !bytes.Equal(got, payload) {
		t.Errorf("the spooled body: %d bytes, %v", len(got), err)
	}
	resp.Close()
	resp.Close() // twice is harmless

	resp, err = f.Fetch(t.Context(), Request{URL: srv.URL + "/cut", Compressed: true, MaxBody: size})
	if err != nil || cuts.Load() != 2 || resp.Spool == nil {
		t.Fatalf("a cut body, retried: %v after %d requests, spool %v", err, cuts.Load(), resp.Spool != nil)
	}
	if got, _ := io.ReadAll(resp.Reader()); !bytes.Equal(got, payload) {
		t.Errorf("the retried body: %d bytes, want the whole body", len(got))
	}
	resp.Close()

	resp, err = f.Fetch(t.Context(), Request{URL: srv.URL + "/doc", Compressed: true, MaxBody: size / 2})
	if !errors.Is(err, ErrTooLarge) || resp.Spool != nil || resp.Body != nil {
		t.Errorf("past the cap: %v, spool %v, body %d bytes", err, resp.Spool != nil, len(resp.Body))
	}
	if l := left(); len(l) > 0 {
		t.Errorf("files left in TMPDIR: %v", l)
	}

	t.Setenv("TMPDIR", filepath.Join(tmp, "missing"))
	resp, err = f.Fetch(t.Context(), Request{URL: srv.URL + "/doc", Compressed: true, MaxBody: size})
	if err != nil || resp.Spool != nil || !bytes.Equal(resp.Body, payload) {
		t.Errorf("without a temporary directory: %v, spool %v, body %d bytes", err, resp.Spool != nil, len(resp.Body))
	}
}
