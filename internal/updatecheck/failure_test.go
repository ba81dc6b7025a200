package updatecheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/testing/publisher"
)

// The kind stored with a failed fetch comes from the typed error the real
// fetcher returns, not from its text: a status, a refused connection, a
// timeout, the private-address guard, an untrusted certificate.
func TestFetchFailuresAreClassified(t *testing.T) {
	t.Parallel()
	status := publisher.New(t)
	status.Fail("/feed.json", http.StatusServiceUnavailable)
	slow := publisher.New(t)
	slow.Hold("/feed.json")
	untrusted := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(untrusted.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/feed.json"
	ln.Close() // nothing listens there any more

	allowing := fetch.New(fetch.Config{AllowPrivate: true, Timeout: 10 * time.Second, RetryDelay: time.Millisecond}, nil)
	quick := fetch.New(fetch.Config{AllowPrivate: true, Timeout: 300 * time.Millisecond, RetryDelay: time.Millisecond}, nil)
	guarded := fetch.New(fetch.Config{Timeout: 10 * time.Second, RetryDelay: time.Millisecond}, nil)
	t.Cleanup(allowing.Close)
	t.Cleanup(quick.Close)
	t.Cleanup(guarded.Close)
	for _, tc := range []struct {
		name string
		f    *fetch.Fetcher
		url  string
		kind string
		args readmodel.FailureArgs
	}{
		{"status", allowing, status.URL + "/feed.json", string(readmodel.ErrorHTTPStatus), readmodel.FailureArgs{Status: 503}},
		{"refused", allowing, refused, string(readmodel.ErrorConnect), readmodel.FailureArgs{}},
		{"timeout", quick, slow.URL + "/feed.json", string(readmodel.ErrorTimeout), readmodel.FailureArgs{Timeout: 300 * time.Millisecond}},
		{"certificate", allowing, untrusted.URL + "/feed.json", string(readmodel.ErrorTLS), readmodel.FailureArgs{}},
		{"private address", guarded, status.URL + "/feed.json", string(readmodel.ErrorPrivateAddress), readmodel.FailureArgs{Address: "127.0.0.1"}},
		{"not http", allowing, "ftp://example.org/feed.json", string(readmodel.ErrorBadURL), readmodel.FailureArgs{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := tc.f.Fetch(context.Background(), fetch.Request{URL: tc.url})
			if err == nil {
				t.Fatal("the fetch succeeded")
			}
			f := failureOf(err, "")
			if string(f.kind) != tc.kind || f.args != tc.args || f.detail != err.Error() {
				t.Fatalf("%v: classified as %+v, want kind %q, args %+v and the error's text", err, f, tc.kind, tc.args)
			}
		})
	}
}

// Errors that a fetch meets less often, classified from their types.
func TestRareFailuresAreClassified(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		kind string
	}{
		{fmt.Errorf("fetch x: %w", &net.DNSError{Err: "no such host", Name: "nowhere.invalid", IsNotFound: true}), string(readmodel.ErrorDNS)},
		{fmt.Errorf("fetch x: %w: more than 10 bytes", fetch.ErrTooLarge), string(readmodel.ErrorTooLarge)},
		{fmt.Errorf("fetch x: %w", fmt.Errorf("%w: the limit is 3", fetch.ErrTooManyRedirects)), string(readmodel.ErrorRedirects)},
		{errors.New("something nobody foresaw"), string(readmodel.ErrorOther)},
	} {
		if f := failureOf(tc.err, ""); string(f.kind) != tc.kind {
			t.Errorf("%v: kind %q, want %q", tc.err, f.kind, tc.kind)
		}
	}
	// A .sig file the publisher does not have: the document is unsigned.
	if f := sigFailure(fmt.Errorf("fetch x.sig: %w", &fetch.StatusError{Code: 404})); f.kind != readmodel.ErrorUnsigned {
		t.Errorf("a missing .sig is %q, want unsigned", f.kind)
	}
	if f := sigFailure(fmt.Errorf("fetch x.sig: %w", &fetch.StatusError{Code: 502})); f.kind != readmodel.ErrorHTTPStatus || f.args.Status != 502 {
		t.Errorf("a failing .sig is %+v, want the status", f)
	}
}
