package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/treekit"
)

// finding is the advisory id of name@version as the evaluation stores it:
// fixed in fixedIn ("": no fix), malicious or exploited in the wild.
func finding(t *testing.T, name, version, id, fixedIn string, malicious, exploited bool) store.TreeFinding {
	t.Helper()
	return treekit.Finding(t, name, version, release.AdvisoryMatch{Advisory: release.Advisory{ID: id, Severity: "medium",
		Affected: "*", FixedIn: fixedIn}, NoFix: fixedIn == "", Malicious: malicious, KnownExploited: exploited}, false)
}

// evaluate stores one evaluation of the stored tree (treekit.WriteFindings):
// the findings of versions installed now, and the look-back's exposures
// of past ones: each of past names a version the tree no longer has, one
// exposure per interval it was installed in.
func evaluate(t *testing.T, st *store.Store, findings []store.TreeFinding, past ...store.TreeFinding) {
	t.Helper()
	intervals, err := st.TreePastVersions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var exposures []store.TreeExposure
	for _, f := range past {
		for _, v := range intervals {
			if v.Name == f.Name && v.Version == f.Version {
				exposures = append(exposures, store.TreeExposure{IntervalID: v.IntervalID, Site: v.Site, Name: f.Name, Version: f.Version,
					AdvisoryID: f.AdvisoryID, Advisory: f.Advisory, Malicious: f.Malicious, KnownExploited: f.KnownExploited,
					InstalledAt: v.InstalledAt, RemovedAt: v.RemovedAt})
			}
		}
	}
	treekit.WriteFindings(t, st, findings, exposures)
}

// countedSite is a tree synced twice (old 0.1.0 installed, then removed)
// and evaluated: debug 2.6.9 (two advisories, one with no fix), qs
// exploited in the wild, dm (development only, vulnerable), evil
// (development only, malicious) and the look-back's old 0.1.0
// (malicious).
func countedSite(t *testing.T, b *bundle) {
	t.Helper()
	lines := []string{"node_modules/express 4.17.1", "node_modules/mocha 10.0.0 dev",
		"node_modules/express/node_modules/send 0.17.1", "node_modules/express/node_modules/debug 2.6.9",
		"node_modules/express/node_modules/qs 6.0.0",
		"node_modules/mocha/node_modules/dm 1.0.0", "node_modules/mocha/node_modules/evil 1.0.0"}
	components := map[string]string{"express": "express"}
	treekit.Write(t, b.st, "/site/package-lock.json", treekit.Tree(t, append(lines, "node_modules/express/node_modules/old 0.1.0")...), components)
	treekit.Write(t, b.st, "/site/package-lock.json", treekit.Tree(t, lines...), components)
	evaluate(t, b.st, []store.TreeFinding{
		finding(t, "debug", "2.6.9", "GHSA-dbg1", "2.6.10", false, false),
		finding(t, "debug", "2.6.9", "GHSA-dbg2", "", false, false),
		finding(t, "qs", "6.0.0", "GHSA-qs01", "6.0.4", false, true),
		finding(t, "dm", "1.0.0", "GHSA-dm01", "1.0.1", false, false),
		finding(t, "evil", "1.0.0", "MAL-2026-1", "", true, false),
	}, finding(t, "old", "0.1.0", "MAL-2026-2", "", true, false))
}

// The summary counts what in the tree needs attention by the one
// definition (upcheck_tree_attention) under the dev setting, each package
// version once under its most urgent kind, and names the most urgent:
// nothing while no tree was read, and no malicious or exploited count
// before their feeds were read.
func TestSummaryTreeCounts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	sum, err := b.st.Summary(ctx, store.LocalSite, readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	if sum.TreeCounts != nil || sum.TreeAttention == nil || len(sum.TreeAttention) != 0 || sum.TreeAttentionMore != 0 {
		t.Fatalf("no tree read: counts %+v, items %v, more %d; want nil, [], 0", sum.TreeCounts, sum.TreeAttention, sum.TreeAttentionMore)
	}
	countedSite(t, b)
	sum, err = b.st.Summary(ctx, store.LocalSite, readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	if c := sum.TreeCounts; c == nil || c.Malicious != nil || c.KnownExploited != nil || c.Total != 4 {
		t.Fatalf("feeds never read: %+v, want malicious and known_exploited nil, total 4", c)
	}
	b.exec(t, `INSERT INTO feeds (kind, url, epoch, last_success_at) VALUES ('osv', 'http://127.0.0.1/osv', 1, now()),
		('kev', 'http://127.0.0.1/kev', 1, now())`)
	one := func(n int) *int { return &n }
	for _, tc := range []struct {
		mode readmodel.DevMode
		want readmodel.TreeCounts
	}{
		{readmodel.DevSeparate, readmodel.TreeCounts{Malicious: one(1), Exposed: 1, KnownExploited: one(1), VulnerableNoFix: 1, Total: 4}},
		{readmodel.DevInclude, readmodel.TreeCounts{Malicious: one(1), Exposed: 1, KnownExploited: one(1), VulnerableNoFix: 1, Vulnerable: 1, Total: 5}},
		{readmodel.DevOmit, readmodel.TreeCounts{Malicious: one(1), Exposed: 1, KnownExploited: one(1), VulnerableNoFix: 1, Total: 4}},
	} {
		sum, err := b.st.Summary(ctx, store.LocalSite, tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		c := sum.TreeCounts
		if c == nil || c.Malicious == nil || c.KnownExploited == nil || *c.Malicious != *tc.want.Malicious ||
			*c.KnownExploited != *tc.want.KnownExploited || c.Exposed != tc.want.Exposed ||
			c.VulnerableNoFix != tc.want.VulnerableNoFix || c.Vulnerable != tc.want.Vulnerable || c.Total != tc.want.Total {
			t.Errorf("%s: %+v, want %+v", tc.mode, c, tc.want)
			continue
		}
		var kinds []readmodel.AttentionKind
		var got []string
		for _, a := range sum.TreeAttention {
			kinds = append(kinds, a.Kind)
			got = append(got, string(a.Kind)+":"+a.Name+"@"+a.Version+" "+a.AdvisoryID)
			if (a.Kind == readmodel.KindExposed) != (a.InstalledAt != nil && a.RemovedAt != nil) {
				t.Errorf("%s: %s's interval %v–%v", tc.mode, a.Name, a.InstalledAt, a.RemovedAt)
			}
		}
		want := []string{"malicious:evil@1.0.0 MAL-2026-1", "exposed:old@0.1.0 MAL-2026-2", "known_exploited:qs@6.0.0 GHSA-qs01",
			"vulnerable_no_fix:debug@2.6.9 GHSA-dbg2"}
		if tc.mode == readmodel.DevInclude {
			want = append(want, "vulnerable:dm@1.0.0 GHSA-dm01")
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: named %v, want %v", tc.mode, got, want)
		}
		// The SQL's order is readmodel.TreeKinds'.
		if !slices.IsSortedFunc(kinds, func(a, b readmodel.AttentionKind) int {
			return slices.Index(readmodel.TreeKinds, a) - slices.Index(readmodel.TreeKinds, b)
		}) {
			t.Errorf("%s: kinds %v out of readmodel.TreeKinds' order", tc.mode, kinds)
		}
		if sum.TreeAttentionMore != c.Total-len(sum.TreeAttention) {
			t.Errorf("%s: more %d", tc.mode, sum.TreeAttentionMore)
		}
	}
}
