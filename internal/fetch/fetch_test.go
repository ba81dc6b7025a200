package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestFetchBody(t *testing.T) {
	t.Parallel()
	var gotUA atomic.Value
	srv := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUA.Store(r.Header.Get("User-Agent"))
		if r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != "" {
			t.Errorf("unexpected conditional headers %v", r.Header)
		}
		w.Header().Set("ETag", `"v2"`)
		w.Header().Set("Last-Modified", "Tue, 01 Dec 2026 10:00:00 GMT")
		w.Header().Set("Upcheck-Signature", "c2lnbmF0dXJl")
		fmt.Fprint(w, `{"format":1}`)
	}))
	f := setup(t, Config{AllowPrivate: true, UserAgent: "upcheck/1.2.3"})

	resp, err := f.Fetch(t.Context(), Request{URL: srv.URL + "/doc.json"})
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	want := Response{
		Body:         []byte(`{"format":1}`),
		ETag:         `"v2"`,
		LastModified: "Tue, 01 Dec 2026 10:00:00 GMT",
		Signature:    "c2lnbmF0dXJl",
		StatusCode:   200,
		Bytes:        12,
	}
	if string(resp.Body) != string(want.Body) || resp.ETag != want.ETag || resp.LastModified != want.LastModified ||
		resp.Signature != want.Signature || resp.StatusCode != want.StatusCode || resp.Bytes != want.Bytes || resp.NotModified {
		t.Errorf("resp = %+v (body %q), want %+v", resp, resp.Body, want)
	}
	if ua := gotUA.Load(); ua != "upcheck/1.2.3" {
		t.Errorf("User-Agent = %q, want upcheck/1.2.3", ua)
	}
}

func TestFetchConditional(t *testing.T) {
	t.Parallel()
	const etag, lastMod = `"v1"`, "Mon, 30 Nov 2026 08:00:00 GMT"
	var hits atomic.Int64
	srv := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("If-None-Match") == etag && r.Header.Get("If-Modified-Since") == lastMod {
			w.WriteHeader(http.StatusNotModified) // no validators repeated
			return
		}
		w.Header().Set("ETag", `"v2"`)
		fmt.Fprint(w, "changed")
	}))
	f := setup(t, Config{AllowPrivate: true})

	resp, err := f.Fetch(t.Context(), Request{URL: srv.URL, ETag: etag, LastModified: lastMod})
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if !resp.NotModified || resp.Body != nil || resp.StatusCode != http.StatusNotModified {
		t.Errorf("resp = %+v, want NotModified without body", resp)
	}
	// The stored validators carry over when the 304 omits them.
	if resp.ETag != etag || resp.LastModified != lastMod {
		t.Errorf("validators = %q, %q; want the request's", resp.ETag, resp.LastModified)
	}

	resp, err = f.Fetch(t.Context(), Request{URL: srv.URL, ETag: `"stale"`})
	if err != nil || resp.NotModified || string(resp.Body) != "changed" || resp.ETag != `"v2"` {
		t.Errorf("changed document: resp = %+v, err = %v", resp, err)
	}
	if hits.Load() != 2 {
		t.Errorf("hits = %d, want 2", hits.Load())
	}
}

// A server streaming without Content-Length is cut off at the cap while
// reading, not after downloading everything.
func TestFetchBodyCapStreaming(t *testing.T) {
	t.Parallel()
	const maxBody = 64 << 10
	const offered = 256 << 20 // far more than socket buffers can absorb
	var written atomic.Int64
	handlerDone := make(chan struct{})
	srv := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(handlerDone)
		chunk := []byte(strings.Repeat("x", 32<<10))
		rc := http.NewResponseController(w)
		for written.Load() < offered {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil || rc.Flush() != nil {
				return // the client hung up, as it should
			}
		}
	}))
	f := setup(t, Config{AllowPrivate: true, MaxBody: maxBody})

	resp, err := f.Fetch(t.Context(), Request{URL: srv.URL})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if resp.Bytes != maxBody+1 || resp.Body != nil {
		t.Errorf("read %d bytes (body len %d), want exactly %d and no body", resp.Bytes, len(resp.Body), maxBody+1)
	}
	select {
	case <-handlerDone:
	case <-time.After(5 * time.Second):
		t.Fatal("server still streaming: the client did not hang up")
	}
	// Whatever the server got out fit in kernel buffers; it was stopped long
	// before offering everything.
	if w := written.Load(); w >= offered {
		t.Errorf("server wrote %d bytes, the whole offer: the body was drained", w)
	}
}

