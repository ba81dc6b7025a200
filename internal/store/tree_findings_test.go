package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/treekit"
)

// treeSite writes an installed tree as a lockfile sync does, and one
// evaluation of it as the check does (treekit): a (prod, fixed), b (every
// instance dev: one at the top, one under the dev package x; no fix), m
// (dev, malicious), c (two advisories, one no fix, one withdrawn), k
// (exploited in the wild, and a's GHSA-aaaa too), and the look-back's
// finding of old 0.1.0 (malicious, installed by an earlier sync).
func treeSite(t *testing.T, b *bundle) {
	t.Helper()
	lines := []string{"node_modules/a 1.0.0", "node_modules/b 1.0.0 dev", "node_modules/x 1.0.0 dev",
		"node_modules/x/node_modules/b 1.0.0", "node_modules/m 1.0.0 dev", "node_modules/c 2.0.0", "node_modules/k 1.0.0"}
	blog := map[string]string{"a": "blog", "c": "blog"}
	treekit.Write(t, b.st, "/site/package-lock.json", treekit.Tree(t, append(lines, "node_modules/old 0.1.0")...), blog)
	treekit.Write(t, b.st, "/site/package-lock.json", treekit.Tree(t, lines...), blog)
	advisory := func(id, severity, affected, fixed string) release.AdvisoryMatch {
		return release.AdvisoryMatch{Advisory: release.Advisory{ID: id, Severity: severity, Affected: affected, FixedIn: fixed},
			NoFix: fixed == ""}
	}
	malicious := advisory("MAL-2026-1", "critical", "*", "")
	malicious.Malicious = true
	exploited := advisory("GHSA-kkkk", "high", "<1.0.1", "1.0.1")
	exploited.KnownExploited = true
	aliased := advisory("GHSA-dddd", "medium", "*", "")
	aliased.Aliases = []string{"CVE-2026-1"}
	findings := []store.TreeFinding{
		treekit.Finding(t, "a", "1.0.0", advisory("GHSA-aaaa", "high", "<1.0.1", "1.0.1"), false),
		treekit.Finding(t, "b", "1.0.0", advisory("GHSA-bbbb", "low", "*", ""), false),
		treekit.Finding(t, "m", "1.0.0", malicious, false),
		treekit.Finding(t, "c", "2.0.0", advisory("GHSA-cccc", "medium", "<2.0.1", "2.0.1"), false),
		treekit.Finding(t, "c", "2.0.0", aliased, false),
		treekit.Finding(t, "k", "1.0.0", exploited, false),
		treekit.Finding(t, "k", "1.0.0", advisory("GHSA-aaaa", "high", "<1.0.1", "1.0.1"), false),
		treekit.Finding(t, "c", "2.0.0", advisory("GHSA-wwww", "high", "*", ""), true),
	}
	past, err := b.st.TreePastVersions(context.Background())
	if err != nil || len(past) != 1 || past[0].Name != "old" {
		t.Fatalf("the history: %+v, %v; want old 0.1.0 removed", past, err)
	}
	old := malicious
	old.ID = "MAL-2026-9"
	raw, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	exposures := []store.TreeExposure{{IntervalID: past[0].IntervalID, Site: past[0].Site, Name: "old", Version: "0.1.0", AdvisoryID: old.ID,
		Advisory: raw, Malicious: true, InstalledAt: past[0].InstalledAt, RemovedAt: past[0].RemovedAt}}
	if added := treekit.WriteFindings(t, b.st, findings, exposures); len(added) != 1 {
		t.Errorf("%d exposures added, want 1", len(added))
	}
}

