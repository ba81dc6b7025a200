package demo

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/release"
)

// demoRegistry serves a fresh publisher and returns its base and an npm
// client pointed at its registry through the guarded fetcher.
func demoRegistry(t *testing.T) (string, *npm.Client) {
	t.Helper()
	p, err := NewPublisher(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	u, err := npm.ParseRegistryURL(RegistryURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	f := fetch.New(fetch.Config{AllowPrivate: true}, nil)
	t.Cleanup(f.Close)
	return srv.URL, &npm.Client{Fetcher: f, Registries: npm.Registries{Default: u}}
}

var demoPackages = []string{CorePackage, "@demo/seo", "@demo/search", "@demo/comments", "@demo/analytics"}

// get answers path on base with the headers given as pairs.
func get(t *testing.T, base, path string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// packedManifest is the package.json of an npm tarball (package/package.json
// in a gzipped tar).
func packedManifest(t *testing.T, tgz []byte) (m struct{ Name, Version string }) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("no package/package.json in the tarball: %v", err)
		}
		if h.Name == "package/package.json" {
			if err := json.NewDecoder(tr).Decode(&m); err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
}

// Every demo package's document, fetched as upcheck fetches it (the scoped
// name's slash escaped), decodes as a package document; every version's
// registry signature verifies under the keys the registry serves, and its
// integrity and shasum are those of the tarball the document points at.
func TestRegistryServesSignedPackages(t *testing.T) {
	t.Parallel()
	base, client := demoRegistry(t)
	ctx := context.Background()
	for _, text := range demoPackages {
		name, err := npm.ValidateName(text)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := client.Keys(ctx, name)
		if err != nil || len(keys) != 1 {
			t.Fatalf("keys: %+v %v", keys, err)
		}
		got, err := client.Package(ctx, name, "", "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pkg := got.Package
		if pkg == nil || pkg.Name != text || got.Response.ETag == "" || len(pkg.Versions) < 2 {
			t.Fatalf("%s: %+v", name, got)
		}
		if _, ok := pkg.Versions[pkg.DistTags["latest"]]; !ok {
			t.Errorf("%s: latest %q is not a version", name, pkg.DistTags["latest"])
		}
		for v, ver := range pkg.Versions {
			published := pkg.Published[v]
			if published.IsZero() {
				t.Errorf("%s@%s has no publish time", name, v)
			}
			if vf, err := npm.VerifySignature(keys, text, v, ver, published); err != nil || vf.KeyID != keys[0].KeyID {
				t.Errorf("%s@%s: signature %+v %v", name, v, vf, err)
			}
			tarball, err := url.Parse(ver.Dist.Tarball)
			if err != nil {
				t.Fatal(err)
			}
			resp, body := get(t, base, tarball.Path)
			s512, s1 := sha512.Sum512(body), sha1.Sum(body)
			if resp.StatusCode != http.StatusOK || ver.Dist.Integrity != "sha512-"+base64.StdEncoding.EncodeToString(s512[:]) ||
				ver.Dist.Shasum != hex.EncodeToString(s1[:]) {
				t.Errorf("%s@%s: tarball %s answered %d, integrity %s, shasum %s", name, v, ver.Dist.Tarball, resp.StatusCode, ver.Dist.Integrity, ver.Dist.Shasum)
			}
			if got := packedManifest(t, body); got.Name != text || got.Version != v {
				t.Errorf("%s@%s: the tarball's package.json is %+v", name, v, got)
			}
			// Another version's name does not borrow its signature.
			if _, err := npm.VerifySignature(keys, text, v+"1", ver, published); !errors.Is(err, npm.ErrBadSignature) {
				t.Errorf("%s@%s1 with its signature: %v", name, v, err)
			}
		}
	}
	// The unencoded form is the same document.
	encoded, a := get(t, base, "/npm/@demo%2fseo")
	plain, b := get(t, base, "/npm/@demo/seo")
	if encoded.StatusCode != http.StatusOK || string(a) != string(b) || encoded.Header.Get("ETag") != plain.Header.Get("ETag") ||
		plain.Header.Get("Content-Type") != "application/json" {
		t.Errorf("@demo%%2fseo and @demo/seo: %d %q, %d %q", encoded.StatusCode, encoded.Header, plain.StatusCode, plain.Header)
	}
	if pkg, err := npm.DecodePackage(bytes.NewReader(b), npm.DefaultMaxDocument); err != nil || pkg.Name != "@demo/seo" ||
		pkg.Versions["2.0.0"].Deprecated == "" {
		t.Errorf("@demo/seo decoded: %+v %v", pkg, err)
	}
	if _, err := client.Package(ctx, "@demo/nothing", "", ""); !errors.Is(err, npm.ErrNoSuchPackage) {
		t.Errorf("a package the demo does not have: %v, want ErrNoSuchPackage", err)
	}
}

// A document or the keys fetched again with their ETag answer 304, by
// upcheck's client and for any If-None-Match that names the ETag; another
// ETag gets the document.
func TestRegistryAnswers304(t *testing.T) {
	t.Parallel()
	base, client := demoRegistry(t)
	ctx := context.Background()
	first, err := client.Package(ctx, "@demo/comments", "", "")
	if err != nil {
		t.Fatal(err)
	}
	again, err := client.Package(ctx, "@demo/comments", first.Response.ETag, "")
	if err != nil || !again.Response.NotModified || again.Package != nil || again.Response.ETag != first.Response.ETag {
		t.Fatalf("fetched again with its ETag: %+v %v", again, err)
	}
	for _, path := range []string{"/npm/@demo%2fcomments", "/npm/-/npm/v1/keys"} {
		resp, _ := get(t, base, path)
		etag := resp.Header.Get("ETag")
		if resp.StatusCode != http.StatusOK || etag == "" {
			t.Fatalf("%s: %d, ETag %q", path, resp.StatusCode, etag)
		}
		for _, inm := range []string{etag, `"other", ` + etag, "W/" + etag, "*"} {
			if resp, body := get(t, base, path, "If-None-Match", inm); resp.StatusCode != http.StatusNotModified || len(body) != 0 ||
				resp.Header.Get("ETag") != etag {
				t.Errorf("%s with If-None-Match %s: %d %q", path, inm, resp.StatusCode, body)
			}
		}
		if resp, body := get(t, base, path, "If-None-Match", `"other"`); resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Errorf("%s with another ETag: %d", path, resp.StatusCode)
		}
	}
}

// What each npm component of the demo site (NpmManifest) is offered for
// its installed version, as upcheck reads the registry: a deprecated
// installed version, a release that needs a newer core, a release that
// lost provenance, plain updates; the core is the npm package the plugins'
// peerDependencies name.
func TestRegistryOffersTheDemoFacts(t *testing.T) {
	t.Parallel()
	base, client := demoRegistry(t)
	p, err := NewPublisher(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	m := p.NpmManifest(base)
	if core, ok := m.Core(); !ok || core.Source != npm.Source(CorePackage) {
		t.Fatalf("the demo site's core: %+v", core)
	}
	ctx := context.Background()
	offers, installed := map[string]npm.Offer{}, map[string]string{}
	for _, c := range m.Components {
		if !npm.IsSource(c.Source) {
			continue
		}
		name, err := npm.ParseSource(c.Source)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := client.Keys(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := client.Package(ctx, name, "", "")
		if err != nil {
			t.Fatal(err)
		}
		o := npm.OfferFor(got.Package, c.Version, CorePackage, keys)
		if len(o.Refused) > 0 || o.Unlisted || len(o.Package.Releases) == 0 {
			t.Fatalf("%s@%s: %+v", name, c.Version, o)
		}
		offers[string(name)] = o
		installed[string(name)] = c.Version
	}
	if len(offers) != 5 {
		t.Fatalf("the demo site has %d npm components, want the core and four plugins", len(offers))
	}
	// lost is what the offer makes of a package's provenance for the demo
	// site (release.Evaluation.ProvenanceLost).
	lost := func(name string) string {
		code := name
		if name == CorePackage {
			code = release.CoreCode
		}
		o := offers[name]
		ev, err := release.Evaluate(&o.Package, code, installed[name], installed[CorePackage])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return ev.ProvenanceLost
	}
	newest := func(name string) string {
		if rs := offers[name].Package.Releases; len(rs) > 0 {
			return rs[0].Version
		}
		return ""
	}
	if o := offers["@demo/seo"]; o.Deprecated == "" || newest("@demo/seo") != "2.0.1" {
		t.Errorf("seo: %+v, want its installed version deprecated with a message", o)
	}
	if o := offers["@demo/search"]; newest("@demo/search") != "3.1.0" || o.Package.Releases[0].RequiresCore != ">=2.0.0" {
		t.Errorf("search: %+v, want 3.1.0 requiring core >=2.0.0", o)
	}
	if o := offers["@demo/comments"]; lost("@demo/comments") != "1.3.0" || !o.Provenance["1.2.0"] {
		t.Errorf("comments: %+v, want 1.3.0 without the provenance 1.2.0 had", o)
	}
	for _, plain := range []string{"@demo/analytics", CorePackage} {
		if o := offers[plain]; o.Deprecated != "" || lost(plain) != "" || o.Package.Releases[0].RequiresCore != "" {
			t.Errorf("%s: %+v, want a plain update", plain, o)
		}
	}
	if newest("@demo/analytics") != "0.5.0" || newest(CorePackage) != "1.10.0" {
		t.Errorf("analytics offers %s, core %s", newest("@demo/analytics"), newest(CorePackage))
	}
}

// The real npm client installs from the demo's registry: it finds the
// documents, fetches the tarballs and checks them against their integrity,
// and warns of the deprecated version with the publisher's message. (Its
// `npm audit signatures` needs the sigstore root from the network, so the
// signatures are verified above with upcheck's own check.)
func TestRealNpmInstallsFromTheDemo(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm is not installed: run `make deps`")
	}
	base, _ := demoRegistry(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name": "site", "version": "1.0.0", "private": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "npmrc"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("npm", "install", "@demo/seo@2.0.0", "@demo/comments@1.3.0", "--registry", RegistryURL(base),
		"--userconfig", filepath.Join(dir, "npmrc"), "--cache", filepath.Join(dir, "cache"),
		"--ignore-scripts", "--no-audit", "--no-fund", "--no-update-notifier")
	cmd.Dir = dir
	// Nothing of the machine's npm settings applies.
	cmd.Env = append(os.Environ(), "npm_config_globalconfig="+filepath.Join(dir, "no-global-npmrc"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npm install: %v\n%s", err, out)
	}
	if want := "deprecated @demo/seo@2.0.0: 2.0.0 sends unpublished drafts to search engines"; !strings.Contains(string(out), want) {
		t.Errorf("npm install did not warn %q:\n%s", want, out)
	}
	for name, version := range map[string]string{"seo": "2.0.0", "comments": "1.3.0"} {
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", "@demo", name, "package.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ Name, Version string }
		if err := json.Unmarshal(b, &m); err != nil || m.Name != "@demo/"+name || m.Version != version {
			t.Errorf("installed @demo/%s: %+v %v", name, m, err)
		}
	}
}
