package fetch

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A JSON query is refused to a private address unless allowed, its answer
// is returned under the cap and refused past it, a 503 is retried once, and
// a per-request timeout cuts a server that never answers.
func TestPostJSON(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	srv := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		got, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/flaky":
			if n == 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
		case "/huge":
			_, _ = w.Write([]byte(strings.Repeat("x", 5000)))
			return
		case "/hang":
			<-r.Context().Done()
			return
		}
		if r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusUnsupportedMediaType)
			return
		}
		_, _ = w.Write(append([]byte("echo:"), got...))
	}))

	guarded := setup(t, Config{})
	if _, err := guarded.PostJSON(t.Context(), srv.URL+"/q", []byte(`{}`), 1000, time.Second); !errors.Is(err, ErrPrivateAddress) {
		t.Fatalf("guarded: err = %v, want ErrPrivateAddress", err)
	}
	if calls.Load() != 0 {
		t.Fatalf("the server saw %d requests from a guarded fetcher", calls.Load())
	}

	f := setup(t, Config{AllowPrivate: true})
	answer, err := f.PostJSON(t.Context(), srv.URL+"/flaky", []byte(`{"a":1}`), 1000, time.Second)
	if err != nil || string(answer) != `echo:{"a":1}` {
		t.Fatalf("flaky: %q %v", answer, err)
	}
	if calls.Load() != 2 {
		t.Fatalf("flaky: %d calls, want 2 (one retry)", calls.Load())
	}
	if _, err := f.PostJSON(t.Context(), srv.URL+"/huge", []byte(`{}`), 1000, time.Second); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("huge: err = %v, want ErrTooLarge", err)
	}
	start := time.Now()
	_, err = f.PostJSON(t.Context(), srv.URL+"/hang", []byte(`{}`), 1000, 100*time.Millisecond)
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "after 100ms") || time.Since(start) > 5*time.Second {
		t.Fatalf("hang: %v after %s", err, time.Since(start))
	}
}

// A request's own Timeout replaces the fetcher's for that request only.
func TestRequestTimeoutOverridesConfig(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("start"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
			_, _ = w.Write([]byte(" end"))
		case <-r.Context().Done():
		}
	}))
	f := setup(t, Config{AllowPrivate: true, Timeout: 50 * time.Millisecond})
	// The fetcher's 50ms cuts the body off...
	if _, err := f.Fetch(t.Context(), Request{URL: srv.URL}); !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "after 50ms") {
		t.Fatalf("config timeout: %v", err)
	}
	// ...a request allowed a minute gets the rest of it.
	stop := time.AfterFunc(200*time.Millisecond, func() { close(release) }) // longer than the fetcher's Timeout
	defer stop.Stop()
	resp, err := f.Fetch(t.Context(), Request{URL: srv.URL, Timeout: time.Minute})
	if err != nil || string(resp.Body) != "start end" {
		t.Fatalf("request timeout: %q %v", resp.Body, err)
	}
}
