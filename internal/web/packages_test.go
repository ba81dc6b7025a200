package web_test

import (
	"encoding/json"
	"html"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/web"
)

// treeInstance is one installed instance as a test writes it straight into
// migrations/00012_tree.sql's tables, its paths and flags stated rather
// than computed from edges as the lockfile sync's writer
// (store.Tx.TreeWrite) computes them: these tests read, they do not sync.
type treeInstance struct {
	id, name, version string
	dev, script       bool
	source            string     // "" is registry
	via               [][]string // each a path from a direct dependency
	components        []string
}

// writeTree replaces the installed tree with these instances.
func writeTree(t *testing.T, b *bundle, instances ...treeInstance) {
	t.Helper()
	b.db.MustExec(t, `DELETE FROM tree_packages`)
	b.db.MustExec(t, `DELETE FROM tree_state`)
	b.db.MustExec(t, `INSERT INTO tree_state (path, file_hash, tree_hash, heads_hash, epoch, packages, synced_at, changed_at)
		VALUES ('package-lock.json', '\x00', '\x00', '\x00', 1, $1, clock_timestamp(), clock_timestamp())`, len(instances))
	for _, in := range instances {
		via := []readmodel.PackageVia{}
		for _, p := range in.via {
			via = append(via, readmodel.PackageVia{Head: p[0], Path: p})
		}
		v, err := json.Marshal(via)
		if err != nil {
			t.Fatal(err)
		}
		if in.source == "" {
			in.source = "registry"
		}
		if in.components == nil {
			in.components = []string{}
		}
		b.db.MustExec(t, `INSERT INTO tree_packages (id, name, version, dev, optional, peer, source, install_script, dev_only, via, components)
			VALUES ($1, $2, $3, $4, false, false, $5, $6, $4, $7, $8)`, in.id, in.name, in.version, in.dev, in.source, in.script, v, in.components)
	}
	b.reads.Changed() // as the lockfile sync does when it ends
}

// blogTree is a tree in which the component blog brings in send and two
// versions of debug, one nested, and the site has a scoped dev package
// with an install script and a git dependency.
func blogTree() []treeInstance {
	return []treeInstance{
		{id: "node_modules/blog", name: "blog", version: "2.3.0", via: [][]string{{"blog"}}, components: []string{"blog"}},
		{id: "node_modules/send", name: "send", version: "0.17.1", via: [][]string{{"blog", "send"}}, components: []string{"blog"}},
		{id: "node_modules/send/node_modules/debug", name: "debug", version: "2.6.9", via: [][]string{{"blog", "send", "debug"}},
			components: []string{"blog"}},
		{id: "node_modules/debug", name: "debug", version: "4.3.4", via: [][]string{{"debug"}}},
		{id: "node_modules/@types/node", name: "@types/node", version: "20.1.0", dev: true, script: true, via: [][]string{{"@types/node"}}},
		{id: "node_modules/left-pad", name: "left-pad", version: "1.3.0", source: "git", via: [][]string{{"left-pad"}}},
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
	writeTree(t, b, blogTree()...)
	b.db.MustExec(t, `INSERT INTO tree_versions (name, version, installed_at, removed_at) VALUES
		('debug', '2.6.9', '2026-11-01T10:00:00Z', NULL), ('debug', '4.3.4', '2026-11-02T10:00:00Z', NULL),
		('debug', '4.4.2', '2026-09-08T13:16:00Z', '2026-09-08T15:40:00Z')`)
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

	b.db.MustExec(t, `INSERT INTO tree_fixes (package_id, advisory_id, fix, epoch) VALUES
		('node_modules/send/node_modules/debug', 'GHSA-9vvw-cc9w-f27h', '{"kind": "component", "manager": "npm", "package": "debug",
		  "updates": [{"component": "blog", "from": "2.3.0", "to": "2.4.0"}]}', 1)`)
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

// writeTreeFinding adds one advisory of an installed version to the
// tree's findings.
func writeTreeFinding(t *testing.T, b *bundle, name, version, id string, malicious, exploited bool) {
	t.Helper()
	adv, err := json.Marshal(map[string]any{"id": id, "severity": "high", "affected": "*", "fixed_in": "9.9.9",
		"malicious": malicious, "known_exploited": exploited})
	if err != nil {
		t.Fatal(err)
	}
	b.db.MustExec(t, `INSERT INTO tree_findings (name, version, advisory_id, advisory, advisory_keys, malicious, known_exploited,
		severity, fixed_in, epoch) VALUES ($1, $2, $3, $4, ARRAY[$3], $5, $6, 'high', '9.9.9', 1)`, name, version, id, adv, malicious, exploited)
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
		writeTreeFinding(t, b, "debug", "2.6.9", "GHSA-debug", false, true)
		writeTreeFinding(t, b, "@types/node", "20.1.0", "GHSA-types", false, false)
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
