package notify

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
)

// A webhook that got no answer is recorded in words, never as a Go error:
// the Notifications page shows what is stored.
func TestPostFailuresInWords(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); silent.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/hook"
	ln.Close()
	allowing := fetch.New(fetch.Config{AllowPrivate: true}, nil)
	guarded := fetch.New(fetch.Config{}, nil)
	t.Cleanup(allowing.Close)
	t.Cleanup(guarded.Close)
	for _, tc := range []struct {
		f    *fetch.Fetcher
		url  string
		want string
	}{
		{guarded, silent.URL, "not sent: the receiver’s address 127.0.0.1 is private (loopback or an internal network); set UPCHECK_ALLOW_PRIVATE_SOURCES=1 to allow it"},
		{allowing, refused, "not sent: could not connect to the receiver"},
		{allowing, silent.URL, "not sent: the receiver did not answer within 200ms"},
	} {
		status, err := tc.f.Post(context.Background(), tc.url, http.Header{}, []byte("{}"), 200*time.Millisecond)
		if err == nil {
			t.Fatalf("%s: answered %d", tc.url, status)
		}
		got := failureText(status, err)
		if got != tc.want {
			t.Errorf("%v: %q, want %q", err, got, tc.want)
		}
		for _, goish := range []string{"dial tcp", "context deadline", "post http"} {
			if strings.Contains(got, goish) {
				t.Errorf("%q carries %q", got, goish)
			}
		}
	}
}
