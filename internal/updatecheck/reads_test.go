package updatecheck

import (
	"context"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// The summary is cached per instance, yet another instance's check shows
// within a second, and this instance's own check at once.
func TestSummaryCacheFollowsChecks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := newPublisher(t)
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
