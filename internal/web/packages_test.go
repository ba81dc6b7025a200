package web_test

import (
	"encoding/json"
	"html"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/treekit"
	"github.com/upcheck/upcheck/internal/web"
	"github.com/upcheck/upcheck/views"
)

// writeTree replaces the installed tree with the one of lines
// (treekit.Tree), as the lockfile sync writes it and tells the reads:
// blog is a component.
func writeTree(t *testing.T, b *bundle, lines ...string) {
	t.Helper()
	treekit.Write(t, b.store, "package-lock.json", treekit.Tree(t, lines...), map[string]string{"blog": "blog"})
	b.reads.Changed() // as the lockfile sync does when it ends
}

// blogTree is a tree in which the component blog brings in send and two
// versions of debug, one nested, and the site has a scoped dev package
// with an install script and a git dependency.
func blogTree() []string {
	return []string{
		"node_modules/blog 2.3.0",
		"node_modules/send 0.17.1 by=blog",
		"node_modules/send/node_modules/debug 2.6.9",
		"node_modules/debug 4.3.4",
		"node_modules/@types/node 20.1.0 dev script",
		"node_modules/left-pad 1.3.0 git",
	}
}

type packagesAnswer struct {
	Packages []readmodel.PackageRow `json:"packages"`
	Total    int                    `json:"total"`
	Next     *string                `json:"next"`
	Tree     *readmodel.TreeState   `json:"tree"`
}

