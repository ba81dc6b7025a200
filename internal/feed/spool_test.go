package feed

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/upcheck/upcheck/internal/fetch"
)

func newFetcher(t *testing.T, cfg fetch.Config) *fetch.Fetcher {
	t.Helper()
	f := fetch.New(cfg, nil)
	t.Cleanup(f.Close)
	return f
}

func emptyDir(t *testing.T, dir string) {
	t.Helper()
	left, _ := os.ReadDir(dir)
	if len(left) != 0 {
		t.Errorf("files left behind in the spool dir: %v", left)
	}
}

// The archive is spooled to a file with its validators; the next download
// with them is a 304 and leaves no file.
func TestSpoolConditional(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("zipbytes", 100_000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", "Mon, 02 Dec 2024 10:00:00 GMT")
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	f := newFetcher(t, fetch.Config{AllowPrivate: true})
	dir := t.TempDir()

	d, err := Spool(t.Context(), f, fetch.Request{URL: srv.URL + "/npm/all.zip"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(d.Path)
	if string(got) != body || d.Bytes != int64(len(body)) || d.ETag != `"v1"` || d.LastModified == "" || d.NotModified {
		t.Fatalf("download %+v, %d bytes in the file", d, len(got))
	}
	_ = os.Remove(d.Path)

	d, err = Spool(t.Context(), f, fetch.Request{URL: srv.URL + "/npm/all.zip", ETag: d.ETag}, dir)
	if err != nil || !d.NotModified || d.Path != "" || d.ETag != `"v1"` {
		t.Fatalf("conditional: %+v %v", d, err)
	}
	emptyDir(t, dir)
}

// A download over the cap fails with fetch.ErrTooLarge and leaves no file;
// a private address is refused unless allowed.
func TestSpoolCapsAndGuards(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.(http.Flusher).Flush() // no Content-Length: the cap must hold while reading
		for range 100 {
			if _, err := io.WriteString(w, strings.Repeat("x", 10_000)); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	_, err := Spool(t.Context(), newFetcher(t, fetch.Config{AllowPrivate: true}), fetch.Request{URL: srv.URL, MaxBody: 50_000}, dir)
	if !errors.Is(err, fetch.ErrTooLarge) {
		t.Fatalf("over the cap: %v, want fetch.ErrTooLarge", err)
	}
	emptyDir(t, dir)
	before := hits.Load()
	_, err = Spool(t.Context(), newFetcher(t, fetch.Config{}), fetch.Request{URL: srv.URL}, dir)
	if !errors.Is(err, fetch.ErrPrivateAddress) || hits.Load() != before {
		t.Fatalf("guarded: %v (server hits %d → %d)", err, before, hits.Load())
	}
	emptyDir(t, dir)
}

// A slow download is cut off by the caller's cancellation, which the error
// says (fetch.IsCancelled), and leaves no file.
func TestSpoolCancelled(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, strings.Repeat("x", 1000))
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done() // the rest never comes
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancelCause(t.Context())
	go func() {
		<-started
		cancel(errors.New("lease lost"))
	}()
	dir := t.TempDir()
	_, err := Spool(ctx, newFetcher(t, fetch.Config{AllowPrivate: true}), fetch.Request{URL: srv.URL}, dir)
	if !fetch.IsCancelled(ctx, err) || !strings.Contains(err.Error(), "lease lost") {
		t.Fatalf("err = %v, want a cancellation naming its cause", err)
	}
	emptyDir(t, dir)
}

// An attempt cut off mid-body is retried and the file starts again: it
// holds the second attempt's bytes only, not the first's prefix too.
func TestSpoolRetryStartsTheFileAgain(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	full := strings.Repeat("0123456789", 10_000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Content-Length", "100000")
			_, _ = io.WriteString(w, full[:30_000])
			w.(http.Flusher).Flush()
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close() // the connection drops mid-body
			}
			return
		}
		_, _ = io.WriteString(w, full)
	}))
	defer srv.Close()
	dir := t.TempDir()
	d, err := Spool(t.Context(), newFetcher(t, fetch.Config{AllowPrivate: true, RetryDelay: 1}), fetch.Request{URL: srv.URL}, dir)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(d.Path)
	if calls.Load() != 2 || string(got) != full || d.Bytes != int64(len(full)) {
		t.Fatalf("%d calls, file of %d bytes (Bytes %d), want %d", calls.Load(), len(got), d.Bytes, len(full))
	}
}
