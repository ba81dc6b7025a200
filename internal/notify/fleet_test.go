package notify_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/feed"
	"github.com/upcheck/upcheck/internal/notify"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/feedserver"
	"github.com/upcheck/upcheck/internal/testing/wait"
	"github.com/upcheck/upcheck/internal/updatecheck"
)

// bodyReceiver is a webhook receiver that keeps each verified event's
// body, by webhook-id (a send again after a crash is one event).
type bodyReceiver struct {
	mu     sync.Mutex
	secret string
	got    map[string][]byte
	bad    int
}

func newBodyReceiver(t *testing.T) (*bodyReceiver, string) {
	r := &bodyReceiver{got: map[string][]byte{}}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return r, srv.URL
}

func (r *bodyReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	ts, _ := strconv.ParseInt(req.Header.Get("webhook-timestamp"), 10, 64)
	r.mu.Lock()
	defer r.mu.Unlock()
	id := req.Header.Get("webhook-id")
	if !notify.Verify(r.secret, id, ts, body, req.Header.Get("webhook-signature")) {
		r.bad++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	r.got[id] = body
	w.WriteHeader(http.StatusNoContent)
}

// events are the bodies received, as {type, data}.
func (r *bodyReceiver) events() []receivedEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []receivedEvent
	for _, b := range r.got {
		var e receivedEvent
		if err := json.Unmarshal(b, &e); err != nil {
			panic(err)
		}
		e.raw = string(b)
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b receivedEvent) int { return strings.Compare(a.raw, b.raw) })
	return out
}

type receivedEvent struct {
	Type string `json:"type"`
	Data struct {
		Package   string   `json:"package"`
		Version   string   `json:"version"`
		Site      string   `json:"site"`
		Sites     []string `json:"sites"`
		SiteCount int      `json:"site_count"`
		Malicious bool     `json:"malicious"`
		Advisory  struct {
			ID string `json:"id"`
		} `json:"advisory"`
	} `json:"data"`
	raw string
}

// addSite registers a site as `upcheck site add` does (its token's hash).
func addSite(b *bundle, name string) store.Site {
	b.t.Helper()
	hash := sha256.Sum256([]byte("ups_" + name))
	s, err := b.store.SiteCreate(context.Background(), name, "", hash[:])
	if err != nil {
		b.t.Fatal(err)
	}
	return s
}

// pushLock pushes a package-lock.json installing each name@version of
// pkgs as site's lockfile, through the push's own path (Checker.Push).
func pushLock(b *bundle, site store.Site, pkgs ...string) {
	b.t.Helper()
	deps, entries := []string{}, []string{}
	for _, p := range pkgs {
		name, version, _ := strings.Cut(p, "@")
		deps = append(deps, fmt.Sprintf("%q: %q", name, version))
		entries = append(entries, fmt.Sprintf(`"node_modules/%s": {"version": %q, "resolved": "https://registry.invalid/%s/-/%s-%s.tgz"}`,
			name, version, name, name, version))
	}
	lock := fmt.Sprintf(`{"name": %q, "lockfileVersion": 3, "packages": {"": {"name": %q, "dependencies": {%s}}, %s}}`,
		site.Name, site.Name, strings.Join(deps, ", "), strings.Join(entries, ", "))
	if _, err := b.checker.Push(context.Background(), site, "package-lock.json", []byte(lock)); err != nil {
		b.t.Fatalf("push of %s: %v", site.Name, err)
	}
}

// webhookChannel adds a webhook channel of scope (with sites) to a
// receiver; its id.
func webhookChannel(b *bundle, r *bodyReceiver, url string, scope readmodel.ChannelScope, sites ...int64) int64 {
	b.t.Helper()
	created, err := b.notify.AddChannel(context.Background(), store.NewChannel{Name: string(scope), Kind: "webhook", Target: url, Events: "security",
		Scope: scope, SiteIDs: sites})
	if err != nil {
		b.t.Fatal(err)
	}
	r.mu.Lock()
	r.secret = created.Secret
	r.mu.Unlock()
	return created.ID
}

// chatReceiver is a Slack-style incoming webhook: it keeps each post's
// text.
type chatReceiver struct {
	mu    sync.Mutex
	texts []string
}

func (r *chatReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var post struct{ Text string }
	if err := json.NewDecoder(req.Body).Decode(&post); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.texts = append(r.texts, post.Text)
	r.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (r *chatReceiver) posts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.texts)
}