func TestFetchBodyCapContentLength(t *testing.T) {
	t.Parallel()
	const maxBody = 1000
	var hits atomic.Int64
	srv := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Length", strconv.Itoa(n))
		fmt.Fprint(w, strings.Repeat("y", n))
	}))
	f := setup(t, Config{AllowPrivate: true, MaxBody: maxBody})

	resp, err := f.Fetch(t.Context(), Request{URL: srv.URL + "?n=1001"})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if resp.Bytes != 0 {
		t.Errorf("read %d bytes, want 0: an announced oversize body is refused before reading", resp.Bytes)
	}
	resp, err = f.Fetch(t.Context(), Request{URL: srv.URL + "?n=1000"})
	if err != nil || len(resp.Body) != maxBody {
		t.Errorf("body at the cap: len %d, err %v; want %d, nil", len(resp.Body), err, maxBody)
	}
	if hits.Load() != 2 {
		t.Errorf("hits = %d, want 2 (too large is not retried)", hits.Load())
	}
}

func TestFetchRedirectLimit(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	// /r/N redirects to /r/N-1; /r/0 answers.
	srv := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/r/"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if n == 0 {
			fmt.Fprint(w, "end")
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/r/%d", n-1), http.StatusFound)
	}))
	f := setup(t, Config{AllowPrivate: true, MaxRedirects: 3})

	resp, err := f.Fetch(t.Context(), Request{URL: srv.URL + "/r/3"})
	if err != nil || string(resp.Body) != "end" {
		t.Fatalf("3 redirects: body %q, err %v; want \"end\", nil", resp.Body, err)
	}
	hits.Store(0)
	_, err = f.Fetch(t.Context(), Request{URL: srv.URL + "/r/4"})
	if !errors.Is(err, ErrTooManyRedirects) {
		t.Fatalf("4 redirects: err = %v, want ErrTooManyRedirects", err)
	}
	if !strings.Contains(err.Error(), "3") {
		t.Errorf("error %q does not name the limit", err)
	}
	// /r/4 … /r/1 were requested; /r/0 was not, and nothing was retried.
	if hits.Load() != 4 {
		t.Errorf("hits = %d, want 4", hits.Load())
	}

	none := setup(t, Config{AllowPrivate: true, MaxRedirects: -1})
	if _, err := none.Fetch(t.Context(), Request{URL: srv.URL + "/r/1"}); !errors.Is(err, ErrTooManyRedirects) {
		t.Errorf("MaxRedirects -1: err = %v, want ErrTooManyRedirects", err)
	}
}

func TestFetchRetryByStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status   int
		wantHits int64
	}{
		{http.StatusServiceUnavailable, 2},
		{http.StatusInternalServerError, 2},
		{http.StatusBadGateway, 2},
		{http.StatusTooManyRequests, 2},
		{http.StatusNotFound, 1},
		{http.StatusForbidden, 1},
		{http.StatusGone, 1},
		{http.StatusBadRequest, 1},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			t.Parallel()
			var hits atomic.Int64
			srv := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				w.WriteHeader(tt.status)
			}))
			f := setup(t, Config{AllowPrivate: true})

			resp, err := f.Fetch(t.Context(), Request{URL: srv.URL})
			se, ok := errors.AsType[*StatusError](err)
			if !ok || se.Code != tt.status || !errors.Is(err, ErrStatus) {
				t.Fatalf("err = %v, want *StatusError{%d} wrapping ErrStatus", err, tt.status)
			}
			if resp.StatusCode != tt.status {
				t.Errorf("resp.StatusCode = %d, want %d", resp.StatusCode, tt.status)
			}
			if hits.Load() != tt.wantHits {
				t.Errorf("hits = %d, want %d", hits.Load(), tt.wantHits)
			}
		})
	}
}

// 503 with Retry-After: the retry waits for Retry-After (capped), not for
// RetryDelay, and happens exactly once.
func TestFetchRetryAfter(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "recovered")
	}))
	const capDelay = 300 * time.Millisecond
	f := setup(t, Config{AllowPrivate: true, RetryDelay: time.Minute, MaxRetryAfter: capDelay})

	start := time.Now()
	resp, err := f.Fetch(t.Context(), Request{URL: srv.URL})
	elapsed := time.Since(start)
	if err != nil || string(resp.Body) != "recovered" {
		t.Fatalf("body %q, err %v; want \"recovered\", nil", resp.Body, err)
	}
	if hits.Load() != 2 {
		t.Errorf("hits = %d, want 2", hits.Load())
	}
	if elapsed < capDelay || elapsed > 5*time.Second {
		t.Errorf("took %s; want Retry-After capped at %s (not RetryDelay)", elapsed, capDelay)
	}
}

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	f := New(Config{RetryDelay: 2 * time.Second, MaxRetryAfter: 10 * time.Second}, nil)
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		header string
		want   time.Duration
	}{
		{"", 2 * time.Second},
		{"0", 0},
		{"3", 3 * time.Second},
		{" 7 ", 7 * time.Second},
		{"3600", 10 * time.Second},
		{"99999999999999999", 10 * time.Second},
		{"-5", 2 * time.Second},
		{"soon", 2 * time.Second},
		{now.Add(4 * time.Second).Format(http.TimeFormat), 4 * time.Second},
		{now.Add(time.Hour).Format(http.TimeFormat), 10 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
	}
	for _, tt := range tests {
		if got := f.retryDelay(tt.header, now); got != tt.want {
			t.Errorf("retryDelay(%q) = %s, want %s", tt.header, got, tt.want)
		}
	}
}

