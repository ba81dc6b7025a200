package views

import (
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"
	"golang.org/x/net/html"

	"github.com/upcheck/upcheck/internal/readmodel"
)

func ptr[T any](v T) *T { return &v }

func treeState() *readmodel.TreeState {
	return &readmodel.TreeState{Path: "package-lock.json", Packages: 212, ReadAt: now.Add(-3 * time.Hour), ChangedAt: now.Add(-26 * time.Hour)}
}

// packagesProps is the second page of the packages express brings in,
// with install scripts, searched for "e".
func packagesProps() PackagesProps {
	return PackagesProps{Layout: layout(attention(), true), Tree: treeState(), Component: "express", Query: "e", After: "body-parser", Next: "send",
		Counts: readmodel.PackageCounts{All: 5, Vulnerable: 2, Malicious: 0, Exploited: 1, Dev: 1, Scripts: 1, Sources: 1},
		Rows: []readmodel.PackageRow{
			{Name: "debug", Versions: []string{"2.6.9", "4.3.4"}, Instances: 3, Dev: false, Components: []string{"express"},
				Heads: []string{"express", "mocha", "nodemon", "socket.io"}, Path: []string{"express", "send", "debug"}},
			{Name: "esbuild", Versions: []string{"0.19.0"}, Instances: 1, Dev: true, InstallScript: true, Heads: []string{"esbuild"},
				Path: []string{"esbuild"}},
			{Name: "left-pad", Versions: []string{"1.3.0"}, Instances: 1, OtherSources: []string{"git"}, Heads: []string{"left-pad"},
				Path: []string{"left-pad"}},
		}}
}

// packageProps is ws, installed twice (once under engine.io), with an
// earlier version in its history.
func packageProps() PackageProps {
	return PackageProps{Layout: layout(attention(), true), Name: "ws", Tree: treeState(),
		Instances: []readmodel.PackageInstance{
			{ID: "node_modules/engine.io/node_modules/ws", Version: "8.11.0", Source: "registry",
				Resolved: "https://registry.example/ws/-/ws-8.11.0.tgz", Integrity: "sha512-3Y0xR2tPvnOK9ZLcYsR==",
				Via: []readmodel.PackageVia{{Head: "socket.io", Path: []string{"socket.io", "engine.io", "ws"}}}, Components: []string{"socket.io"},
				Fixes: []readmodel.PackageFix{{AdvisoryID: "GHSA-3h5v-q93c-6h6q", Text: "no fix yet through socket.io: engine.io 6.2.0 requires ws ~8.11.0"}},
				Findings: []readmodel.PackageFinding{{AdvisoryID: "GHSA-3h5v-q93c-6h6q", Severity: "high", KnownExploited: true, EPSS: ptr(0.12),
					FixedIn: ptr("8.17.1"), Counted: true}}},
			{ID: "node_modules/ws", Version: "8.17.1", Source: "registry", Optional: true,
				Via: []readmodel.PackageVia{{Head: "ws", Path: []string{"ws"}}}},
		},
		History: []readmodel.PackageVersionSpan{
			{Version: "8.17.1", InstalledAt: now.Add(-26 * time.Hour)},
			{Version: "8.11.0", InstalledAt: now.Add(-40 * 24 * time.Hour)},
			{Version: "8.2.0", InstalledAt: now.Add(-90 * 24 * time.Hour), RemovedAt: ptr(now.Add(-26 * time.Hour))},
		}}
}

