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

// A notification to a private address is refused unless allowed, before
// anything is sent.
func TestPostRefusesPrivateAddresses(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := serve(t, "127.0.0.1", okHandler(&hits))
	f := setup(t, Config{})
	if _, err := f.Post(t.Context(), srv.URL, http.Header{}, []byte("{}"), time.Second); !errors.Is(err, ErrPrivateAddress) {
		t.Fatalf("err = %v, want ErrPrivateAddress", err)
	}
	if hits.Load() != 0 {
		t.Fatalf("the receiver saw %d requests", hits.Load())
	}
	allowed := setup(t, Config{AllowPrivate: true})
	if status, err := allowed.Post(t.Context(), srv.URL, http.Header{}, []byte("{}"), time.Second); err != nil || status != 200 {
		t.Fatalf("allowed: %d %v", status, err)
	}
}

// A receiver that never answers is cut off at the timeout, saying so; a
// huge answer is not read (only its status matters); a redirect is not
// followed.
func TestPostBoundsTheExchange(t *testing.T) {
	t.Parallel()
	hang := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the body first: the server notices a client gone only then.
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return
		}
		<-r.Context().Done()
	}))
	var streamed atomic.Int64
	huge := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		chunk := []byte(strings.Repeat("x", 64<<10))
		for range 160 { // 10 MiB
			n, err := w.Write(chunk)
			streamed.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	redirect := serve(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	}))
	f := setup(t, Config{AllowPrivate: true})

	start := time.Now()
	_, err := f.Post(t.Context(), hang.URL, http.Header{}, []byte("{}"), 200*time.Millisecond)
	if err == nil || !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "after 200ms") || time.Since(start) > 5*time.Second {
		t.Fatalf("hanging receiver: %v after %s", err, time.Since(start))
	}
	status, err := f.Post(t.Context(), huge.URL, http.Header{}, []byte("{}"), 5*time.Second)
	if err != nil || status != http.StatusAccepted {
		t.Fatalf("huge answer: %d %v", status, err)
	}
	if n := streamed.Load(); n >= 10<<20 {
		t.Fatalf("the whole 10 MiB answer was read (%d bytes)", n)
	}
	if status, err := f.Post(t.Context(), redirect.URL, http.Header{}, []byte("{}"), time.Second); err != nil || status != http.StatusTemporaryRedirect {
		t.Fatalf("redirect: %d %v, want the 307 itself", status, err)
	}
}
