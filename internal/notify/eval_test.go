package notify_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/feedserver"
	"github.com/upcheck/upcheck/internal/testing/npmreg"
	"github.com/upcheck/upcheck/internal/updatecheck"
	"github.com/upcheck/upcheck/internal/updatedoc"
)

// npmFeedSite is an npm site (the core @acme/core 2.0.0 and the plugins
// given, each installed at its version) read from a real registry, with a
// real OSV feed serving recs and one security channel. It returns the
// channel's id.
func npmFeedSite(b *bundle, reg *npmreg.Registry, installed map[string]string, recs ...[]byte) int64 {
	b.t.Helper()
	ctx := context.Background()
	u, err := npm.ParseRegistryURL(reg.URL)
	if err != nil {
		b.t.Fatal(err)
	}
	b.checker.UseNpm(&npm.Client{Fetcher: b.fetcher, Registries: npm.Registries{Default: u}})
	m := &manifest.Manifest{Components: []manifest.Component{{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"}}}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range installed {
			if !yield(k) {
				return
			}
		}
	}) {
		m.Components = append(m.Components, manifest.Component{Code: name, Name: name, Version: installed[name], Source: "npm:" + name})
	}
	if _, err := updatecheck.NewSyncer(b.checker).Sync(ctx, m); err != nil {
		b.t.Fatal(err)
	}
	fs := feedserver.New(b.t)
	fs.SetRecords(osvRecords(recs...))
	b.checker.UseFeeds(updatecheck.NewFeeds(b.checker, []feed.Feed{{Kind: readmodel.FeedOSV, URL: fs.ArchiveURL()}}, b.t.TempDir()))
	added, err := b.notify.AddChannel(ctx, store.NewChannel{Name: "ops", Kind: "webhook", Target: "http://127.0.0.1:1/hook", Events: "security"})
	if err != nil {
		b.t.Fatal(err)
	}
	return added.ID
}

// osvRecord is an OSV record of the npm package name: its affected
// entry's ranges (JSON) and versions list.
func osvRecord(id, name, ranges string, versions ...string) []byte {
	vs := "[]"
	if len(versions) > 0 {
		vs = `["` + strings.Join(versions, `","`) + `"]`
	}
	if ranges == "" {
		ranges = "[]"
	}
	return fmt.Appendf(nil, `{"schema_version": "1.6.0", "id": %q, "modified": "2026-11-01T00:00:00Z", "published": "2026-11-01T00:00:00Z",
		"summary": "a record of %s", "affected": [{"package": {"ecosystem": "npm", "name": %q}, "ranges": %s, "versions": %s}]}`,
		id, name, name, ranges, vs)
}

// H1: a release whose peerDependencies on the core is not a range
// (workspace:*, latest, npm:@x/core@^2: the package's author writes it)
// requires an unknown core and is not offered, in words; it hides nothing:
// the malicious-package record of the installed version is matched, the
// summary counts it, and its event is queued.
func TestUnparsablePeerRangeHidesNoAdvisory(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: time.Hour})
	reg := npmreg.New(t)
	day := func(n int) time.Time { return time.Date(2026, 1, n, 0, 0, 0, 0, time.UTC) }
	reg.Publish("@acme/core", "2.0.0", map[string]npmreg.Version{"2.0.0": {Published: day(1)}})
	reg.Publish("evil", "1.2.0", map[string]npmreg.Version{
		"1.0.0": {Published: day(2), Peers: map[string]string{"@acme/core": "workspace:*"}},
		"1.1.0": {Published: day(3), Peers: map[string]string{"@acme/core": "latest"}},
		"1.2.0": {Published: day(4), Peers: map[string]string{"@acme/core": "npm:@x/core@^2"}},
	})
	const mal = "MAL-2026-4242"
	channel := npmFeedSite(b, reg, map[string]string{"evil": "1.0.0"}, osvRecord(mal, "evil", "", "1.0.0"))
	b.check()

	ctx := context.Background()
	reads := catalog.New(b.store)
	d, err := reads.Detail(ctx, "evil")
	if err != nil {
		t.Fatal(err)
	}
	if d.EvalError != "" {
		t.Errorf("evil's evaluation failed: %s", d.EvalError)
	}
	var ev updatedoc.Evaluation
	b.db.QueryRow(t, `SELECT evaluation FROM component_results WHERE code = 'evil'`).Scan(&ev)
	for _, r := range ev.Releases {
		if r.Version == "1.0.0" {
			continue
		}
		if r.Offer != updatedoc.ReleaseUnknownCore || !strings.Contains(r.Reason, "requires an unknown core") {
			t.Errorf("evil %s: offer %q reason %q, want unknown_core, said", r.Version, r.Offer, r.Reason)
		}
	}
	if ev.UpdateAvailable || ev.NeedsNewerCore {
		t.Errorf("evil: update %v, needs newer core %v; want neither (no core is known to run 1.1.0 or 1.2.0)", ev.UpdateAvailable, ev.NeedsNewerCore)
	}
	sum, err := b.store.Summary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sum.MaliciousCount() != 1 || len(sum.Attention) == 0 || sum.Attention[0].Code != "evil" || sum.Attention[0].Kind != readmodel.KindMalicious {
		t.Errorf("summary malicious %v, attention %+v; want evil, malicious, first", sum.Malicious, sum.Attention)
	}
	key := fmt.Sprintf("%d malicious_package:evil@1.0.0/%s", channel, mal)
	if _, ok := b.events()[key]; !ok {
		t.Errorf("events %v, want %s", b.events(), key)
	}
}
