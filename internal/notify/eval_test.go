package notify_test

import (
	"context"
	"errors"
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
	"github.com/upcheck/upcheck/internal/release"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/feedserver"
	"github.com/upcheck/upcheck/internal/testing/npmreg"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// npmFeedSite is an npm site (the core @acme/core 2.0.0 and the plugins
// given, each installed at its version) read from a real registry, with a
// real OSV feed serving recs.
func npmFeedSite(b *bundle, reg *npmreg.Registry, installed map[string]string, recs ...[]byte) {
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
}

// securityChannel adds a webhook channel of security events; its id.
func securityChannel(b *bundle) int64 {
	b.t.Helper()
	added, err := b.notify.AddChannel(context.Background(), store.NewChannel{Name: "ops", Kind: "webhook", Target: "http://127.0.0.1:1/hook", Events: "security"})
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
	npmFeedSite(b, reg, map[string]string{"evil": "1.0.0"}, osvRecord(mal, "evil", "", "1.0.0"))
	channel := securityChannel(b)
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
	var ev release.Evaluation
	b.db.QueryRow(t, `SELECT evaluation FROM component_results WHERE code = 'evil'`).Scan(&ev)
	for _, r := range ev.Releases {
		if r.Version == "1.0.0" {
			continue
		}
		if why := catalog.OfferReasonText(r.Reason); r.Offer != release.ReleaseUnknownCore || !strings.Contains(why, "requires an unknown core") {
			t.Errorf("evil %s: offer %q reason %q, want unknown_core, said", r.Version, r.Offer, why)
		}
	}
	if ev.UpdateAvailable || ev.NeedsNewerCore {
		t.Errorf("evil: update %v, needs newer core %v; want neither (no core is known to run 1.1.0 or 1.2.0)", ev.UpdateAvailable, ev.NeedsNewerCore)
	}
	sum, err := b.store.Summary(ctx, store.LocalSite, readmodel.DevSeparate)
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

// An npm package has security updates: the release that clears an open
// advisory of the installed version is one, whoever marked it — counted in
// the summary, listed by the security filter and notified once; a
// dismissed advisory makes none.
func TestReleaseClearingAnAdvisoryIsASecurityUpdate(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: time.Hour})
	reg := npmreg.New(t)
	day := func(n int) time.Time { return time.Date(2026, 1, n, 0, 0, 0, 0, time.UTC) }
	reg.Publish("@acme/core", "2.0.0", map[string]npmreg.Version{"2.0.0": {Published: day(1)}})
	for _, name := range []string{"lib-a", "lib-b"} {
		reg.Publish(name, "2.0.0", map[string]npmreg.Version{
			"1.0.0": {Published: day(2)}, "1.0.1": {Published: day(3)}, "2.0.0": {Published: day(4)}})
	}
	fixed := `[{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": "1.0.1"}]}]`
	npmFeedSite(b, reg, map[string]string{"lib-a": "1.0.0", "lib-b": "1.0.0"},
		osvRecord("GHSA-aaaa-aaaa-aaaa", "lib-a", fixed), osvRecord("GHSA-bbbb-bbbb-bbbb", "lib-b", fixed))
	b.check()
	ctx := context.Background()
	reads := catalog.New(b.store)
	if _, err := catalog.NewDismissals(b.store, reads).Dismiss(ctx, store.NewDismissal{Site: store.LocalSite, Code: "lib-b", AdvisoryID: "GHSA-bbbb-bbbb-bbbb",
		Reason: "the affected function is not used"}); err != nil {
		t.Fatal(err)
	}
	channel := securityChannel(b)
	b.check()
	b.check()

	sum, err := b.store.Summary(ctx, store.LocalSite, readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	if sum.SecurityUpdates != 1 {
		t.Errorf("summary security_updates %d, want 1 (lib-a; lib-b's advisory is dismissed)", sum.SecurityUpdates)
	}
	entries, _, err := catalog.ReadPage(ctx, b.store, store.CatalogFilter{Status: readmodel.FilterSecurity, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, e := range entries {
		codes = append(codes, e.Code)
	}
	if !slices.Equal(codes, []string{"lib-a"}) {
		t.Errorf("security filter lists %v, want [lib-a]", codes)
	}
	var security []string
	for k := range b.events() {
		if strings.Contains(k, "security_update.available") {
			security = append(security, k)
		}
	}
	if want := fmt.Sprintf("%d security_update.available:lib-a@1.0.1", channel); !slices.Equal(security, []string{want}) {
		t.Errorf("security events %v, want [%s] once", security, want)
	}
}

// A malicious version with a clean successor: the record lists only the
// installed 4.4.2, so 4.4.3 clears it — the advisory is not "no fix", it
// says 4.4.3 is not affected, and the malicious_package event carries it
// (its words say "update to it", not "remove it").
func TestMaliciousVersionWithACleanSuccessor(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: time.Hour})
	reg := npmreg.New(t)
	day := func(n int) time.Time { return time.Date(2026, 1, n, 0, 0, 0, 0, time.UTC) }
	reg.Publish("@acme/core", "2.0.0", map[string]npmreg.Version{"2.0.0": {Published: day(1)}})
	reg.Publish("dbg", "4.4.3", map[string]npmreg.Version{"4.4.1": {Published: day(2)}, "4.4.2": {Published: day(3)}, "4.4.3": {Published: day(4)}})
	reg.Publish("gone-bad", "2.0.0", map[string]npmreg.Version{"1.0.0": {Published: day(2)}, "2.0.0": {Published: day(3)}})
	const mal, allBad = "MAL-2025-46974", "MAL-2025-50000"
	npmFeedSite(b, reg, map[string]string{"dbg": "4.4.2", "gone-bad": "1.0.0"}, osvRecord(mal, "dbg", "", "4.4.2"),
		osvRecord(allBad, "gone-bad", `[{"type": "SEMVER", "events": [{"introduced": "0"}]}]`))
	channel := securityChannel(b)
	b.check()

	var advs []release.AdvisoryMatch
	b.db.QueryRow(t, `SELECT advisories FROM component_results WHERE code = 'dbg'`).Scan(&advs)
	if len(advs) != 1 || advs[0].ClearedBy != "4.4.3" || advs[0].NoFix || !advs[0].Malicious {
		t.Errorf("dbg's advisories %+v, want %s cleared by 4.4.3, not no-fix", advs, mal)
	}
	b.db.QueryRow(t, `SELECT advisories FROM component_results WHERE code = 'gone-bad'`).Scan(&advs)
	if len(advs) != 1 || advs[0].ClearedBy != "" || !advs[0].NoFix {
		t.Errorf("gone-bad's advisories %+v, want %s affecting every release: no fix", advs, allBad)
	}
	var cleared string
	b.db.QueryRow(t, `SELECT payload->'advisory'->>'cleared_by' FROM notification_events WHERE key = $1`,
		"malicious_package:dbg@4.4.2/"+mal).Scan(&cleared)
	if cleared != "4.4.3" {
		t.Errorf("the malicious_package event's advisory cleared_by %q, want 4.4.3 (channel %d, events %v)", cleared, channel, b.events())
	}

	// The summary's attention items say the way out too (the banner and
	// the dashboard word it from cleared_by), and "no way out" where
	// there is none.
	sum, err := b.store.Summary(context.Background(), store.LocalSite, readmodel.DevSeparate)
	if err != nil {
		t.Fatal(err)
	}
	ways := map[string]string{}
	for _, a := range sum.Attention {
		if a.Advisory != nil {
			ways[a.Code] = "none"
			if a.Advisory.ClearedBy != nil {
				ways[a.Code] = *a.Advisory.ClearedBy
			}
		}
	}
	if ways["dbg"] != "4.4.3" || ways["gone-bad"] != "none" {
		t.Errorf("the summary's attention items clear by %v, want dbg by 4.4.3 and gone-bad by none", ways)
	}

	// 4.4.3 is the way out: the page, the API and the CLI (all through
	// updatecheck.Skips) refuse to skip it, in words.
	_, err = updatecheck.NewSkips(b.checker).Skip(context.Background(), updatecheck.SkipRequest{Site: store.LocalSite, Code: "dbg", Version: "4.4.3",
		Reason: "breaks our build", By: readmodel.ActorCLI})
	if !errors.Is(err, updatecheck.ErrSkipWayOut) {
		t.Errorf("skipping 4.4.3, the only clean release of a malicious package: %v, want ErrSkipWayOut", err)
	}
}

// The offer leads with the smallest release that clears the advisories:
// nxt 14.1.0's advisory is fixed in 14.1.1 while 16.5.0 is the newest, two
// majors on; the catalog, its command and the detail say 14.1.1 first,
// and the newest as a new major version.
func TestSmallestFixBesideTheNewest(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: time.Hour})
	reg := npmreg.New(t)
	day := func(n int) time.Time { return time.Date(2026, 1, n, 0, 0, 0, 0, time.UTC) }
	reg.Publish("@acme/core", "2.0.0", map[string]npmreg.Version{"2.0.0": {Published: day(1)}})
	reg.Publish("nxt", "16.5.0", map[string]npmreg.Version{"14.1.0": {Published: day(2)}, "14.1.1": {Published: day(3)},
		"15.0.0": {Published: day(4)}, "16.5.0": {Published: day(5)}})
	const ghsa = "GHSA-fr5h-rqp8-mj6g"
	npmFeedSite(b, reg, map[string]string{"nxt": "14.1.0"},
		osvRecord(ghsa, "nxt", `[{"type": "SEMVER", "events": [{"introduced": "13.4.0"}, {"fixed": "14.1.1"}, {"introduced": "15.0.0"}, {"fixed": "15.0.1"}]}]`))
	securityChannel(b)
	b.check()
	ctx := context.Background()
	reads := catalog.New(b.store)
	entries, _, err := catalog.ReadPage(ctx, b.store, store.CatalogFilter{Search: "nxt", Limit: 10})
	if err != nil || len(entries) != 1 {
		t.Fatalf("catalog: %v, %v", entries, err)
	}
	row := entries[0].CatalogRow
	if row.UpdateVersion != "16.5.0" || row.FixVersion != "14.1.1" || row.FixCommand != "npm install nxt@14.1.1" || !row.Security {
		t.Errorf("nxt: update %q, fix %q (%q), security %v; want 16.5.0, 14.1.1 (npm install nxt@14.1.1), true",
			row.UpdateVersion, row.FixVersion, row.FixCommand, row.Security)
	}
	d, err := reads.Detail(ctx, "nxt")
	if err != nil {
		t.Fatal(err)
	}
	if d.FixVersion != "14.1.1" || !slices.Equal(d.FixIDs, []string{ghsa}) {
		t.Errorf("detail fix %q, fix ids %v; want 14.1.1 clearing %s", d.FixVersion, d.FixIDs, ghsa)
	}
	if want := "update to 14.1.1 — fixes " + ghsa + "; 16.5.0 (a new major version: 14 → 16) is the newest this site takes"; readmodel.FixText(row.Installed, row.FixVersion, row.UpdateVersion, d.FixIDs) != want {
		t.Errorf("words %q, want %q", readmodel.FixText(row.Installed, row.FixVersion, row.UpdateVersion, d.FixIDs), want)
	}
	var fix string
	b.db.QueryRow(t, `SELECT coalesce(payload->>'fix_version', '') FROM notification_events WHERE key = 'security_update.available:nxt@14.1.1'`).Scan(&fix)
	if fix != "14.1.1" {
		t.Errorf("security event's fix_version %q, want 14.1.1 (events %v)", fix, b.events())
	}
}
