package notify_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/wait"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// A release waiting for its soak raises no notification; the moment it
// soaks, the scheduler's re-evaluation offers it and queues its
// update.available, once: neither a later re-evaluation nor a check
// queues it again.
func TestAWaitingReleaseIsNotifiedOnceWhenItSoaks(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: time.Hour})
	ctx := context.Background()
	soaks := time.Now().UTC().Add(-72*time.Hour + 3*time.Second).Truncate(time.Second)
	pub := publisher.New(t)
	pub.Set("/", fmt.Appendf(nil, `{"format": 1, "publisher": "acme", "sequence": 1, "packages": {
		"core": {"releases": [{"version": "1.9.0"}]},
		"blog": {"releases": [{"version": "2.3.5", "released": "2026-01-01T00:00:00Z"}, {"version": "2.4.0", "released": %q}]}}}`,
		soaks.Format(time.RFC3339)))
	m := &manifest.Manifest{Policy: release.Policy{Soak: "3d"}, Components: []manifest.Component{
		{Code: "core", Name: "Core", Version: "1.9.0", Source: pub.URL},
		{Code: "blog", Name: "Blog", Version: "2.3.0", Source: pub.URL},
	}}
	if _, err := updatecheck.NewSyncer(b.checker).Sync(ctx, m); err != nil {
		t.Fatal(err)
	}
	ch, err := b.notify.AddChannel(ctx, store.NewChannel{Name: "ops", Kind: "slack", Target: "http://127.0.0.1:1/", Events: "all"})
	if err != nil {
		t.Fatal(err)
	}
	updates := func() []string {
		var out []string
		for k := range b.events() {
			if rest, ok := strings.CutPrefix(k, fmt.Sprint(ch.ID)+" update.available:"); ok {
				out = append(out, rest)
			}
		}
		return out
	}
	b.check()
	if got := updates(); len(got) != 1 || got[0] != "blog@2.3.5" {
		t.Fatalf("update events before the soak: %v, want blog@2.3.5 only (2.4.0 waits)", got)
	}
	s := updatecheck.NewSyncer(b.checker)
	wait.For(t, "the re-evaluation once 2.4.0 soaked", 15*time.Second, func() (bool, error) {
		n, err := s.Reoffer(ctx)
		return n == 1, err
	})
	if got := updates(); len(got) != 2 || !slices.Contains(got, "blog@2.4.0") {
		t.Fatalf("update events once 2.4.0 soaked: %v, want blog@2.4.0 queued by the re-evaluation", got)
	}
	if _, err := s.Reoffer(ctx); err != nil {
		t.Fatal(err)
	}
	b.check()
	b.check()
	var rows int
	if err := b.db.Pool.QueryRow(ctx, `SELECT count(*) FROM notification_events WHERE key = 'update.available:blog@2.4.0'`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if got := updates(); rows != 1 || len(got) != 2 {
		t.Errorf("after more re-evaluations and checks: %d events for blog@2.4.0 (want 1), update events %v", rows, got)
	}
}
