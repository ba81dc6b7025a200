package store_test

import (
	"testing"

	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/treekit"
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
	lines := []string{"node_modules/express 4.17.1", "node_modules/mocha 10.0.0 dev",
		"node_modules/express/node_modules/debug 2.6.9", "node_modules/mocha/node_modules/dm 1.0.0",
		"node_modules/mocha/node_modules/evil 1.0.0"}
	components := map[string]string{"express": "express", "mocha": "mocha"}
	treekit.Write(t, st, "/site/package-lock.json", treekit.Tree(t, append(lines, "node_modules/express/node_modules/old 0.1.0")...), components)
	treekit.Write(t, st, "/site/package-lock.json", treekit.Tree(t, lines...), components)
	evaluate(t, st, []store.TreeFinding{
		finding(t, "express", "4.17.1", "GHSA-own", "4.20.0", false, false),
		finding(t, "debug", "2.6.9", "GHSA-dbg", "2.6.10", false, false),
		finding(t, "dm", "1.0.0", "GHSA-dm", "", false, false),
		finding(t, "evil", "1.0.0", "MAL-evil", "", true, false),
	}, finding(t, "old", "0.1.0", "MAL-old", "", true, false))
	rows := func(mode string) string {
		return f.text(t, `SELECT coalesce(string_agg(code || ':' || kind || ':' || advisory_id || '@' || instance_id, ' '
			ORDER BY code, advisory_id), '') FROM upcheck_component_tree_attention(1, $1)`, mode)
	}
	if got, want := rows("separate"), "express:vulnerable:GHSA-dbg@node_modules/express/node_modules/debug "+
		"mocha:malicious:MAL-evil@node_modules/mocha/node_modules/evil"; got != want {
		t.Errorf("separate: %s\nwant %s", got, want)
	}
	if got, want := rows("include"), "express:vulnerable:GHSA-dbg@node_modules/express/node_modules/debug "+
		"mocha:vulnerable_no_fix:GHSA-dm@node_modules/mocha/node_modules/dm mocha:malicious:MAL-evil@node_modules/mocha/node_modules/evil"; got != want {
		t.Errorf("include: %s\nwant %s", got, want)
	}
	if n := f.int(t, `SELECT count(*) FROM tree_exposures`); n != 1 {
		t.Errorf("%d exposures stored, want old's 1 (left out here)", n)
	}
}
