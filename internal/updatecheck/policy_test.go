package updatecheck

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// policySite is a core and a blog at 2.3.0 whose source publishes
// releases, under the site-wide policy p, with the manifest's skips and
// dismissals.
func (b *bundle) policySite(pub *publisher.Publisher, blog string, p release.Policy, skips []manifest.Skip,
	dismissals []manifest.Dismissal) {
	b.t.Helper()
	pub.Set("/core.json", doc(1, map[string]string{"core": `{"releases": [{"version": "1.9.0"}]}`}))
	pub.Set("/acme.json", doc(1, map[string]string{"blog": blog}))
	m := &manifest.Manifest{Policy: p, Skips: skips, Dismissals: dismissals, Components: []manifest.Component{
		{Code: "core", Name: "Core", Version: "1.9.0", Source: pub.URL + "/core.json"},
		{Code: "blog", Name: "Blog", Version: "2.3.0", Source: pub.URL + "/acme.json"},
	}}
	if _, err := NewSyncer(b.checker).Sync(context.Background(), m); err != nil {
		b.t.Fatal(err)
	}
}

// A release waiting for its soak is not offered; once it soaked, the
// scheduler's re-evaluation offers it without a check, once.
func TestAReleaseIsOfferedWhenItSoaks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pub := publisher.New(t)
	soaks := time.Now().UTC().Add(-72*time.Hour + 3*time.Second).Truncate(time.Second)
	blog := fmt.Sprintf(`{"releases": [{"version": "2.3.5", "released": "2026-01-01T00:00:00Z"},
		{"version": "2.4.0", "released": %q}]}`, soaks.Format(time.RFC3339))
	b.policySite(pub, blog, release.Policy{Soak: "3d"}, nil, nil)
	b.run(lease.Operator)

	if got := b.results()["blog"]; got.Update != "2.3.5" || !got.Evaluated {
		t.Fatalf("before the soak: offered %q (evaluated %v), want 2.3.5, the newest that soaked", got.Update, got.Evaluated)
	}
	var waiting string
	b.db.QueryRow(t, `SELECT coalesce(waiting_version, '') FROM component_state WHERE code = 'blog'`).Scan(&waiting)
	if waiting != "2.4.0" {
		t.Errorf("waiting %q, want 2.4.0", waiting)
	}
	s := NewSyncer(b.checker)
	if n, err := s.Reoffer(context.Background()); err != nil || n != 0 {
		t.Fatalf("Reoffer before the soak: %d, %v; want nothing to do", n, err)
	}
	wait.For(t, "the re-evaluation once 2.4.0 soaked", 15*time.Second, func() (bool, error) {
		n, err := s.Reoffer(context.Background())
		return n == 1, err
	})
	if got := b.results()["blog"]; got.Update != "2.4.0" {
		t.Errorf("after the soak: offered %q, want 2.4.0", got.Update)
	}
	if n, err := s.Reoffer(context.Background()); err != nil || n != 0 {
		t.Errorf("Reoffer again: %d, %v; want nothing: the result no longer waits", n, err)
	}
}

// A skipped version and those below it are not offered; a newer release
// is. A security release is offered whatever the skip.
func TestASkipHidesUntilANewerRelease(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pub := publisher.New(t)
	skip := []manifest.Skip{{Component: "blog", Version: "2.4.0", Reason: "breaks our theme"}}
	b.policySite(pub, `{"releases": [{"version": "2.3.9"}, {"version": "2.4.0"}]}`, release.Policy{}, skip, nil)
	b.run(lease.Operator)
	if got := b.results()["blog"]; got.Update != "" || !got.Evaluated {
		t.Fatalf("with 2.4.0 skipped: offered %q (evaluated %v), want nothing", got.Update, got.Evaluated)
	}
	pub.Set("/acme.json", doc(2, map[string]string{"blog": `{"releases": [{"version": "2.3.9"}, {"version": "2.4.0"}, {"version": "2.5.0"}]}`}))
	b.run(lease.Operator)
	if got := b.results()["blog"]; got.Update != "2.5.0" {
		t.Errorf("once 2.5.0 is out: offered %q, want 2.5.0", got.Update)
	}
	pub.Set("/acme.json", doc(3, map[string]string{"blog": `{"releases": [{"version": "2.3.9", "security": true}, {"version": "2.4.0"}]}`}))
	b.run(lease.Operator)
	if got := b.results()["blog"]; got.Update != "2.3.9" || !got.Security {
		t.Errorf("a security release below the skip: offered %q (security %v), want 2.3.9", got.Update, got.Security)
	}
}

// A dismissal the manifest declares holds in the read model, and the
// AdminCP can neither end nor replace it.
func TestAManifestDismissalIsNotUndoneInTheAdminCP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pub := publisher.New(t)
	blog := `{"releases": [{"version": "2.3.0"}], "advisories": [{"id": "ACME-2", "severity": "high", "affected": "<=2.3.0"}]}`
	d := []manifest.Dismissal{{Component: "blog", Advisory: "ACME-2", Reason: "the comments module is disabled"}}
	b.policySite(pub, blog, release.Policy{}, nil, d)
	b.run(lease.Operator)
	if got := b.results()["blog"]; got.Vulnerable || !got.Evaluated {
		t.Fatalf("blog vulnerable %v (evaluated %v), want the manifest's dismissal in force", got.Vulnerable, got.Evaluated)
	}
	ctx := context.Background()
	if err := b.dismissals.Undismiss(ctx, store.LocalSite, "blog", "ACME-2", 0); !errors.Is(err, store.ErrFromManifest) {
		t.Errorf("undismiss: %v, want ErrFromManifest", err)
	}
	if _, err := b.dismissals.Dismiss(ctx, store.NewDismissal{Site: store.LocalSite, Code: "blog", AdvisoryID: "ACME-2", Reason: "other"}); !errors.Is(err, store.ErrFromManifest) {
		t.Errorf("dismiss again: %v, want ErrFromManifest", err)
	}
	if got := b.results()["blog"]; got.Vulnerable {
		t.Error("after the AdminCP's attempts, blog is vulnerable: the manifest's dismissal was ended")
	}
	// Left out of the manifest, it ends.
	b.policySite(pub, blog, release.Policy{}, nil, nil)
	if got := b.results()["blog"]; !got.Vulnerable {
		t.Error("the manifest no longer declares the dismissal, and blog is still not vulnerable")
	}
}

// The soak is judged on the database's clock at the evaluation, not at
// the read of the knowledge: a check whose fetches take an hour judges
// its last source an hour later.
func TestTheSoakClockRunsWithTheCheck(t *testing.T) {
	t.Parallel()
	db := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	k := &knowledge{now: db, readAt: time.Now().Add(-time.Hour)}
	if got := k.clock(); got.Before(db.Add(time.Hour)) || got.After(db.Add(time.Hour+time.Minute)) {
		t.Errorf("clock an hour after the read = %v, want %v", got, db.Add(time.Hour))
	}
	if got := noKnowledge.clock(); time.Since(got) > time.Minute || time.Since(got) < -time.Minute {
		t.Errorf("clock without a read = %v, want the local clock", got)
	}
}