// Two sites install the same version, then the feeds say it is
// malicious: each channel of the fleet (a signed webhook, a chat, an
// email through a real mail server) receives ONE fleet.finding naming
// both sites, not one per site; the channel of the site shop receives
// shop's tree.finding and nothing of blog's; the local channel nothing
// (the local site installs no tree). Planned again (every site's tree
// evaluated again, then another check, then shop's push again with evil
// still in it), nothing new is queued.
func TestFleetDigestNamesEverySiteOnce(t *testing.T) {
	t.Parallel()
	mails, settings := startMailServer(t)
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: time.Hour}, notify.WithSMTP(settings))
	ctx := context.Background()
	fs := feedserver.New(t)
	fs.SetRecords(osvRecords(osvRecord("GHSA-0000-0000-0001", "unrelated", "", "1.0.0")))
	b.checker.UseFeeds(updatecheck.NewFeeds(b.checker, []feed.Feed{{Kind: readmodel.FeedOSV, URL: fs.ArchiveURL()}}, t.TempDir()))
	shop, blog := addSite(b, "shop"), addSite(b, "blog")
	fleetRcv, fleetURL := newBodyReceiver(t)
	shopRcv, shopURL := newBodyReceiver(t)
	blogRcv, blogURL := newBodyReceiver(t)
	localRcv, localURL := newBodyReceiver(t)
	fleet := webhookChannel(b, fleetRcv, fleetURL, readmodel.ScopeFleet)
	webhookChannel(b, shopRcv, shopURL, readmodel.ScopeSites, shop.ID)
	webhookChannel(b, blogRcv, blogURL, readmodel.ScopeSites, blog.ID)
	local := webhookChannel(b, localRcv, localURL, readmodel.ScopeLocal)
	// The fleet's digest in a chat and in an email too.
	chat := &chatReceiver{}
	chatSrv := httptest.NewServer(chat)
	t.Cleanup(chatSrv.Close)
	for _, c := range []store.NewChannel{
		{Name: "fleet chat", Kind: "slack", Target: chatSrv.URL, Events: "security", Scope: readmodel.ScopeFleet},
		{Name: "fleet mail", Kind: "email", Target: "ops@example.org", Events: "security", Scope: readmodel.ScopeFleet},
	} {
		if _, err := b.notify.AddChannel(ctx, c); err != nil {
			t.Fatal(err)
		}
	}

	pushLock(b, shop, "evil@1.0.0", "fine@2.0.0")
	pushLock(b, blog, "evil@1.0.0")
	const mal = "MAL-2026-0300"
	fs.SetRecords(osvRecords(osvRecord(mal, "evil", "", "1.0.0")))
	b.check()

	count := func() (n int) {
		b.db.QueryRow(t, `SELECT count(*) FROM notification_events WHERE type <> 'test'`).Scan(&n)
		return n
	}
	if n := count(); n != 5 {
		t.Errorf("%d events queued (%v), want 5: the fleet's digest on each of its 3 channels, shop's and blog's", n, b.events())
	}
	var fleetEvents int
	b.db.QueryRow(t, `SELECT count(*) FROM notification_events WHERE channel_id = $1`, fleet).Scan(&fleetEvents)
	if fleetEvents != 1 {
		t.Errorf("the fleet's channel has %d events, want one digest", fleetEvents)
	}

	// Planned again: every site's tree evaluated again (as after a crash
	// before the evaluation recorded them), then another check.
	b.db.MustExec(t, `UPDATE tree_state SET evaluated_hash = NULL`)
	if wrote, err := b.checker.EvaluateTree(ctx); err != nil || !wrote {
		t.Fatalf("EvaluateTree = %v, %v", wrote, err)
	}
	b.check()
	if n := count(); n != 5 {
		t.Errorf("planned again: %d events (%v), want the 5", n, b.events())
	}
	// shop pushes again, evil still installed beside a new package: its
	// tree moved, and evil is not new to it.
	pushLock(b, shop, "evil@1.0.0", "fine@2.0.0", "other@1.0.0")
	if n := count(); n != 5 {
		t.Errorf("after shop's push again: %d events (%v), want the 5", n, b.events())
	}

	b.deliver()
	wait.For(t, "the events delivered", wait.Guard, func() (bool, error) {
		var pending int
		b.db.QueryRow(t, `SELECT count(*) FROM notification_events WHERE state <> 'delivered'`).Scan(&pending)
		return pending == 0, wait.Notf("%d events not delivered", pending)
	})

	got := fleetRcv.events()
	if len(got) != 1 || got[0].Type != string(readmodel.EventFleetFinding) || got[0].Data.Package != "evil" || got[0].Data.Advisory.ID != mal ||
		!slices.Equal(got[0].Data.Sites, []string{"blog", "shop"}) || got[0].Data.SiteCount != 2 || !got[0].Data.Malicious {
		t.Errorf("the fleet's channel received %+v; want one fleet.finding of evil naming blog and shop", got)
	}
	for _, c := range []struct {
		rcv  *bodyReceiver
		site string
	}{{shopRcv, "shop"}, {blogRcv, "blog"}} {
		got := c.rcv.events()
		if len(got) != 1 || got[0].Type != string(readmodel.EventTreeFinding) || got[0].Data.Site != c.site || got[0].Data.Package != "evil" {
			t.Errorf("%s's channel received %+v; want its own tree.finding of evil", c.site, got)
		}
		other := map[string]string{"shop": "blog", "blog": "shop"}[c.site]
		for _, e := range got {
			if strings.Contains(e.raw, `"`+other+`"`) {
				t.Errorf("%s's channel was told of %s: %s", c.site, other, e.raw)
			}
		}
	}
	if got := localRcv.events(); len(got) != 0 {
		t.Errorf("the local site's channel %d received %+v; the local site installs none of it", local, got)
	}
	for _, r := range []*bodyReceiver{fleetRcv, shopRcv, blogRcv} {
		r.mu.Lock()
		if r.bad != 0 {
			t.Errorf("%d badly signed requests", r.bad)
		}
		r.mu.Unlock()
	}
	if posts := chat.posts(); len(posts) != 1 || !strings.Contains(posts[0], "evil 1.0.0 is malicious (MAL-2026-0300) on 2 sites: blog, shop") {
		t.Errorf("the fleet's chat received %q; want one post naming blog and shop", posts)
	}
	if sent := mails.accepted(); len(sent) != 1 {
		t.Errorf("the fleet's email channel was sent %d messages, want one", len(sent))
	} else if m := parseMail(t, sent[0].raw); !strings.Contains(m.Text, "on 2 sites: blog, shop") || strings.Count(m.Text, "MAL-2026-0300") != 1 {
		t.Errorf("the fleet's email: %q\n%s", m.Subject, m.Text)
	}
}

