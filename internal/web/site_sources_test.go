package web_test

import (
	"context"
	"maps"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// siteSourcesLock is globex's lockfile: left-pad, which acme installs too,
// and is-even, which acme does not.
const siteSourcesLock = `{"name":"globex-shop","lockfileVersion":3,"requires":true,"packages":{` +
	`"":{"name":"globex-shop","dependencies":{"left-pad":"^1.3.0","is-even":"^1.0.0"}},` +
	`"node_modules/left-pad":{"version":"1.3.0","resolved":"http://127.0.0.1/left-pad/-/left-pad-1.3.0.tgz"},` +
	`"node_modules/is-even":{"version":"1.0.0","resolved":"http://127.0.0.1/is-even/-/is-even-1.0.0.tgz"}}}`

// sourceRows are a Sources page's rows: each source's URL and its state
// (data-state).
func sourceRows(body string) map[string]string {
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`data-testid="source-row" data-url="([^"]+)" data-state="([^"]+)"`).FindAllStringSubmatch(body, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// A registered site's Sources page (/sites/NAME/sources) and its JSON
// (/api/sites/NAME/sources, the body /api/admin/sources gives, as
// openapi.json describes it: client.do checks every answer) list exactly
// the sources its components use, with their state and the site's count
// of components: not the local site's, not another registered site's.
// The page is in the site's navigation and says its states in words; its
// feeds are the fleet's, a feed's URL masked for a viewer as on the local
// site's page; it offers no document import (the local site's route),
// which the local page offers a manager. A site the principal may not
// see is TestSiteRoutesRefuseSitesNotSeen's; /sites/local/sources
// redirects (TestSitePagesShowThePushedTree).
func TestSiteSourcesPageAndAPI(t *testing.T) {
	t.Parallel()
	b := sitePagesBundle(t)
	ctx := context.Background()
	token, _, err := b.auth.RotateSiteToken(ctx, "globex")
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "globex's push", b.anonymous().do("PUT", "/api/sites/globex/lockfile?name=package-lock.json", siteSourcesLock,
		"application/octet-stream", map[string]string{"Authorization": "Bearer " + token}), http.StatusOK)
	b.db.MustExec(t, `INSERT INTO sources (url, epoch, last_attempt_at, last_error, last_error_kind, last_error_at, consecutive_failures)
		VALUES ('npm:left-pad', 1, clock_timestamp(), 'fetch: 503 Service Unavailable', 'http_status', clock_timestamp(), 2)
		ON CONFLICT (url) DO UPDATE SET last_error = excluded.last_error, last_error_kind = excluded.last_error_kind,
			last_error_at = excluded.last_error_at, consecutive_failures = 2`)
	// A component of a kind a document import serves (an offline source),
	// which a push never writes but a site's rows may hold: its page still
	// offers no import.
	b.db.MustExec(t, `INSERT INTO components (site_id, code, name, installed_version, source_url)
		VALUES ((SELECT id FROM sites WHERE name = 'acme'), 'mirror', 'Mirror', '1.0.0', 'offline:acme-mirror')`)
	b.db.MustExec(t, `INSERT INTO feeds (kind, url, epoch, last_success_at)
		VALUES ('osv', 'https://mirror.example/osv/all.zip?token=s3cr3t-feed-token', 1, clock_timestamp())
		ON CONFLICT (kind) DO UPDATE SET url = excluded.url, last_success_at = excluded.last_success_at`)
	viewer := b.login("viewer@example.test")
	admin := b.login("admin@example.test")

	var local struct {
		Sources []struct {
			URL string `json:"url"`
		} `json:"sources"`
	}
	viewer.fleetJSON(t, "/api/admin/sources", &local)
	if len(local.Sources) == 0 {
		t.Fatal("the local site lists no source: the test shows nothing")
	}

	for site, want := range map[string]map[string]string{
		"acme":   {"npm:left-pad": "failing", "npm:@types/node": "unfetched", "offline:acme-mirror": "unfetched"},
		"globex": {"npm:left-pad": "failing", "npm:is-even": "unfetched"},
	} {
		page := viewer.do("GET", "/sites/"+site+"/sources", "", "", nil)
		wantStatus(t, site+"'s sources", page, http.StatusOK)
		if got := sourceRows(page.body); !maps.Equal(got, want) {
			t.Errorf("%s's Sources page lists %v; want %v", site, got, want)
		}
		for _, words := range []string{"Failing, 2 times in a row", "Not fetched yet", `data-testid="feed-row"`, "https://mirror.example/…",
			`<a href="/sites/` + site + `">` + site + `</a>`,
			`href="/sites/` + site + `/sources" class="filter active" data-testid="site-nav-link" data-nav="sources" aria-current="page"`} {
			if !strings.Contains(page.body, words) {
				t.Errorf("%s's Sources page lacks %q", site, words)
			}
		}
		if strings.Contains(page.body, "s3cr3t") {
			t.Errorf("%s's Sources page shows a viewer the feed's token", site)
		}
		var sum struct {
			FailingSources int `json:"failing_sources"`
		}
		viewer.fleetJSON(t, "/api/sites/"+site+"/summary", &sum)
		if sum.FailingSources != 1 {
			t.Errorf("%s's summary counts %d failing sources, want its one", site, sum.FailingSources)
		}
		var body struct {
			Sources []struct {
				URL        string `json:"url"`
				Components int    `json:"components"`
				Failing    bool   `json:"failing"`
			} `json:"sources"`
		}
		viewer.fleetJSON(t, "/api/sites/"+site+"/sources", &body)
		got := map[string]bool{}
		for _, s := range body.Sources {
			got[s.URL] = s.Failing
			if s.Components != 1 {
				t.Errorf("%s's %s: %d components; want its own 1", site, s.URL, s.Components)
			}
		}
		if len(got) != len(want) || len(body.Sources) == 0 || body.Sources[0].URL != "npm:left-pad" || !got["npm:left-pad"] {
			t.Errorf("GET /api/sites/%s/sources: %+v; want %v, the failing one first", site, body.Sources, want)
		}
		for url := range want {
			if _, ok := got[url]; !ok {
				t.Errorf("GET /api/sites/%s/sources lacks %s", site, url)
			}
		}
		for _, l := range local.Sources {
			if _, ok := got[l.URL]; ok {
				t.Errorf("GET /api/sites/%s/sources lists the local site's %s", site, l.URL)
			}
		}

		managed := admin.do("GET", "/sites/"+site+"/sources", "", "", nil)
		if strings.Contains(managed.body, `data-testid="source-import"`) || strings.Contains(managed.body, "/admin/sources/import") {
			t.Errorf("%s's Sources page offers an admin the local site's document import", site)
		}
	}
	if p := admin.do("GET", "/admin/sources", "", "", nil); !strings.Contains(p.body, `data-testid="source-import"`) {
		t.Error("the local Sources page offers an admin no import: the test above shows nothing")
	}
	if p := viewer.do("GET", "/sites/acme", "", "", nil); !strings.Contains(p.body, `href="/sites/acme/sources"`) {
		t.Error("acme's overview does not lead to its Sources page")
	}
}
