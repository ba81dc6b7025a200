package updatecheck

import (
	"context"
	"testing"

	"github.com/upcheck/upcheck/internal/store"
)

// A tree's sync drops this process's cached summary: read just before
// the sync (and so still fresh), the summary says how many packages the
// tree installs at once after it, not a second later.
func TestTreeSyncTurnsTheSummary(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	if sum, err := b.reads.Summary(ctx); err != nil || sum.TreePackages != nil {
		t.Fatalf("before the sync: %v, %v", sum.TreePackages, err)
	}
	if _, err := NewTreeSyncer(b.checker).Sync(ctx, TreeRead{Site: store.LocalSite, Path: "package-lock.json", FileHash: [32]byte{1},
		Tree: treeOfSite("4.3.4"), Components: siteComponents}); err != nil {
		t.Fatal(err)
	}
	if sum, err := b.reads.Summary(ctx); err != nil || sum.TreePackages == nil || *sum.TreePackages != 3 {
		t.Fatalf("after the sync: %v, %v", sum.TreePackages, err)
	}
}
