package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/treekit"
)

// upcheck_tree_counted: withdrawn and dismissed never count; a
// development finding counts under include alone; a malicious one counts
// wherever it sits, whatever the mode.
func testTreeCounted(t *testing.T, f *fdb) {
	for _, c := range []struct {
		mode                                 string
		dev, malicious, withdrawn, dismissed bool
		want                                 bool
	}{
		{"separate", false, false, false, false, true},
		{"separate", true, false, false, false, false},
		{"include", true, false, false, false, true},
		{"omit", true, false, false, false, false},
		{"omit", true, true, false, false, true},
		{"separate", true, true, false, false, true},
		{"include", false, false, true, false, false},
		{"include", false, true, false, true, false},
	} {
		q := fmt.Sprintf(`SELECT upcheck_tree_counted('%s', %v, %v, %v, %v)`, c.mode, c.dev, c.malicious, c.withdrawn, c.dismissed)
		if got := f.bool(t, q); got != c.want {
			t.Errorf("%s = %v, want %v", q, got, c.want)
		}
	}
}

// upcheck_tree_shown: omit hides the development findings, malicious ones
// aside; the other modes show them all.
func testTreeShown(t *testing.T, f *fdb) {
	for _, c := range []struct {
		mode           string
		dev, malicious bool
		want           bool
	}{
		{"separate", true, false, true}, {"include", true, false, true}, {"omit", true, false, false},
		{"omit", true, true, true}, {"omit", false, false, true},
	} {
		q := fmt.Sprintf(`SELECT upcheck_tree_shown('%s', %v, %v)`, c.mode, c.dev, c.malicious)
		if got := f.bool(t, q); got != c.want {
			t.Errorf("%s = %v, want %v", q, got, c.want)
		}
	}
}

// upcheck_tree_dismissed: a dismissal in force naming no package covers
// the advisory on every package (by an alias too), a component's
// included; one naming a package covers that package alone; an ended or
// changed one covers nothing.
func testTreeDismissed(t *testing.T, f *fdb) {
	const adv = `'{"id": "GHSA-1", "aliases": ["CVE-2026-7"], "severity": "high", "affected": "<2.0.0", "fixed_in": "2.0.0"}'::jsonb`
	q := func(name string) string { return `SELECT upcheck_tree_dismissed(1, '` + name + `', ` + adv + `)` }
	if f.bool(t, q("a")) {
		t.Errorf("%s: true with no dismissal", q("a"))
	}
	f.exec(t, `INSERT INTO advisory_dismissals (component_code, package, advisory_id, reason, severity, affected, fixed_in)
		VALUES ('', 'a', 'GHSA-1', 'r', 'high', '<2.0.0', '2.0.0')`)
	if !f.bool(t, q("a")) || f.bool(t, q("b")) {
		t.Errorf("a dismissal naming a: a %v, b %v; want a alone", f.bool(t, q("a")), f.bool(t, q("b")))
	}
	f.exec(t, `INSERT INTO advisory_dismissals (component_code, advisory_id, reason, severity, affected, fixed_in)
		VALUES ('blog', 'CVE-2026-7', 'r', 'high', '<2.0.0', '2.0.0')`)
	if !f.bool(t, q("b")) {
		t.Errorf("%s: false under a component's dismissal of the advisory by its alias", q("b"))
	}
	f.exec(t, `UPDATE advisory_dismissals SET severity = 'low'`)
	if f.bool(t, q("a")) || f.bool(t, q("b")) {
		t.Error("dismissals of another fingerprint still cover the advisory")
	}
	f.exec(t, `UPDATE advisory_dismissals SET severity = 'high', ended_at = clock_timestamp(), ended_how = 'undone'`)
	if f.bool(t, q("a")) {
		t.Error("an ended dismissal still covers the advisory")
	}
	// Another site's dismissal covers nothing on this one.
	f.exec(t, `INSERT INTO sites (name, owner, token_hash, token_made_at) VALUES ('shop', '', sha256('shop'), now())`)
	f.exec(t, `INSERT INTO advisory_dismissals (site_id, component_code, package, advisory_id, reason, severity, affected, fixed_in)
		SELECT id, '', '', 'GHSA-1', 'r', 'high', '<2.0.0', '2.0.0' FROM sites WHERE name = 'shop'`)
	if f.bool(t, q("a")) {
		t.Error("another site's dismissal covers the advisory on the local site")
	}
	if !f.bool(t, `SELECT upcheck_tree_dismissed((SELECT id FROM sites WHERE name = 'shop'), 'a', `+adv+`)`) {
		t.Error("a site's own dismissal does not cover the advisory there")
	}
}

