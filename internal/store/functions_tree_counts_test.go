package store_test

import (
	"testing"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/treekit"
	"github.com/upcheck/upcheck/internal/tree"
)

// upcheck_component_tree_attention: the rows of upcheck_tree_attention on
// every instance a component brings in, by component, its own instance
// left out (its findings are the component's own), a development one
// under include alone, a malicious one wherever it sits, and no
// look-back finding (the site's, not a component's).
func testComponentTreeAttention(t *testing.T, f *fdb) {
	st := store.New(f.Pool)
	f.exec(t, `INSERT INTO components (code, name, installed_version, package) VALUES
		('express', 'Express', '4.17.1', 'express'), ('mocha', 'Mocha', '10.0.0', 'mocha')`)
	express := treekit.Dep{Name: "express", Version: "4.17.1"}
	mocha := treekit.Dep{Name: "mocha", Version: "10.0.0", Kind: tree.KindDev}
	components := map[string]string{"express": "express", "mocha": "mocha"}
	deps := []treekit.Dep{express, mocha,
		{Name: "debug", Version: "2.6.9", Parent: express.ID()},
		{Name: "dm", Version: "1.0.0", Parent: mocha.ID()},
		{Name: "evil", Version: "1.0.0", Parent: mocha.ID()},
	}
	treekit.Write(t, st, treekit.Tree(append(deps, treekit.Dep{Name: "old", Version: "0.1.0", Parent: express.ID()})...), components)
	treekit.Write(t, st, treekit.Tree(deps...), components)
	treekit.Evaluate(t, st,
		treekit.Advisory{Name: "express", Version: "4.17.1", ID: "GHSA-own", FixedIn: "4.20.0"},
		treekit.Advisory{Name: "debug", Version: "2.6.9", ID: "GHSA-dbg", FixedIn: "2.6.10"},
		treekit.Advisory{Name: "dm", Version: "1.0.0", ID: "GHSA-dm"},
		treekit.Advisory{Name: "evil", Version: "1.0.0", ID: "MAL-evil", Malicious: true},
		treekit.Advisory{Name: "old", Version: "0.1.0", ID: "MAL-old", Malicious: true},
	)
	rows := func(mode string) string {
		return f.text(t, `SELECT coalesce(string_agg(code || ':' || kind || ':' || advisory_id || '@' || instance_id, ' '
			ORDER BY code, advisory_id), '') FROM upcheck_component_tree_attention($1)`, mode)
	}
	if got, want := rows("separate"), "express:vulnerable:GHSA-dbg@node_modules/express/node_modules/debug "+
		"mocha:malicious:MAL-evil@node_modules/mocha/node_modules/evil"; got != want {
		t.Errorf("separate: %s\nwant %s", got, want)
	}
	if got, want := rows("include"), "express:vulnerable:GHSA-dbg@node_modules/express/node_modules/debug "+
		"mocha:vulnerable_no_fix:GHSA-dm@node_modules/mocha/node_modules/dm mocha:malicious:MAL-evil@node_modules/mocha/node_modules/evil"; got != want {
		t.Errorf("include: %s\nwant %s", got, want)
	}
}
