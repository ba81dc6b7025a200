package web_test

import (
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/treekit"
)

// countedFinding is the advisory id of name@version as the evaluation
// stores it: fixed in fixedIn ("": no fix), malicious or not.
func countedFinding(t *testing.T, name, version, id, fixedIn string, malicious bool) store.TreeFinding {
	t.Helper()
	return treekit.Finding(t, name, version, release.AdvisoryMatch{Advisory: release.Advisory{ID: id, Severity: "high",
		Affected: "*", FixedIn: fixedIn}, NoFix: fixedIn == "", Malicious: malicious}, false)
}

// The summary (validated against openapi.json in strict mode, as every
// answer here is) counts the installed tree's findings beside the
// components', and the pages' banner and the badge beside Packages count
// them: nothing while no tree was read, then a malicious package and a
// vulnerable one once a synced tree is evaluated.
func TestSummaryBannerAndBadgeCountTheTree(t *testing.T) {
	t.Parallel()
	b := setup(t)
	viewer := b.login("viewer@example.test")
	sum := decodeJSON[map[string]any](t, viewer.do("GET", "/api/admin/plugins/updates/summary", "", "", nil))
	if sum["tree_counts"] != nil || len(sum["tree_attention"].([]any)) != 0 {
		t.Fatalf("no tree read: tree_counts %v, tree_attention %v", sum["tree_counts"], sum["tree_attention"])
	}
	if page := viewer.do("GET", "/admin", "", "", nil).body; !strings.Contains(page, `data-testid="nav-tree-badge" data-count="0"`) {
		t.Error("no tree read: the Packages badge is not at 0")
	}
	treekit.Write(t, b.store, "/site/package-lock.json", treekit.Tree(t, "node_modules/express 4.17.1", "node_modules/mocha 10.0.0 dev",
		"node_modules/express/node_modules/debug 2.6.9", "node_modules/mocha/node_modules/evil 1.0.0"), map[string]string{"express": "blog"})
	treekit.WriteFindings(t, b.store, []store.TreeFinding{countedFinding(t, "debug", "2.6.9", "GHSA-dbg1", "2.6.10", false),
		countedFinding(t, "evil", "1.0.0", "MAL-2026-1", "", true)}, nil)
	b.reads.Changed()

	sum = decodeJSON[map[string]any](t, viewer.do("GET", "/api/admin/plugins/updates/summary", "", "", nil))
	counts, _ := sum["tree_counts"].(map[string]any)
	if counts == nil || counts["total"] != 2.0 || counts["vulnerable"] != 1.0 || counts["malicious"] != nil {
		// malicious: no OSV feed was read here, so no count is given.
		t.Errorf("tree_counts %v, want total 2, vulnerable 1, malicious null", counts)
	}
	items, _ := sum["tree_attention"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["name"] != "evil" || items[1].(map[string]any)["kind"] != "vulnerable" {
		t.Errorf("tree_attention %v", items)
	}
	b.db.MustExec(t, `INSERT INTO feeds (kind, url, epoch, last_success_at) VALUES ('osv', 'http://127.0.0.1/osv', 1, now())`)
	b.reads.Changed()
	page := viewer.do("GET", "/admin/plugins", "", "", nil).body
	if !strings.Contains(page, `data-testid="nav-tree-badge" data-count="2"`) {
		t.Error("the Packages badge does not count the tree's 2")
	}
	alert := texts(t, page, "security-alert-text")
	if len(alert) != 1 || !strings.Contains(alert[0], "1 malicious package in the dependencies and 1 vulnerable dependency need attention.") {
		t.Errorf("banner %q", alert)
	}
	if named := texts(t, page, "attention-banner-items"); len(named) != 1 || !strings.Contains(named[0], "evil 1.0.0: in the dependencies, known malicious package") {
		t.Errorf("banner names %q", named)
	}
}

// A component whose own state is "Up to date" and whose dependencies
// have findings says so on its catalog row and its page ("Up to date · 2
// vulnerable dependencies"); its page counts its dependencies and lists
// each finding with its path and what clears it, and the detail API
// (validated against openapi.json) carries the same.
func TestUpToDateSaysItsVulnerableDependencies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	admin := b.login("admin@example.test")
	wantStatus(t, "check", admin.postCheck(true), 200)
	treekit.Write(t, b.store, "/site/package-lock.json", treekit.Tree(t, "node_modules/forms-pkg 1.0.0",
		"node_modules/forms-pkg/node_modules/send 0.17.1", "node_modules/forms-pkg/node_modules/send/node_modules/debug 2.6.9",
		"node_modules/forms-pkg/node_modules/qs 6.0.0"), map[string]string{"forms-pkg": "forms"})
	treekit.WriteFindings(t, b.store, []store.TreeFinding{countedFinding(t, "debug", "2.6.9", "GHSA-dbg1", "2.6.10", false),
		countedFinding(t, "qs", "6.0.0", "GHSA-qs01", "", false)}, nil)
	// What clears debug's, as a check's fix step decided it.
	treekit.WriteFixes(t, b.store, store.TreeFix{PackageID: "node_modules/forms-pkg/node_modules/send/node_modules/debug",
		AdvisoryID: "GHSA-dbg1", Fix: []byte(`{"kind": "in_range", "package": "debug"}`)})
	b.reads.Changed()

	rows := texts(t, admin.do("GET", "/admin/plugins?q=forms", "", "", nil).body, "catalog-status")
	if len(rows) != 1 || rows[0] != "Up to date · 2 vulnerable dependencies" {
		t.Errorf("the catalog row of forms: %q", rows)
	}
	page := admin.do("GET", "/admin/plugins/forms", "", "", nil).body
	if h := texts(t, page, "detail-headline"); len(h) != 1 || !strings.HasPrefix(h[0], "Up to date · 2 vulnerable dependencies") {
		t.Errorf("forms' headline: %q", h)
	}
	if d := texts(t, page, "detail-dependencies"); len(d) != 1 || !strings.Contains(d[0], ", 2 with advisories") {
		t.Errorf("forms' dependencies: %q", d)
	}
	paths := texts(t, page, "detail-dependency-path")
	fixes := texts(t, page, "detail-dependency-fix")
	if len(paths) != 2 || paths[0] != "forms-pkg → qs" || paths[1] != "forms-pkg → send → debug" || len(fixes) != 2 ||
		fixes[0] != "What clears it: not decided yet: the next check decides it" || fixes[1] != "What clears it: in range: npm update debug" {
		t.Errorf("forms' findings: paths %q, fixes %q", paths, fixes)
	}
	d := decodeJSON[map[string]any](t, admin.do("GET", "/api/admin/plugins/forms", "", "", nil))
	if c, _ := d["dependency_counts"].(map[string]any); c == nil || c["counted"] != 2.0 || len(d["dependency_findings"].([]any)) != 2 {
		t.Errorf("the detail API: counts %v, findings %v", d["dependency_counts"], d["dependency_findings"])
	}
}
