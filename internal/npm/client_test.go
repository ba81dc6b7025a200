package npm_test

import (
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