// upcheck_tree_attention: a counted finding by its kind, a development
// one only under include, and a look-back finding as exposed until
// dismissed.
func testTreeAttention(t *testing.T, f *fdb) {
	st := store.New(f.Pool)
	lines := []string{"node_modules/a 1.0.0", "node_modules/d 1.0.0 dev"}
	treekit.Write(t, st, "package-lock.json", treekit.Tree(t, append(lines, "node_modules/old 0.1.0")...), nil)
	treekit.Write(t, st, "package-lock.json", treekit.Tree(t, lines...), nil)
	adv := func(id, fixed string) release.AdvisoryMatch {
		return release.AdvisoryMatch{Advisory: release.Advisory{ID: id, Severity: "high", Affected: "*", FixedIn: fixed}, NoFix: fixed == ""}
	}
	exploited, malicious := adv("GHSA-k", "1.0.1"), adv("MAL-d", "")
	exploited.KnownExploited, malicious.Malicious = true, true
	past, err := st.TreePastVersions(context.Background())
	if err != nil || len(past) != 1 {
		t.Fatalf("the history: %+v, %v; want old 0.1.0 removed", past, err)
	}
	treekit.WriteFindings(t, st, []store.TreeFinding{
		treekit.Finding(t, "a", "1.0.0", adv("GHSA-a", "1.0.1"), false),
		treekit.Finding(t, "a", "1.0.0", adv("GHSA-n", ""), false),
		treekit.Finding(t, "a", "1.0.0", exploited, false),
		treekit.Finding(t, "d", "1.0.0", adv("GHSA-d", ""), false),
		treekit.Finding(t, "d", "1.0.0", malicious, false),
	}, []store.TreeExposure{{IntervalID: past[0].IntervalID, Site: past[0].Site, Name: "old", Version: "0.1.0", AdvisoryID: "MAL-o",
		Advisory: []byte(`{"id": "MAL-o"}`), Malicious: true, InstalledAt: past[0].InstalledAt, RemovedAt: past[0].RemovedAt}})
	kinds := func(mode string) string {
		return f.text(t, `SELECT string_agg(kind || ':' || advisory_id, ' ' ORDER BY kind, advisory_id) FROM upcheck_tree_attention(1, $1)`, mode)
	}
	if got, want := kinds("separate"), "exposed:MAL-o known_exploited:GHSA-k malicious:MAL-d vulnerable:GHSA-a vulnerable_no_fix:GHSA-n"; got != want {
		t.Errorf("separate: %s, want %s", got, want)
	}
	if got, want := kinds("include"), "exposed:MAL-o known_exploited:GHSA-k malicious:MAL-d vulnerable:GHSA-a vulnerable_no_fix:GHSA-d vulnerable_no_fix:GHSA-n"; got != want {
		t.Errorf("include: %s, want %s", got, want)
	}
	f.exec(t, `INSERT INTO advisory_dismissals (component_code, package, advisory_id, reason) VALUES ('', 'old', 'MAL-o', 'secrets rotated')`)
	if got, want := kinds("omit"), "known_exploited:GHSA-k malicious:MAL-d vulnerable:GHSA-a vulnerable_no_fix:GHSA-n"; got != want {
		t.Errorf("omit, the exposure dismissed: %s, want %s", got, want)
	}
}
