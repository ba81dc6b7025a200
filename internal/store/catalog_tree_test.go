package store_test

import (
	"context"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/treekit"
)

// Each catalog row counts what in its component's dependencies needs
// attention (upcheck_component_tree_attention over upcheck_tree_attention):
// the package versions it brings in, its own instance left out, under
// the dev setting; and a lockfile sync that changes the tree turns the
// catalog snapshot, where an unchanged one does not.
func TestCatalogRowsCountTheComponentsDependencies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.exec(t, `INSERT INTO components (code, name, installed_version, package) VALUES
		('express', 'Express', '4.17.1', 'express'), ('mocha', 'Mocha', '10.0.0', 'mocha')`)
	lines := []string{"node_modules/express 4.17.1", "node_modules/mocha 10.0.0 dev",
		"node_modules/express/node_modules/debug 2.6.9", "node_modules/express/node_modules/qs 6.0.0",
		"node_modules/express/node_modules/evil 1.0.0", "node_modules/mocha/node_modules/dm 1.0.0"}
	components := map[string]string{"express": "express", "mocha": "mocha"}
	treekit.Write(t, b.st, "/site/package-lock.json", treekit.Tree(t, lines...), components)
	evaluate(t, b.st, []store.TreeFinding{
		finding(t, "express", "4.17.1", "GHSA-exp1", "4.20.0", false, false), // the component's own
		finding(t, "debug", "2.6.9", "GHSA-dbg1", "2.6.10", false, false),
		finding(t, "debug", "2.6.9", "GHSA-dbg2", "", false, false),
		finding(t, "qs", "6.0.0", "GHSA-qs01", "6.0.4", false, false),
		finding(t, "evil", "1.0.0", "MAL-2026-1", "", true, false),
		finding(t, "dm", "1.0.0", "GHSA-dm01", "1.0.1", false, false),
	})
	counts := func(mode readmodel.DevMode) map[string][2]int {
		t.Helper()
		rows, _, err := b.st.CatalogRows(ctx, mode)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][2]int{}
		for _, r := range rows {
			out[r.Code] = [2]int{r.TreeCounted, r.TreeMalicious}
		}
		return out
	}
	if got := counts(readmodel.DevSeparate); got["express"] != [2]int{3, 1} || got["mocha"] != [2]int{} {
		t.Errorf("separate: %v, want express 3 (1 malicious), mocha none", got)
	}
	if got := counts(readmodel.DevInclude); got["express"] != [2]int{3, 1} || got["mocha"] != [2]int{1, 0} {
		t.Errorf("include: %v, want express 3 (1 malicious), mocha 1", got)
	}

	_, stamp, err := b.st.CatalogRows(ctx, readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	treekit.Write(t, b.st, "/site/package-lock.json", treekit.Tree(t, lines...), components) // unchanged: tree_state alone
	if ok, err := b.st.ReadModelUnchanged(ctx, stamp); err != nil || !ok {
		t.Errorf("an unchanged sync turned the snapshot (%v)", err)
	}
	treekit.Write(t, b.st, "/site/package-lock.json", treekit.Tree(t, append(lines, "node_modules/express/node_modules/ms 2.0.0")...), components)
	if ok, err := b.st.ReadModelUnchanged(ctx, stamp); err != nil || ok {
		t.Errorf("a sync that changed the tree left the snapshot holding (%v)", err)
	}
}
