package notify_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/manifest"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/npmreg"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// The registry's facts are queued with the check that finds them, once
// per channel: a deprecated installed version (deprecated), an update that
// lost the installed version's provenance and one published by an account
// new to the package (trust_downgrade, of kinds provenance_lost and
// new_publisher) and, after a key
// rotation, the registry's new keys (registry_keys.changed); the keys seen
// first are pinned without an event.
func TestNpmTrustEventsAreQueued(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: time.Hour})
	ctx := context.Background()
	reg := npmreg.New(t)
	day := func(n int) time.Time { return time.Date(2026, 1, n, 0, 0, 0, 0, time.UTC) }
	reg.Publish("@acme/core", "2.0.0", map[string]npmreg.Version{"2.0.0": {Published: day(1)}})
	reg.Publish("@acme/blog", "1.1.0", map[string]npmreg.Version{
		"1.0.0": {Published: day(2), Provenance: true}, "1.1.0": {Published: day(3)}})
	reg.Publish("@acme/shop", "1.1.0", map[string]npmreg.Version{
		"1.0.0": {Published: day(2), Publisher: "alice"}, "1.1.0": {Published: day(3), Publisher: "mallory"}})
	reg.Publish("old-widget", "1.0.0", map[string]npmreg.Version{"1.0.0": {Published: day(2), Deprecated: "use @acme/widget"}})
	u, err := npm.ParseRegistryURL(reg.URL)
	if err != nil {
		t.Fatal(err)
	}
	b.checker.UseNpm(&npm.Client{Fetcher: b.fetcher, Registries: npm.Registries{Default: u}})
	m := &manifest.Manifest{Components: []manifest.Component{
		{Code: "core", Name: "Core", Version: "2.0.0", Source: "npm:@acme/core"},
		{Code: "acme--blog", Name: "Blog", Version: "1.0.0", Source: "npm:@acme/blog"},
		{Code: "acme--shop", Name: "Shop", Version: "1.0.0", Source: "npm:@acme/shop"},
		{Code: "old-widget", Name: "Old widget", Version: "1.0.0", Source: "npm:old-widget"},
	}}
	if _, err := updatecheck.NewSyncer(b.checker).Sync(ctx, m); err != nil {
		t.Fatal(err)
	}
	added, err := b.notify.AddChannel(ctx, store.NewChannel{Name: "ops", Kind: "slack", Target: "http://127.0.0.1:1/", Events: "security"})
	if err != nil {
		t.Fatal(err)
	}
	b.check()
	b.check()
	prefix := func(id int64) string { return fmt.Sprint(id) + " " }
	want := map[string]bool{
		prefix(added.ID) + "deprecated:old-widget@1.0.0":                      true,
		prefix(added.ID) + "trust_downgrade:acme--blog@1.1.0/provenance_lost": true,
		prefix(added.ID) + "trust_downgrade:acme--shop@1.1.0/new_publisher":   true,
	}
	got := b.events()
	for k := range want {
		if _, ok := got[k]; !ok {
			t.Errorf("no event %q; events %v", k, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("events %v, want exactly %v (keys seen first are pinned, not notified)", got, want)
	}
	var kind, version, account string
	b.db.QueryRow(t, `SELECT payload->>'kind', payload->>'version', payload->>'account' FROM notification_events
		WHERE key = 'trust_downgrade:acme--shop@1.1.0/new_publisher'`).Scan(&kind, &version, &account)
	if kind != "new_publisher" || version != "1.1.0" || account != "mallory" {
		t.Errorf("the new publisher's payload: kind %q, version %q, account %q", kind, version, account)
	}
	reg.Rotate()
	b.check()
	b.check()
	changed := 0
	for k := range b.events() {
		if strings.HasPrefix(k, prefix(added.ID)+"registry_keys.changed:") {
			changed++
		}
	}
	if changed != 1 {
		t.Errorf("%d registry_keys.changed events after a rotation and two checks, want 1: %v", changed, b.events())
	}
}
