package updatecheck

import (
	"context"
	"testing"

	"github.com/upcheck/upcheck/internal/dev/osvgen"
	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/testing/feedserver"
	"github.com/upcheck/upcheck/internal/tree"
)

// syncTree stores tr as the lockfile sync does (TreeSyncer: store's
// TreeWrite), read from path.
func syncTree(t *testing.T, b *bundle, path string, tr *tree.Tree) {
	t.Helper()
	tr.Sort()
	s := NewTreeSyncer(b.checker)
	st, err := s.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sync(context.Background(), TreeRead{Path: path, FileHash: tr.Hash(), Tree: tr, State: st}); err != nil {
		t.Fatal(err)
	}
}

// A check runs the fix step after the tree's findings are evaluated: a
// feed's record on a package deep in the tree (p2r, pinned by xpress) is
// a finding after the check, and what clears it is stored, read from the
// real registry's documents: "update xpress 4.17.1 → 4.20.0". When a
// lockfile sync then moves p2r to the fixed version (its row keeps its
// id), the evaluation that follows drops the fix with its finding.
func TestACheckDecidesWhatClearsATransitiveFinding(t *testing.T) {
	t.Parallel()
	b := setup(t)
	startFixRegistry(t, b, false)
	fs := feedserver.New(t)
	fs.SetRecords(records(osvgen.Record("GHSA-p2r0-0000-0001", "p2r", osvgen.KindVuln, "", "0.1.10")))
	b.checker.UseFeeds(NewFeeds(b.checker, []feed.Feed{{Kind: readmodel.FeedOSV, URL: fs.ArchiveURL()}}, t.TempDir()))
	tr := fixSite(t, b)

	if res := b.run(lease.Operator); !res.Status.RanToEnd() {
		t.Fatalf("check: %+v", res)
	}
	const key = "node_modules/p2r GHSA-p2r0-0000-0001"
	got := b.storedFixWords()
	if got[key] != "update xpress 4.17.1 → 4.20.0" || len(got) != 1 {
		t.Fatalf("after the check, the fixes are %v; want %s: update xpress 4.17.1 → 4.20.0", got, key)
	}

	for i := range tr.Packages {
		if tr.Packages[i].Name == "p2r" {
			tr.Packages[i].Version = "0.1.10"
		}
	}
	syncTree(t, b, "/site/package-lock.json", tr)
	if wrote, err := b.checker.EvaluateTree(context.Background()); err != nil || !wrote {
		t.Fatalf("EvaluateTree = %v, %v", wrote, err)
	}
	if got := b.storedFixWords(); len(got) != 0 {
		t.Errorf("p2r at its fixed version, the fixes are %v; want none", got)
	}
}
