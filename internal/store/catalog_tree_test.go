package store_test

import (
	"context"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/testing/treekit"
	"github.com/upcheck/upcheck/internal/tree"
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
	express := treekit.Dep{Name: "express", Version: "4.17.1"}
	mocha := treekit.Dep{Name: "mocha", Version: "10.0.0", Kind: tree.KindDev}
	deps := []treekit.Dep{express, mocha,
		{Name: "debug", Version: "2.6.9", Parent: express.ID()},
		{Name: "qs", Version: "6.0.0", Parent: express.ID()},
		{Name: "evil", Version: "1.0.0", Parent: express.ID()},
		{Name: "dm", Version: "1.0.0", Parent: mocha.ID()},
	}
	components := map[string]string{"express": "express", "mocha": "mocha"}
	treekit.Write(t, b.st, treekit.Tree(deps...), components)
	treekit.Evaluate(t, b.st,
		treekit.Advisory{Name: "express", Version: "4.17.1", ID: "GHSA-exp1", FixedIn: "4.20.0"}, // the component's own
		treekit.Advisory{Name: "debug", Version: "2.6.9", ID: "GHSA-dbg1", FixedIn: "2.6.10"},
		treekit.Advisory{Name: "debug", Version: "2.6.9", ID: "GHSA-dbg2"},
		treekit.Advisory{Name: "qs", Version: "6.0.0", ID: "GHSA-qs01", FixedIn: "6.0.4"},
		treekit.Advisory{Name: "evil", Version: "1.0.0", ID: "MAL-2026-1", Malicious: true},
		treekit.Advisory{Name: "dm", Version: "1.0.0", ID: "GHSA-dm01", FixedIn: "1.0.1"},
	)
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
	treekit.Write(t, b.st, treekit.Tree(deps...), components) // unchanged: tree_state alone
	if ok, err := b.st.ReadModelUnchanged(ctx, stamp); err != nil || !ok {
		t.Errorf("an unchanged sync turned the snapshot (%v)", err)
	}
	treekit.Write(t, b.st, treekit.Tree(append(deps, treekit.Dep{Name: "ms", Version: "2.0.0", Parent: express.ID()})...), components)
	if ok, err := b.st.ReadModelUnchanged(ctx, stamp); err != nil || ok {
		t.Errorf("a sync that changed the tree left the snapshot holding (%v)", err)
	}
}
