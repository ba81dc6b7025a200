package npm_test

import (
	"net/http"
	"os"
	"testing"

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
	fetch := func(name npm.Name, withToken bool) (*http.Response, error) {
		u, err := regs.PackageURL(name)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodGet, u.String(), nil)
		req.Header.Set("Accept", "application/json")
		if tok := regs.Token(u); withToken && !tok.IsZero() {
			req.Header.Set("Authorization", "Bearer "+tok.Reveal())
		}
		return http.DefaultClient.Do(req)
	}
	resp, err := fetch("@vitnode/blog", false)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := npm.DecodePackage(resp.Body, npm.DefaultMaxDocument)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if pkg.DistTags["latest"] != "2.0.0" || pkg.DistTags["next"] != "3.0.0-rc.1" || len(pkg.Versions) != 5 {
		t.Fatalf("tags %v, %d versions", pkg.DistTags, len(pkg.Versions))
	}
	if pkg.Versions["1.1.0"].Dist.Integrity == "" || pkg.Published["1.1.0"].IsZero() {
		t.Errorf("1.1.0: integrity %q, published %v", pkg.Versions["1.1.0"].Dist.Integrity, pkg.Published["1.1.0"])
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

	for withToken, want := range map[bool]int{false: http.StatusUnauthorized, true: http.StatusOK} {
		resp, err := fetch("@private/site", withToken)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("the private package with a token %v: %s, want %d", withToken, resp.Status, want)
		}
	}
	resp, err = fetch("@vitnode/none", false)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a missing package: %s", resp.Status)
	}
}