// hang blocks a handler until the client goes away, so the server's Close
// does not wait on it.
func hang(hits *atomic.Int64, arrived chan<- struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if arrived != nil {
			select {
			case arrived <- struct{}{}:
			default:
			}
		}
		<-r.Context().Done()
	})
}

func TestFetchTimeout(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := serve(t, "127.0.0.1", hang(&hits, nil))
	f := setup(t, Config{AllowPrivate: true, Timeout: 250 * time.Millisecond})
	// A backstop, so a broken per-request timeout fails the test instead of
	// hanging it; it must not be what ends the fetch.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()

	start := time.Now()
	_, err := f.Fetch(ctx, Request{URL: srv.URL})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("took %s; the per-request timeout did not fire", elapsed)
	}
	if IsCancelled(ctx, err) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a publisher timeout must not look like the caller's cancellation: %v", err)
	}
	if hits.Load() != 2 {
		t.Errorf("hits = %d, want 2 (a timeout is transient)", hits.Load())
	}
}

// The timeout covers the body: a server that sends headers and then
// trickles is cut off too.
func TestFetchTimeoutWhileReadingBody(t *testing.T) {
	t.Parallel()
	srv := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "{")
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
	}))
	f := setup(t, Config{AllowPrivate: true, Timeout: 250 * time.Millisecond})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second) // backstop, as above
	defer cancel()

	if _, err := f.Fetch(ctx, Request{URL: srv.URL}); !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

var errLeaseLost = errors.New("lease lost")

func TestFetchCancelled(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	arrived := make(chan struct{}, 1)
	srv := serve(t, "127.0.0.1", hang(&hits, arrived))
	f := setup(t, Config{AllowPrivate: true})

	ctx, cancel := context.WithCancelCause(t.Context())
	go func() {
		select {
		case <-arrived:
			cancel(errLeaseLost)
		case <-ctx.Done(): // the fetch failed early; the test reports it
		}
	}()
	start := time.Now()
	_, err := f.Fetch(ctx, Request{URL: srv.URL})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errLeaseLost) {
		t.Fatalf("err = %v, want one wrapping context.Canceled and the cause", err)
	}
	if !IsCancelled(ctx, err) {
		t.Error("IsCancelled = false, want true")
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("took %s to notice the cancellation", elapsed)
	}
	if hits.Load() != 1 {
		t.Errorf("hits = %d, want 1 (no retry after cancellation)", hits.Load())
	}
}

// Cancelling during the wait before the retry ends the wait.
func TestFetchRetryWaitCancelled(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	f := setup(t, Config{AllowPrivate: true, MaxRetryAfter: time.Minute})

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := f.Fetch(ctx, Request{URL: srv.URL})
	if !IsCancelled(ctx, err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the caller's deadline", err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("took %s; the retry wait ignored the context", elapsed)
	}
	if hits.Load() != 1 {
		t.Errorf("hits = %d, want 1", hits.Load())
	}
}

func TestFetchSignature(t *testing.T) {
	t.Parallel()
	var gotPath, gotQuery atomic.Value
	srv := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath.Store(r.URL.Path)
		gotQuery.Store(r.URL.RawQuery)
		switch r.URL.Path {
		case "/feed/doc.json.sig":
			fmt.Fprint(w, "  c2lnbmF0dXJl\n")
		case "/big.json.sig":
			fmt.Fprint(w, strings.Repeat("A", SignatureMaxBody+1))
		default:
			http.NotFound(w, r)
		}
	}))
	f := setup(t, Config{AllowPrivate: true})

	sig, err := f.FetchSignature(t.Context(), srv.URL+"/feed/doc.json?channel=stable")
	if err != nil || sig != "c2lnbmF0dXJl" {
		t.Fatalf("sig %q, err %v; want trimmed signature", sig, err)
	}
	if gotPath.Load() != "/feed/doc.json.sig" || gotQuery.Load() != "channel=stable" {
		t.Errorf("requested %v?%v, want /feed/doc.json.sig?channel=stable", gotPath.Load(), gotQuery.Load())
	}
	if _, err := f.FetchSignature(t.Context(), srv.URL+"/big.json"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversize signature: err = %v, want ErrTooLarge", err)
	}
	if _, err := f.FetchSignature(t.Context(), srv.URL+"/none.json"); !errors.Is(err, ErrStatus) {
		t.Errorf("missing signature: err = %v, want ErrStatus", err)
	}
}

func TestFetchInvalidURL(t *testing.T) {
	t.Parallel()
	f := setup(t, Config{})
	for _, u := range []string{"", "doc.json", "http://", "http://%zz/"} {
		if _, err := f.Fetch(t.Context(), Request{URL: u}); err == nil {
			t.Errorf("Fetch(%q): err = nil, want an error", u)
		}
	}
}