func counted(t *testing.T, b *bundle, mode readmodel.DevMode) store.TreeCounts {
	t.Helper()
	c, err := b.st.TreeFindingCounts(context.Background(), store.LocalSite, mode)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func attention(t *testing.T, b *bundle, mode readmodel.DevMode) []string {
	t.Helper()
	items, err := b.st.TreeAttention(context.Background(), store.LocalSite, mode)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range items {
		out = append(out, string(it.Kind)+":"+it.Name)
	}
	return out
}

// The one definition of what a tree finding counts for: a finding on a
// package every instance of which is installed only for development is
// shown apart and not counted (separate), counted (include) or neither
// (omit); a malicious one counts wherever it sits; a withdrawn one never.
// upcheck_tree_attention names each by an AttentionKind, the look-back's
// by readmodel.KindExposed.
func TestTreeFindingsCountByTheDevSetting(t *testing.T) {
	t.Parallel()
	b := setup(t)
	treeSite(t, b)
	for mode, want := range map[readmodel.DevMode]store.TreeCounts{
		readmodel.DevSeparate: {Counted: 6, Packages: 4, DevApart: 1},
		readmodel.DevInclude:  {Counted: 7, Packages: 5},
		readmodel.DevOmit:     {Counted: 6, Packages: 4},
	} {
		if got := counted(t, b, mode); got != want {
			t.Errorf("%s: counts %+v, want %+v", mode, got, want)
		}
		rows, err := b.st.TreeFindings(context.Background(), store.LocalSite, mode)
		if err != nil {
			t.Fatal(err)
		}
		shown := slices.ContainsFunc(rows, func(r store.TreeFindingRow) bool { return r.Name == "b" })
		if shown != (mode != readmodel.DevOmit) {
			t.Errorf("%s: the dev finding shown %v", mode, shown)
		}
		if !slices.ContainsFunc(rows, func(r store.TreeFindingRow) bool { return r.Name == "m" && r.Dev && r.Counted }) {
			t.Errorf("%s: the malicious dev package is not shown and counted: %+v", mode, rows)
		}
	}
	// Per instance: each installed instance of b has its version's finding.
	inst, err := b.st.TreeFindingsOfPackage(context.Background(), store.LocalSite, "b", readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	if len(inst) != 2 || inst[0].InstanceID == inst[1].InstanceID || inst[0].AdvisoryID != "GHSA-bbbb" || inst[1].AdvisoryID != "GHSA-bbbb" {
		t.Errorf("b's instances = %+v, want both with GHSA-bbbb", inst)
	}
	want := []string{"malicious:m", "exposed:old", "known_exploited:k", "vulnerable_no_fix:c", "vulnerable:a", "vulnerable:c", "vulnerable:k"}
	if got := attention(t, b, readmodel.DevSeparate); !slices.Equal(got, want) {
		t.Errorf("attention = %v, want %v", got, want)
	}
	items, _ := b.st.TreeAttention(context.Background(), store.LocalSite, readmodel.DevInclude)
	for _, it := range items {
		if readmodel.Urgency(it.Kind) == len(readmodel.AttentionKinds) && it.Kind != readmodel.KindExposed {
			t.Errorf("upcheck_tree_attention names kind %q, which readmodel does not", it.Kind)
		}
	}
	if !slices.ContainsFunc(items, func(it store.TreeAttentionItem) bool { return it.Kind == readmodel.KindExposed }) {
		t.Errorf("no %s item: %+v", readmodel.KindExposed, items)
	}
}

// A dismissal of the advisory alone covers it wherever it is in the tree
// (a component's dismissal of it too); one naming the package covers that
// package only; a look-back finding is dismissed as a finding is.
func TestTreeDismissalsByAdvisoryAndPackage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	treeSite(t, b)
	ctx := context.Background()
	before := counted(t, b, readmodel.DevSeparate).Counted
	// By an alias, wherever it is.
	if _, err := b.st.DismissTreeAdvisory(ctx, store.NewTreeDismissal{AdvisoryID: "CVE-2026-1", Reason: "not reachable"}); err != nil {
		t.Fatal(err)
	}
	// Naming a package that does not have it: nothing to dismiss.
	if _, err := b.st.DismissTreeAdvisory(ctx, store.NewTreeDismissal{Package: "c", AdvisoryID: "GHSA-aaaa", Reason: "r"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("dismissing GHSA-aaaa on c: %v, want ErrNotFound", err)
	}
	if _, err := b.st.DismissTreeAdvisory(ctx, store.NewTreeDismissal{Package: "a", AdvisoryID: "GHSA-aaaa", Reason: "r"}); err != nil {
		t.Fatal(err)
	}
	// A component's dismissal of the advisory, as the components write
	// them (the fingerprint of the advisory as listed).
	b.exec(t, `INSERT INTO advisory_dismissals (component_code, advisory_id, reason, severity, affected, fixed_in)
		VALUES ('blog', 'GHSA-kkkk', 'accepted', 'high', '<1.0.1', '1.0.1')`)
	if got := counted(t, b, readmodel.DevSeparate).Counted; got != before-3 {
		t.Errorf("counted %d after three dismissals, want %d", got, before-3)
	}
	if _, err := b.st.DismissTreeAdvisory(ctx, store.NewTreeDismissal{Package: "old", AdvisoryID: "MAL-2026-9", Reason: "secrets rotated"}); err != nil {
		t.Fatal(err)
	}
	// GHSA-aaaa stays on k: the dismissal named a.
	want := []string{"malicious:m", "vulnerable:c", "vulnerable:k"}
	if got := attention(t, b, readmodel.DevSeparate); !slices.Equal(got, want) {
		t.Errorf("attention = %v, want %v", got, want)
	}
	if err := b.st.UndismissTreeAdvisory(ctx, store.LocalSite, "a", "GHSA-aaaa", 0); err != nil {
		t.Fatal(err)
	}
	if got := attention(t, b, readmodel.DevSeparate); !slices.Contains(got, "vulnerable:a") {
		t.Errorf("attention = %v after the dismissal of GHSA-aaaa on a was undone", got)
	}
	if n := b.count(t, `SELECT count(*) FROM audit_log WHERE action IN ($1, $2) AND detail ? 'package'`,
		readmodel.AuditAdvisoryDismiss, readmodel.AuditAdvisoryUndismiss); n != 4 {
		t.Errorf("%d audit rows naming a package, want 4", n)
	}
}
