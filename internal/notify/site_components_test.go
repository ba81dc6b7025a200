package notify_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/npm"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/feedserver"
	"github.com/upcheck/upcheck/internal/testing/npmreg"
	"github.com/upcheck/upcheck/internal/testing/wait"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// A registered site's components are told to the channels that see the
// site (docs/notifications.md "Sites"): shop and blog install widget
// 1.0.0, whose 1.1.0 fixes an advisory. shop's channels (a signed
// webhook, a chat) each receive one security_update.available naming
// shop, and nothing of blog's; each channel of the fleet (a webhook, a
// chat, an email through a real mail server) ONE digest naming blog and
// shop, not one per site; the local channel nothing (the local site
// installs no widget). Planned again by another check, nothing new is
// queued; a third site's push of the same version is a digest of its
// own to the fleet.
func TestSiteComponentEventsNameTheirSite(t *testing.T) {
	t.Parallel()
	mails, settings := startMailServer(t)
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: time.Hour}, notify.WithSMTP(settings))
	ctx := context.Background()
	reg := npmreg.New(t)
	day := func(n int) time.Time { return time.Date(2026, 1, n, 0, 0, 0, 0, time.UTC) }
	reg.Publish("widget", "1.1.0", map[string]npmreg.Version{"1.0.0": {Published: day(1)}, "1.1.0": {Published: day(2)}})
	u, err := npm.ParseRegistryURL(reg.URL)
	if err != nil {
		t.Fatal(err)
	}
	b.checker.UseNpm(&npm.Client{Fetcher: b.fetcher, Registries: npm.Registries{Default: u}})
	fs := feedserver.New(t)
	fs.SetRecords(osvRecords(osvRecord("GHSA-0000-0000-0001", "unrelated", "", "1.0.0")))
	b.checker.UseFeeds(updatecheck.NewFeeds(b.checker, []feed.Feed{{Kind: readmodel.FeedOSV, URL: fs.ArchiveURL()}}, t.TempDir()))
	shop, blog := addSite(b, "shop"), addSite(b, "blog")
	fleetRcv, fleetURL := newBodyReceiver(t)
	shopRcv, shopURL := newBodyReceiver(t)
	localRcv, localURL := newBodyReceiver(t)
	fleet := webhookChannel(b, fleetRcv, fleetURL, readmodel.ScopeFleet)
	webhookChannel(b, shopRcv, shopURL, readmodel.ScopeSites, shop.ID)
	webhookChannel(b, localRcv, localURL, readmodel.ScopeLocal)
	shopChat, fleetChat := &chatReceiver{}, &chatReceiver{}
	for _, r := range []*chatReceiver{shopChat, fleetChat} {
		srv := httptest.NewServer(r)
		t.Cleanup(srv.Close)
		c := store.NewChannel{Name: "chat", Kind: "slack", Target: srv.URL, Events: "security", Scope: readmodel.ScopeFleet}
		if r == shopChat {
			c.Scope, c.SiteIDs = readmodel.ScopeSites, []int64{shop.ID}
		}
		if _, err := b.notify.AddChannel(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.notify.AddChannel(ctx, store.NewChannel{Name: "fleet mail", Kind: "email", Target: "ops@example.org", Events: "security",
		Scope: readmodel.ScopeFleet}); err != nil {
		t.Fatal(err)
	}

	pushLock(b, shop, "widget@1.0.0")
	pushLock(b, blog, "widget@1.0.0")
	const ghsa = "GHSA-wwww-wwww-wwww"
	fs.SetRecords(osvRecords(osvRecord(ghsa, "widget", `[{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": "1.1.0"}]}]`)))
	b.check()

	const update = string(readmodel.EventSecurityUpdate)
	componentEvents := func() []string {
		var out []string
		for k := range b.events() {
			if _, key, _ := strings.Cut(k, " "); strings.HasPrefix(key, update) {
				out = append(out, k)
			}
		}
		slices.Sort(out)
		return out
	}
	first := componentEvents()
	if len(first) != 5 {
		t.Errorf("security updates queued: %v; want shop's on its 2 channels and one digest on each of the fleet's 3", first)
	}
	var digests int
	b.db.QueryRow(t, `SELECT count(*) FROM notification_events WHERE channel_id = $1 AND type = $2`, fleet, update).Scan(&digests)
	if digests != 1 {
		t.Errorf("the fleet's webhook has %d security updates, want one digest", digests)
	}
	b.check()
	if again := componentEvents(); !slices.Equal(again, first) {
		t.Errorf("planned again by another check: %v, want %v", again, first)
	}

	b.deliver()
	wait.For(t, "the events delivered", wait.Guard, func() (bool, error) {
		var pending int
		b.db.QueryRow(t, `SELECT count(*) FROM notification_events WHERE state <> 'delivered'`).Scan(&pending)
		return pending == 0, wait.Notf("%d events not delivered", pending)
	})
	of := func(r *bodyReceiver) []receivedEvent {
		var out []receivedEvent
		for _, e := range r.events() {
			if e.Type == update {
				out = append(out, e)
			}
		}
		return out
	}
	if got := of(shopRcv); len(got) != 1 || got[0].Data.Site != "shop" || strings.Contains(got[0].raw, "blog") {
		t.Errorf("shop's webhook received %+v; want one security update naming shop", got)
	}
	if got := of(fleetRcv); len(got) != 1 || !slices.Equal(got[0].Data.Sites, []string{"blog", "shop"}) || got[0].Data.SiteCount != 2 {
		t.Errorf("the fleet's webhook received %+v; want one security update naming blog and shop", got)
	}
	if got := of(localRcv); len(got) != 0 {
		t.Errorf("the local site's channel received %+v; the local site installs no widget", got)
	}
	chatOf := func(r *chatReceiver) []string {
		var out []string
		for _, p := range r.posts() {
			if strings.Contains(p, "security update for") {
				out = append(out, p)
			}
		}
		return out
	}
	if posts := chatOf(shopChat); len(posts) != 1 || !strings.HasPrefix(posts[0], "upcheck: site shop: security update for") {
		t.Errorf("shop's chat received %q; want one post naming shop", posts)
	}
	if posts := chatOf(fleetChat); len(posts) != 1 || !strings.HasPrefix(posts[0], "upcheck: on 2 sites: security update for") ||
		!strings.Contains(posts[0], "Sites: blog, shop") {
		t.Errorf("the fleet's chat received %q; want one post naming blog and shop", posts)
	}
	sent := mails.accepted()
	var text string
	for _, m := range sent {
		text += parseMail(t, m.raw).Text
	}
	if strings.Count(text, "Security update for") != 1 || !strings.Contains(text, "on 2 sites: Security update for") ||
		!strings.Contains(text, "Sites: blog, shop") {
		t.Errorf("the fleet's email: %s", text)
	}

	// A third site installing the same version: a digest of its own.
	cafe := addSite(b, "cafe")
	pushLock(b, cafe, "widget@1.0.0")
	b.check()
	var names []string
	b.db.QueryRow(t, `SELECT array_agg(payload->'sites'->>0 ORDER BY created_at) FROM notification_events WHERE channel_id = $1 AND type = $2`,
		fleet, update).Scan(&names)
	if !slices.Equal(names, []string{"blog", "cafe"}) {
		t.Errorf("the fleet's digests name first %v; want blog's and shop's, then cafe's alone", names)
	}

	// The registry deprecates 1.0.0: a check's write of the document
	// (pipelined: nothing else of the source changed) finds the events
	// to queue, shop's and the fleet's digest naming the three sites.
	reg.Publish("widget", "1.1.0", map[string]npmreg.Version{"1.0.0": {Published: day(1), Deprecated: "use 1.1.0"}, "1.1.0": {Published: day(2)}})
	b.check()
	var deprecated []string
	for k := range b.events() {
		if _, key, _ := strings.Cut(k, " "); strings.HasPrefix(key, string(readmodel.EventDeprecated)) {
			deprecated = append(deprecated, k)
		}
	}
	if len(deprecated) != 5 {
		t.Errorf("deprecations queued: %v; want shop's on its 2 channels and one digest on each of the fleet's 3", deprecated)
	}
	b.db.QueryRow(t, `SELECT array_agg(s ORDER BY s) FROM notification_events, jsonb_array_elements_text(payload->'sites') s
		WHERE channel_id = $1 AND type = $2`, fleet, readmodel.EventDeprecated).Scan(&names)
	if !slices.Equal(names, []string{"blog", "cafe", "shop"}) {
		t.Errorf("the fleet's deprecation names %v; want blog, cafe and shop", names)
	}

	// A channel of blog added now is told at once of what is outstanding
	// on blog's components, naming blog.
	added, err := b.notify.AddChannel(ctx, store.NewChannel{Name: "blog", Kind: "webhook", Target: "http://127.0.0.1:1/blog", Events: "security",
		Scope: readmodel.ScopeSites, SiteIDs: []int64{blog.ID}})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	b.db.QueryRow(t, `SELECT array_agg(key ORDER BY key) FROM notification_events WHERE channel_id = $1 AND payload->>'site' = 'blog'`,
		added.ID).Scan(&keys)
	if !slices.Equal(keys, []string{"deprecated@blog:widget@1.0.0", "security_update.available@blog:widget@1.1.0"}) {
		t.Errorf("blog's new channel was queued %v; want blog's deprecation and security update", keys)
	}
}