// A registered site's look-back finding is sent to the channels that see
// its site, naming it: shop installed evil 1.0.0 and removed it before
// the feeds named it malicious; shop's channel and the fleet's get a
// tree.exposed naming shop, blog's channel and the local one nothing.
func TestASiteExposureIsSentToItsChannels(t *testing.T) {
	t.Parallel()
	b := setup(t, notify.Timings{Delivery: 4 * time.Second, Backoff: time.Hour})
	fs := feedserver.New(t)
	fs.SetRecords(osvRecords(osvRecord("GHSA-0000-0000-0001", "unrelated", "", "1.0.0")))
	b.checker.UseFeeds(updatecheck.NewFeeds(b.checker, []feed.Feed{{Kind: readmodel.FeedOSV, URL: fs.ArchiveURL()}}, t.TempDir()))
	shop, blog := addSite(b, "shop"), addSite(b, "blog")
	channels := map[string]int64{}
	for name, c := range map[string]store.NewChannel{
		"shop":  {Scope: readmodel.ScopeSites, SiteIDs: []int64{shop.ID}},
		"blog":  {Scope: readmodel.ScopeSites, SiteIDs: []int64{blog.ID}},
		"fleet": {Scope: readmodel.ScopeFleet},
		"local": {},
	} {
		c.Name, c.Kind, c.Target, c.Events = name, "webhook", "http://127.0.0.1:1/"+name, "security"
		created, err := b.notify.AddChannel(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		channels[name] = created.ID
	}
	pushLock(b, shop, "evil@1.0.0", "fine@2.0.0")
	pushLock(b, shop, "fine@2.0.0")
	pushLock(b, blog, "fine@2.0.0")
	fs.SetRecords(osvRecords(osvRecord("MAL-2026-0301", "evil", "", "1.0.0")))
	b.check()

	got := map[string]string{}
	for key := range b.events() {
		if id, k, _ := strings.Cut(key, " "); strings.HasPrefix(k, string(readmodel.EventTreeExposed)) {
			for name, ch := range channels {
				if strconv.FormatInt(ch, 10) == id {
					got[name] = k
				}
			}
		}
	}
	if len(got) != 2 || !strings.HasPrefix(got["shop"], "tree.exposed@shop:evil@1.0.0/MAL-2026-0301@") ||
		!strings.HasPrefix(got["fleet"], "tree.exposed@shop:evil@1.0.0/MAL-2026-0301@") {
		t.Errorf("tree.exposed events by channel: %v; want shop's and the fleet's, naming shop", got)
	}
	var payload string
	b.db.QueryRow(t, `SELECT payload->>'site' FROM notification_events WHERE channel_id = $1 AND type = $2`,
		channels["shop"], readmodel.EventTreeExposed).Scan(&payload)
	if payload != "shop" {
		t.Errorf("shop's exposure names the site %q", payload)
	}
}
