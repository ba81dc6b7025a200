// Package npmreg starts the one fake npm registry (internal/dev/npmreg)
// for a test: on an httptest server closed when the test ends, its
// methods failing the test instead of returning errors. Tests use it when
// they need a registry signing its versions with keys of its own
// (Verdaccio publishes no keys), rotating them or hiding them.
package npmreg

import (
	"net/http/httptest"
	"testing"

	"github.com/upcheck/upcheck/internal/dev/npmreg"
)

// Version is one published version of a package (npmreg.Version).
type Version = npmreg.Version

// Registry is a fake registry serving for one test.
type Registry struct {
	*npmreg.Registry
	t *testing.T
	// URL is the registry's address (what UPCHECK_NPM_REGISTRY names).
	URL string
}

// New starts a registry for t.
func New(t *testing.T) *Registry {
	t.Helper()
	reg, err := npmreg.New("/")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(reg)
	t.Cleanup(srv.Close)
	return &Registry{Registry: reg, t: t, URL: srv.URL + "/"}
}

// Rotate replaces the registry's signing key (and so every document).
func (r *Registry) Rotate() {
	r.t.Helper()
	if err := r.Registry.Rotate(); err != nil {
		r.t.Fatal(err)
	}
}

// Publish makes versions the package name's versions, latest its
// dist-tags.latest.
func (r *Registry) Publish(name, latest string, versions map[string]Version) {
	r.t.Helper()
	if err := r.Registry.Publish(name, latest, versions); err != nil {
		r.t.Fatal(err)
	}
}
