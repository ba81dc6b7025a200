package web_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/fetch"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/testing/verdaccio"
	"github.com/upcheck/upcheck/internal/updatecheck"
	"github.com/upcheck/upcheck/internal/web"
)

// hostileDeprecation is a publisher's deprecation message with markup.
const hostileDeprecation = "<script>alert(1)</script> use *@acme/journal*"

// An npm component checked against a real registry (Verdaccio: it
// publishes no signing keys and no provenance), as the API and the pages
// show it: its kind and package, the deprecation of its installed version
// (escaped on the pages), the update command, the registry's facts with
// no claim of a verified signature, the source's registry, and no "no
// known advisory".
func TestNpmComponentAsTheOperatorSeesIt(t *testing.T) {
	t.Parallel()
	reg := verdaccio.Start(t)
	token := reg.AddUser(t, "publisher")
	reg.Publish(t, token, verdaccio.Package{Name: "@acme/core", Version: "2.0.0"})
	for _, v := range []string{"1.0.0", "1.1.0"} {
		reg.Publish(t, token, verdaccio.Package{Name: "@acme/blog", Version: v, PeerDependencies: map[string]string{"@acme/core": "^2.0.0"}})
	}
	reg.Deprecate(t, token, "@acme/blog@1.0.0", hostileDeprecation)
	regs, err := npm.LoadRegistries(reg.URL, "", os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	f := fetch.New(fetch.Config{AllowPrivate: true}, nil)
	t.Cleanup(f.Close)
	b := setup(t, func(b *bundle, _ *web.Deps) { b.checker.UseNpm(&npm.Client{Fetcher: f, Registries: regs}) })
	ctx := context.Background()
	if _, err := updatecheck.NewSyncer(b.checker).Sync(ctx, &manifest.Manifest{Components: []manifest.Component{
		{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"},
		{Code: "acme-blog", Name: "Blog", Version: "1.0.0", Source: "npm:@acme/blog"},
	}}); err != nil {
		t.Fatal(err)
	}
	if res, err := b.checker.RunLockedUpdateCheck(ctx, lease.Operator, "test"); err != nil || res.Status != updatecheck.Completed {
		t.Fatalf("check: %+v, %v", res, err)
	}
	admin := b.login("admin@example.test")

	// The API (client.do holds every answer to openapi.json).
	r := admin.do("GET", "/api/admin/plugins/updates", "", "", nil)
	wantStatus(t, "catalog", r, 200)
	var cat struct{ Components []map[string]any }
	if err := json.Unmarshal([]byte(r.body), &cat); err != nil {
		t.Fatal(err)
	}
	var blog map[string]any
	for _, c := range cat.Components {
		if c["code"] == "acme-blog" {
			blog = c
		}
	}
	if blog == nil || blog["source_kind"] != "npm" || blog["package"] != "@acme/blog" || blog["deprecated"] != hostileDeprecation ||
		blog["update_command"] != "npm install @acme/blog@1.1.0" || blog["provenance_lost"] != nil {
		t.Errorf("the catalog's blog: %v", blog)
	}
	r = admin.do("GET", "/api/admin/plugins/acme-blog", "", "", nil)
	wantStatus(t, "detail", r, 200)
	var detail struct {
		Deprecated    *string `json:"deprecated"`
		UpdateCommand *string `json:"update_command"`
		Registry      *struct {
			Registry      string `json:"registry"`
			KeysPublished bool   `json:"keys_published"`
			Versions      []struct {
				Version, SignedBy string
				Installed         bool
			} `json:"versions"`
		} `json:"registry"`
	}
	if err := json.Unmarshal([]byte(r.body), &detail); err != nil {
		t.Fatal(err)
	}
	if detail.Registry == nil || detail.Registry.KeysPublished || detail.Registry.Registry != reg.URL || len(detail.Registry.Versions) == 0 {
		t.Fatalf("the detail's registry facts: %s", r.body)
	}
	for _, v := range detail.Registry.Versions {
		if v.SignedBy != "" {
			t.Errorf("%s is said to be signed by %q, by a registry that publishes no keys", v.Version, v.SignedBy)
		}
	}
	if detail.Deprecated == nil || *detail.Deprecated != hostileDeprecation || detail.UpdateCommand == nil {
		t.Errorf("the detail: %s", r.body)
	}
	r = admin.do("GET", "/api/admin/sources", "", "", nil)
	wantStatus(t, "sources", r, 200)
	if !strings.Contains(r.body, `"source_kind":"npm","package":"@acme/blog","registry":"`+reg.URL+`","registry_keys":[]`) {
		t.Errorf("the npm source in Source health: %s", r.body)
	}
	r = admin.do("GET", "/api/admin/plugins/updates/summary", "", "", nil)
	wantStatus(t, "summary", r, 200)
	if !strings.Contains(r.body, `"deprecated":1,`) {
		t.Errorf("summary: %s", r.body)
	}

	// The pages.
	page := admin.do("GET", "/admin/plugins/acme-blog", "", "", nil)
	wantStatus(t, "detail page", page, 200)
	for _, want := range []string{
		"is deprecated by its publisher: &lt;script&gt;alert(1)&lt;/script&gt; use *@acme/journal*",
		`value="npm install @acme/blog@1.1.0"`,
		"signature not verified: the registry publishes no signing keys",
		"The advisories of npm packages come from an OSV feed, and none has been read",
	} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the detail page does not say %q", want)
		}
	}
	for _, never := range []string{"<script>alert", "verified by key", "No known advisory"} {
		if strings.Contains(page.body, never) {
			t.Errorf("the detail page says %q", never)
		}
	}
	sources := admin.do("GET", "/admin/sources", "", "", nil)
	if !strings.Contains(sources.body, "The registry publishes no signing keys, so no signature is verified") {
		t.Errorf("Source health does not say the registry publishes no keys:\n%s", sources.body)
	}
	catalog := admin.do("GET", "/admin/plugins", "", "", nil)
	if !strings.Contains(catalog.body, "Deprecated by its publisher: &lt;script&gt;") {
		t.Error("the catalog does not mark the deprecated version")
	}
}