func (c *client) packages(t *testing.T, query string) packagesAnswer {
	t.Helper()
	r := c.do("GET", "/api/admin/packages?"+query, "", "", nil)
	wantStatus(t, "packages "+query, r, 200)
	var a packagesAnswer
	if err := json.Unmarshal([]byte(r.body), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

func packageNames(a packagesAnswer) []string {
	out := []string{}
	for _, p := range a.Packages {
		out = append(out, p.Name)
	}
	return out
}

// GET /api/admin/packages and /api/admin/packages/{name}, for a viewer,
// as openapi.json describes them (client.do checks every answer): null
// tree and not found before a tree is read; then the filters, the
// component, the search and the keyset cursor; one package with its
// instances, paths and history, a scoped name escaped.
func TestPackagesAPI(t *testing.T) {
	t.Parallel()
	b := setup(t)
	viewer := b.login("viewer@example.test")
	if a := viewer.packages(t, ""); a.Tree != nil || len(a.Packages) != 0 || a.Total != 0 {
		t.Errorf("no tree read: %+v", a)
	}
	wantStatus(t, "a package, no tree", viewer.do("GET", "/api/admin/packages/debug", "", "", nil), 404)
	writeTree(t, b, "node_modules/debug 4.4.2") // the history: debug 4.4.2, then blog's tree
	writeTree(t, b, blogTree()...)
	for query, want := range map[string][]string{
		"":                           {"@types/node", "blog", "debug", "left-pad", "send"},
		"filter=dev":                 {"@types/node"},
		"filter=scripts":             {"@types/node"},
		"filter=sources":             {"left-pad"},
		"component=blog":             {"blog", "debug", "send"},
		"component=blog&q=DEB":       {"debug"},
		"q=nothing-has-this-in-name": {},
	} {
		a := viewer.packages(t, query)
		if got := packageNames(a); !slices.Equal(got, want) || a.Total != len(want) || a.Tree == nil || a.Tree.Packages != 6 {
			t.Errorf("%q: %v (total %d, tree %+v), want %v", query, got, a.Total, a.Tree, want)
		}
	}
	var walked []string
	after := ""
	for range 5 {
		a := viewer.packages(t, "per_page=2&after="+url.QueryEscape(after))
		walked = append(walked, packageNames(a)...)
		if a.Next == nil {
			break
		}
		after = *a.Next
	}
	if !slices.Equal(walked, []string{"@types/node", "blog", "debug", "left-pad", "send"}) {
		t.Errorf("pages of 2: %v", walked)
	}
	for _, bad := range []string{"filter=vulnerable-ish", "per_page=0", "per_page=501", "q=" + strings.Repeat("x", 201)} {
		wantStatus(t, bad, viewer.do("GET", "/api/admin/packages?"+bad, "", "", nil), 400)
	}

	treekit.WriteFixes(t, b.store, store.TreeFix{PackageID: "node_modules/send/node_modules/debug", AdvisoryID: "GHSA-9vvw-cc9w-f27h",
		Fix: []byte(`{"kind": "component", "manager": "npm", "package": "debug",
		  "updates": [{"component": "blog", "from": "2.3.0", "to": "2.4.0"}]}`)})
	r := viewer.do("GET", "/api/admin/packages/debug", "", "", nil)
	wantStatus(t, "debug", r, 200)
	var p struct {
		Name      string                         `json:"name"`
		Instances []readmodel.PackageInstance    `json:"instances"`
		History   []readmodel.PackageVersionSpan `json:"history"`
	}
	if err := json.Unmarshal([]byte(r.body), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Instances) != 2 || p.Instances[0].ID != "node_modules/send/node_modules/debug" ||
		!slices.Equal(p.Instances[0].Via[0].Path, []string{"blog", "send", "debug"}) {
		t.Errorf("debug's instances: %+v", p.Instances)
	}
	if f := p.Instances[0].Fixes; len(f) != 1 || f[0].Text != "update blog 2.3.0 → 2.4.0, then npm update debug" {
		t.Errorf("what clears debug 2.6.9's advisory: %+v", f)
	}
	if len(p.History) != 3 || p.History[2].Version != "4.4.2" || p.History[2].RemovedAt == nil {
		t.Errorf("debug's history: %+v", p.History)
	}
	wantStatus(t, "a scoped package", viewer.do("GET", "/api/admin/packages/@types%2Fnode", "", "", nil), 200)
	wantStatus(t, "a package never installed", viewer.do("GET", "/api/admin/packages/express", "", "", nil), 404)
	wantStatus(t, "signed out", b.anonymous().do("GET", "/api/admin/packages", "", "", nil), 401)
}

// The pages: the Packages page and a package's say the dependencies are
// not checked while no tree was read, and so do the dashboard and a
// component's page; once read, the dashboard counts the packages, the
// component's page counts what it brings in and links to them, the
// Packages page lists them with their paths, and a package's page shows
// every instance.
func TestPackagesPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	viewer := b.login("viewer@example.test")
	for _, path := range []string{"/admin/packages", "/admin", "/admin/plugins/blog"} {
		r := viewer.do("GET", path, "", "", nil)
		wantStatus(t, path, r, 200)
		if !strings.Contains(r.body, html.EscapeString(readmodel.DependenciesNotCheckedText)) {
			t.Errorf("%s does not say the dependencies are not checked", path)
		}
	}
	// blog is the npm package blog here: its own instance is not its dependency.
	b.db.MustExec(t, `UPDATE components SET package = 'blog' WHERE code = 'blog'`)
	writeTree(t, b, blogTree()...)
	want := map[string][]string{
		"/admin":                         {"6 packages installed (7 components)"},
		"/admin/plugins/blog":            {`href="/admin/packages?component=blog"`, ">2 packages<"},
		"/admin/packages":                {`data-name="@types/node"`, "blog → send<", "Install script", "From git"},
		"/admin/packages?component=blog": {`data-name="send"`, "3 packages"},
		"/admin/packages/@types%2Fnode":  {"node_modules/@types/node", "Development only"},
		"/admin/packages/debug":          {"node_modules/send/node_modules/debug", "blog → send → debug"},
		"/admin/packages?filter=sources": {`data-name="left-pad"`},
		"/admin/packages?q=%3Cscript%3E": {"No installed package matches “&lt;script&gt;”."},
	}
	for path, wants := range want {
		r := viewer.do("GET", path, "", "", nil)
		wantStatus(t, path, r, 200)
		if strings.Contains(r.body, html.EscapeString(readmodel.DependenciesNotCheckedText)) {
			t.Errorf("%s says not checked with a tree", path)
		}
		for _, w := range wants {
			if !strings.Contains(r.body, w) {
				t.Errorf("%s lacks %q", path, w)
			}
		}
	}
	wantStatus(t, "a package never installed", viewer.do("GET", "/admin/packages/express", "", "", nil), 404)
	wantStatus(t, "a bad filter", viewer.do("GET", "/admin/packages?filter=x", "", "", nil), 400)
}

// writeTreeFindings replaces the tree's findings, as its evaluation
// writes them (treekit.WriteFindings): each advisory of an installed
// version, fixed in 9.9.9.
func writeTreeFindings(t *testing.T, b *bundle, findings ...store.TreeFinding) {
	t.Helper()
	treekit.WriteFindings(t, b.store, findings, nil)
	b.reads.Changed()
}

// treeFinding is the advisory id of name@version, fixed in 9.9.9.
func treeFinding(t *testing.T, name, version, id string, malicious, exploited bool) store.TreeFinding {
	return treekit.Finding(t, name, version, release.AdvisoryMatch{Advisory: release.Advisory{ID: id, Severity: "high", Affected: "*",
		FixedIn: "9.9.9"}, Malicious: malicious, KnownExploited: exploited}, false)
}

// The findings' filters of GET /api/admin/packages and the page read the
// server's UPCHECK_LOCKFILE_DEV (web.Deps.LockfileDev): a development
// package's advisory is listed under separate, hidden under omit.
func TestPackagesFindingFilters(t *testing.T) {
	t.Parallel()
	for mode, vulnerable := range map[readmodel.DevMode][]string{
		readmodel.DevSeparate: {"@types/node", "debug"},
		readmodel.DevOmit:     {"debug"},
	} {
		b := setup(t, func(_ *bundle, d *web.Deps) { d.LockfileDev = mode })
		writeTree(t, b, blogTree()...)
		writeTreeFindings(t, b, treeFinding(t, "debug", "2.6.9", "GHSA-debug", false, true),
			treeFinding(t, "@types/node", "20.1.0", "GHSA-types", false, false))
		viewer := b.login("viewer@example.test")
		for query, want := range map[string][]string{
			"filter=vulnerable": vulnerable,
			"filter=exploited":  {"debug"},
			"filter=malicious":  {},
		} {
			if a := viewer.packages(t, query); !slices.Equal(packageNames(a), want) || a.Total != len(want) {
				t.Errorf("%s %q: %v (total %d), want %v", mode, query, packageNames(a), a.Total, want)
			}
		}
		r := viewer.do("GET", "/api/admin/packages/@types%2Fnode", "", "", nil)
		wantStatus(t, "a dev package", r, 200)
		var one struct {
			Instances []readmodel.PackageInstance `json:"instances"`
		}
		if err := json.Unmarshal([]byte(r.body), &one); err != nil {
			t.Fatal(err)
		}
		if fs := one.Instances[0].Findings; (mode == readmodel.DevOmit) != (len(fs) == 0) ||
			(len(fs) == 1 && (!fs[0].Dev || fs[0].Counted || fs[0].AdvisoryID != "GHSA-types")) {
			t.Errorf("%s: the dev package's findings %+v", mode, fs)
		}
		page := viewer.do("GET", "/admin/packages?filter=exploited", "", "", nil)
		wantStatus(t, "the exploited filter's page", page, 200)
		if !strings.Contains(page.body, `data-name="debug"`) || strings.Contains(page.body, `data-name="send"`) {
			t.Errorf("%s: the exploited filter's page lists %s", mode, page.body)
		}
	}
}

// A scoped package's page and API answer to its name escaped
// ("%40types%2Fnode", "@types%2Fnode", the form the links use) and plain
// ("@types/node", two path segments); a plain path that is no scoped name
// is not found.
func TestScopedPackagePaths(t *testing.T) {
	t.Parallel()
	b := setup(t)
	writeTree(t, b, blogTree()...)
	viewer := b.login("viewer@example.test")
	for _, path := range []string{"%40types%2Fnode", "@types%2Fnode", "@types/node", "%40types/node"} {
		r := viewer.do("GET", "/api/admin/packages/"+path, "", "", nil)
		wantStatus(t, "the API of "+path, r, 200)
		var p struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal([]byte(r.body), &p); err != nil || p.Name != "@types/node" {
			t.Errorf("the API of %s: %q, %v", path, p.Name, err)
		}
		r = viewer.do("GET", "/admin/packages/"+path, "", "", nil)
		wantStatus(t, "the page of "+path, r, 200)
		if !strings.Contains(r.body, "@types/node") {
			t.Errorf("the page of %s does not name @types/node", path)
		}
	}
	for _, path := range []string{"types/node", "blog/send", "@types/node/x"} {
		wantStatus(t, "the API of "+path, viewer.do("GET", "/api/admin/packages/"+path, "", "", nil), 404)
		wantStatus(t, "the page of "+path, viewer.do("GET", "/admin/packages/"+path, "", "", nil), 404)
	}
	if got := views.PackagePath("@types/node"); got != "/admin/packages/@types%2Fnode" {
		t.Errorf("the link of @types/node: %s", got)
	}
}
