package lockfile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/lockfile"
	"github.com/upcheck/upcheck/internal/release"
)

// The options' policy becomes the site-wide policy of the manifest a
// lockfile is read as; one that is not valid refuses the options.
func TestOptionsPolicy(t *testing.T) {
	t.Parallel()
	body := []byte(`{"lockfileVersion": 3, "packages": {"": {"dependencies": {"left-pad": "^1.0.0"}}, "node_modules/left-pad": {"version": "1.3.0"}}}`)
	p := release.Policy{Offer: release.OfferSecurity, Soak: "72h"}
	l, err := lockfile.Parse("package-lock.json", body, lockfile.Options{Core: "left-pad", Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	m := l.Manifest
	if m.Policy != p || m.PolicyOf(m.Components[0]) != p {
		t.Fatalf("policy = %+v, want %+v", m.Policy, p)
	}
	_, err = lockfile.Parse("package-lock.json", body, lockfile.Options{Policy: release.Policy{Soak: "x"}})
	if !errors.Is(err, lockfile.ErrInvalid) || !strings.Contains(err.Error(), `policy: soak "x" is not a duration`) {
		t.Fatalf("bad policy: %v", err)
	}
}