// Where the tree was never read, the Packages page, the dashboard and a
// component's page say the dependencies are not checked, in readmodel's
// words, and show no list, count or "0" that could read as safe.
func TestDependenciesNotChecked(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		page   templ.Component
		testID string
	}{
		"packages":  {Packages(PackagesProps{Layout: layout(calm(), true)}), "packages-not-checked"},
		"dashboard": {Dashboard(DashboardProps{Layout: layout(calm(), true)}), "dashboard-not-checked"},
		"detail":    {ComponentDetail(DetailProps{Layout: layout(calm(), true), DetailRow: readmodel.DetailRow{Code: "blog", Installed: "1.0.0"}}), "detail-not-checked"},
	} {
		root := doc(t, c.page)
		if got := text(one(t, root, c.testID)); !strings.Contains(got, readmodel.DependenciesNotCheckedText) {
			t.Errorf("%s: %q", name, got)
		}
		for _, id := range []string{"packages-table", "packages-filters", "dashboard-packages"} {
			if len(byTestID(root, id)) > 0 {
				t.Errorf("%s shows %s without a tree", name, id)
			}
		}
	}
	with := doc(t, Dashboard(DashboardProps{Layout: layout(attention(), true)}))
	if got := text(one(t, with, "dashboard-packages")); got != "212 packages installed (5 components)" {
		t.Errorf("the dashboard's line: %q", got)
	}
	if len(byTestID(with, "dashboard-not-checked")) > 0 {
		t.Error("the dashboard says not checked with a tree")
	}
}

// The list keeps the filter, the component and the search across its
// links; a next page starts after the last row's name.
func TestPackagesLinks(t *testing.T) {
	t.Parallel()
	root := doc(t, Packages(packagesProps()))
	next, _ := attr(one(t, root, "packages-next"), "href")
	if next != "/admin/packages?after=send&component=express&q=e" {
		t.Errorf("next: %q", next)
	}
	var links []string
	for _, a := range findAll(one(t, root, "packages-filters"), func(n *html.Node) bool { return n.Data == "a" }) {
		href, _ := attr(a, "href")
		links = append(links, href+" "+text(a))
	}
	want := []string{"/admin/packages?component=express&q=e All (5)", "/admin/packages?component=express&filter=vulnerable&q=e Vulnerable (2)",
		"/admin/packages?component=express&filter=malicious&q=e Malicious (0)",
		"/admin/packages?component=express&filter=exploited&q=e Known exploited (1)",
		"/admin/packages?component=express&filter=dev&q=e Development only (1)",
		"/admin/packages?component=express&filter=scripts&q=e Install scripts (1)",
		"/admin/packages?component=express&filter=sources&q=e Not from a registry (1)",
		"/admin/packages?component=express&filter=brings&q=e Brought by a change (0)"}
	if strings.Join(links, "\n") != strings.Join(want, "\n") {
		t.Errorf("filters:\n%s", strings.Join(links, "\n"))
	}
	if got := PackagePath("@types/node"); got != "/admin/packages/@types%2Fnode" {
		t.Errorf("a scoped package's page: %q", got)
	}
}

// A catalog search that finds no component offers the same search over
// every installed package: a transitive package is not a component.
func TestCatalogSearchOffersPackages(t *testing.T) {
	t.Parallel()
	root := doc(t, Catalog(CatalogProps{Layout: layout(calm(), true), Query: "path-to-regexp"}))
	href, _ := attr(one(t, root, "catalog-search-packages"), "href")
	if href != "/admin/packages?q=path-to-regexp" {
		t.Errorf("the link: %q", href)
	}
}

// A package's page lists each instance's findings with what they are,
// in readmodel's words, and marks whether each counts.
func TestPackageFindingsListed(t *testing.T) {
	t.Parallel()
	root := doc(t, Package(packageProps()))
	fs := findAll(root, func(n *html.Node) bool { v, _ := attr(n, "data-testid"); return v == "package-finding" })
	if len(fs) != 1 {
		t.Fatalf("%d findings listed, want 1", len(fs))
	}
	counted, _ := attr(fs[0], "data-counted")
	if got := strings.Join(strings.Fields(text(fs[0])), " "); got != "GHSA-3h5v-q93c-6h6q: high · known exploited · EPSS 12.0 % · fixed in 8.17.1" || counted != "true" {
		t.Errorf("the finding: %q (counted %s)", got, counted)
	}
}
