package updatecheck

import (
	"context"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/wait"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// The summary is cached per instance, yet another instance's check shows
// within a second, and this instance's own check at once.
func TestSummaryCacheFollowsChecks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := publisher.New(t)
	b.standardSite(p)
	other := b.otherInstance()
	otherReads := catalog.New(b.store)
	other.TellReads(otherReads)
	ctx := context.Background()
	for _, r := range []*catalog.Reads{b.reads, otherReads} {
		if s, err := r.Summary(ctx); err != nil || s.UpdatesAvailable != 0 {
			t.Fatalf("before any check: %+v %v", s, err)
		}
	}
	res, err := other.RunLockedUpdateCheck(ctx, lease.Operator, "other")
	if err != nil || res.Status != CompletedWithFailures {
		t.Fatal(res, err)
	}
	committed := time.Now()
	if s, _ := otherReads.Summary(ctx); s.UpdatesAvailable != 2 {
		t.Fatalf("the instance that ran the check still shows %+v", s)
	}
	wait.For(t, "another instance's summary to show the check within a second", time.Until(committed.Add(time.Second)), func() (bool, error) {
		s, err := b.reads.Summary(ctx)
		if err != nil {
			return false, err
		}
		return s.UpdatesAvailable == 2, wait.Notf("%+v", s)
	})
	t.Logf("the other instance saw the check %s after it committed", time.Since(committed).Round(time.Millisecond))
}

// The Syncer and the Importer made from a Checker tell its reads of their
// writes, as the check does: the summary read right after each shows it,
// although the cached one is fresh enough to be served as it is.
func TestSyncAndImportDropTheCachedReads(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	summary := func() readmodel.Summary {
		t.Helper()
		s, err := b.reads.Summary(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if s := summary(); s.Components != 0 {
		t.Fatalf("before the sync: %d components", s.Components)
	}
	priv := b.offlineSite()
	if s := summary(); s.Components != 3 || s.SecurityUpdates != 0 {
		t.Fatalf("right after the sync: %+v, want its 3 components, nothing evaluated", s)
	}
	body := doc(10, map[string]string{"core": pkgCore, "blog": pkgBlog, "forms": pkgUpToDate})
	if res := b.importDoc(offlineURL, body, updatedoc.Sign(body, priv)); res.Status != Imported {
		t.Fatalf("import = %+v", res)
	}
	if s := summary(); s.SecurityUpdates != 1 {
		t.Fatalf("right after the import: %+v, want blog's security update", s)
	}
}
