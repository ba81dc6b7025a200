package npm_test

import (
	"errors"
	"os"
	"testing"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/testing/verdaccio"
)

// What npm publishes, deprecates and tags in a real registry is what
// DecodePackage reads and OfferFor offers; a private package is read with
// the token of the site's .npmrc, found as npm finds it.
func TestARealRegistrysDocuments(t *testing.T) {
	t.Parallel()
	reg := verdaccio.Start(t)
	token := reg.AddUser(t, "publisher")
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		reg.Publish(t, token, verdaccio.Package{Name: "@vitnode/blog", Version: v,
			PeerDependencies: map[string]string{"@vitnode/core": "^" + v[:1] + ".0.0"}})
	}
	reg.Publish(t, token, verdaccio.Package{Name: "@vitnode/blog", Version: "3.0.0-rc.1", Tag: "next"})
	reg.Publish(t, token, verdaccio.Package{Name: "@vitnode/blog", Version: "3.0.0-rc.2", Tag: "canary"})
	reg.Deprecate(t, token, "@vitnode/blog@1.0.0", "upgrade: 1.0.0 loses posts")
	reg.Deprecate(t, token, "@vitnode/blog@2.0.0", "broken build")
	reg.Publish(t, token, verdaccio.Package{Name: "@private/site", Version: "0.1.0"})

	regs, err := npm.LoadRegistries("", reg.Npmrc(t, token), os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	f := fetch.New(fetch.Config{AllowPrivate: true}, nil)
	t.Cleanup(f.Close)
	client := &npm.Client{Fetcher: f, Registries: regs}
	got, err := client.Package(t.Context(), "@vitnode/blog", "", "")
	if err != nil {
		t.Fatal(err)
	}
	pkg := got.Package
	if pkg.DistTags["latest"] != "2.0.0" || pkg.DistTags["next"] != "3.0.0-rc.1" || len(pkg.Versions) != 5 {
		t.Fatalf("tags %v, %d versions", pkg.DistTags, len(pkg.Versions))
	}
	if pkg.Versions["1.1.0"].Dist.Integrity == "" || pkg.Published["1.1.0"].IsZero() {
		t.Errorf("1.1.0: integrity %q, published %v", pkg.Versions["1.1.0"].Dist.Integrity, pkg.Published["1.1.0"])
	}
	// Verdaccio (6.8.0, published to with npm 11) does not fill _npmUser:
	// no version names its publisher, so no version is said to be by an
	// account new to the package (the rules are tested with crafted
	// documents: TestNewPublisher, and through a check in updatecheck).
	for v, ver := range pkg.Versions {
		if ver.Publisher != "" {
			t.Errorf("%s: publisher %q; this registry was not known to say", v, ver.Publisher)
		}
		if account, isNew := npm.NewPublisher(pkg, v); isNew {
			t.Errorf("%s: said to be by an account new to the package (%q) with no publisher known", v, account)
		}
	}
	// The next fetch with the validators costs a 304.
	again, err := client.Package(t.Context(), "@vitnode/blog", got.Response.ETag, got.Response.LastModified)
	if err != nil || !again.Response.NotModified || again.Package != nil {
		t.Errorf("the second fetch: not modified %v, package %v, %v", again.Response.NotModified, again.Package != nil, err)
	}
	o := npm.OfferFor(pkg, "1.0.0", "@vitnode/core", nil)
	if o.Deprecated != "upgrade: 1.0.0 loses posts" {
		t.Errorf("installed deprecated: %q", o.Deprecated)
	}
	if len(o.Package.Releases) != 1 || o.Package.Releases[0].Version != "1.1.0" || o.Package.Releases[0].RequiresCore != "^1.0.0" {
		t.Errorf("offered %+v; want only 1.1.0 (2.0.0 is deprecated), requiring core ^1.0.0", o.Package.Releases)
	}
	if pre := npm.OfferFor(pkg, "3.0.0-rc.1", "@vitnode/core", nil); len(pre.Package.Releases) == 0 || pre.Package.Releases[0].Version != "3.0.0-rc.2" {
		t.Errorf("rc.1 is offered %+v; want rc.2 first, which a tag names", pre.Package.Releases)
	}

	// The private package: read with the .npmrc's token, refused without.
	if _, err := client.Package(t.Context(), "@private/site", "", ""); err != nil {
		t.Errorf("the private package with the token: %v", err)
	}
	anonymous, err := npm.LoadRegistries(reg.URL, "", os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&npm.Client{Fetcher: f, Registries: anonymous}).Package(t.Context(), "@private/site", "", "")
	if !errors.Is(err, npm.ErrCredentialsRefused) {
		t.Errorf("the private package without a token: %v, want ErrCredentialsRefused", err)
	}
	if _, err := client.Package(t.Context(), "@vitnode/none", "", ""); !errors.Is(err, npm.ErrNoSuchPackage) {
		t.Errorf("a missing package: %v, want ErrNoSuchPackage", err)
	}
	// Verdaccio publishes no signing keys: none, and no error.
	if keys, err := client.Keys(t.Context(), "@vitnode/blog"); err != nil || len(keys) != 0 {
		t.Errorf("keys: %v, %v", keys, err)
	}
}
