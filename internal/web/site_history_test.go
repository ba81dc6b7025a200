package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/upcheck/upcheck/internal/auth"
	"github.com/upcheck/upcheck/internal/readmodel"
)

// siteHistoryJSON is GET /api/sites/{site}/history as the tests read it.
type siteHistoryJSON struct {
	Site    string `json:"site"`
	Refusal *struct {
		Input string `json:"input"`
		Path  string `json:"path"`
		Error string `json:"error"`
	} `json:"refusal"`
	RefusalText *string `json:"refusal_text"`
	Pushes      []struct {
		ID        int64  `json:"id"`
		File      string `json:"file"`
		Unchanged bool   `json:"unchanged"`
		Added     int    `json:"added"`
		Removed   int    `json:"removed"`
		Change    string `json:"change"`
	} `json:"pushes"`
	Runs []struct {
		ID int64 `json:"id"`
	} `json:"runs"`
	NextPage *int `json:"next_page"`
}

// push PUTs body as site's package-lock.json with its push token.
func (b *bundle) push(token, site, body string) response {
	b.t.Helper()
	return b.anonymous().do("PUT", "/api/sites/"+site+"/lockfile?name=package-lock.json", body, "application/octet-stream",
		map[string]string{"Authorization": "Bearer " + token})
}

// historyJSON reads path's JSON into a siteHistoryJSON.
func (c *client) historyJSON(t *testing.T, path string) siteHistoryJSON {
	t.Helper()
	r := c.do("GET", path, "", "", nil)
	wantStatus(t, path, r, http.StatusOK)
	var out siteHistoryJSON
	if err := json.Unmarshal([]byte(r.body), &out); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

var (
	pushRowRe   = regexp.MustCompile(`data-testid="site-push-row" data-id="(\d+)"`)
	pushWordsRe = regexp.MustCompile(`data-testid="site-push-change">([^<]*)<`)
	runRowRe    = regexp.MustCompile(`data-testid="history-row" data-id="(\d+)"`)
)

// A registered site's history lists its accepted pushes, newest first,
// each with what it changed in readmodel's words: its own only, not
// another site's, nor those of a removed site whose name was registered
// again; the JSON twin says the same and pages them; the fleet's checks
// are listed from the site's registration on, with the sentence that
// they are the fleet's. The site's navigation leads there and the
// switcher keeps the History page; /sites/local/history and
// /api/sites/local/history lead to today's URLs.
func TestSiteHistoryListsItsPushes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	admin := b.login("admin@example.test")
	wantStatus(t, "a check before acme is registered", admin.postCheck(true), http.StatusOK)
	acme, _, err := b.auth.AddSite(ctx, "acme", "Acme")
	if err != nil {
		t.Fatal(err)
	}
	globex, _, err := b.auth.AddSite(ctx, "globex", "Globex")
	if err != nil {
		t.Fatal(err)
	}
	old, _, err := b.auth.AddSite(ctx, "reborn", "")
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "reborn's first life's push", b.push(old, "reborn", sitePagesLock), http.StatusOK)
	if _, err := b.auth.RemoveSite(ctx, "reborn"); err != nil {
		t.Fatal(err)
	}
	reborn, _, err := b.auth.AddSite(ctx, "reborn", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct{ token, site, body string }{
		{acme, "acme", sitePagesLock}, {globex, "globex", sitePagesLock}, {acme, "acme", sitePagesLock},
		{acme, "acme", pushedLock}, {reborn, "reborn", pushedLock},
	} {
		wantStatus(t, p.site+"'s push", b.push(p.token, p.site, p.body), http.StatusOK)
	}
	// A second check, refused by the cooldown: a run since acme was
	// registered all the same.
	admin.postCheck(true)

	viewer := b.login("viewer@example.test")
	page := viewer.do("GET", "/sites/acme/history", "", "", nil)
	wantStatus(t, "acme's history", page, http.StatusOK)
	ids := pushRowRe.FindAllStringSubmatch(page.body, -1)
	words := pushWordsRe.FindAllStringSubmatch(page.body, -1)
	want := []string{"1 package removed; 1 version no longer installed", readmodel.SitePushUnchangedText,
		"2 packages added; 2 versions installed"}
	if len(ids) != len(want) || len(words) != len(want) {
		t.Fatalf("acme's history lists %d pushes, want %d: %.4000s", len(ids), len(want), page.body)
	}
	for i := range want {
		if words[i][1] != want[i] {
			t.Errorf("acme's push %d says %q, want %q", i, words[i][1], want[i])
		}
		if cur, prev := atoi(t, ids[i][1]), atoi(t, ids[max(i-1, 0)][1]); i > 0 && cur >= prev {
			t.Errorf("acme's pushes are not newest first: %v", ids)
		}
	}
	runs := runRowRe.FindAllStringSubmatch(page.body, -1)
	if len(runs) != 1 || !strings.Contains(page.body, "Checks and feed syncs are the whole fleet’s") {
		t.Errorf("acme's history lists %d runs (want the one since it was registered), or not that they are the fleet's", len(runs))
	}
	for _, want := range []string{`data-nav="history"`, `href="/sites/acme/history" class="filter active" data-testid="site-nav-link" data-nav="history" aria-current="page"`} {
		if !strings.Contains(page.body, want) {
			t.Errorf("acme's history lacks %q", want)
		}
	}
	if links := switchLinks(page.body); links["globex"] != "/sites/globex/history" || links["local"] != "/admin/history" {
		t.Errorf("the switcher on acme's history: %v", links)
	}
	if n := len(pushRowRe.FindAllString(viewer.do("GET", "/sites/reborn/history", "", "", nil).body, -1)); n != 1 {
		t.Errorf("reborn, registered again, lists %d pushes, want its one since", n)
	}

	h := viewer.historyJSON(t, "/api/sites/acme/history")
	if h.Site != "acme" || len(h.Pushes) != 3 || h.Pushes[0].Change != want[0] || h.Pushes[0].Removed != 1 || !h.Pushes[1].Unchanged ||
		h.Pushes[2].Added != 2 || h.Pushes[2].File != "package-lock.json" || h.Refusal != nil || h.RefusalText != nil || len(h.Runs) != 1 || h.NextPage != nil {
		t.Errorf("acme's history JSON: %+v", h)
	}
	var got []int64
	for pg, path := 1, "/api/sites/acme/history?per_page=1"; ; pg++ {
		h := viewer.historyJSON(t, path)
		if len(h.Pushes) != 1 {
			t.Fatalf("page %d of one push: %+v", pg, h)
		}
		got = append(got, h.Pushes[0].ID)
		if h.NextPage == nil {
			break
		}
		if *h.NextPage != pg+1 || pg > 3 {
			t.Fatalf("page %d's next page: %d", pg, *h.NextPage)
		}
		path = "/api/sites/acme/history?per_page=1&page=" + strconv.Itoa(*h.NextPage)
	}
	if len(got) != 3 || got[0] != h.Pushes[0].ID || got[1] != h.Pushes[1].ID || got[2] != h.Pushes[2].ID {
		t.Errorf("the pages of one push: %v; want %+v", got, h.Pushes)
	}
	wantStatus(t, "per_page 0", viewer.do("GET", "/api/sites/acme/history?per_page=0", "", "", nil), http.StatusBadRequest)

	for path, want := range map[string]string{
		"/sites/local/history":                "/admin/history",
		"/api/sites/local/history?per_page=5": "/api/admin/history?per_page=5",
	} {
		r := viewer.do("GET", path, "", "", nil)
		if r.status != http.StatusSeeOther || r.header.Get("Location") != want {
			t.Errorf("GET %s: %d %s; want a redirect to %s", path, r.status, r.header.Get("Location"), want)
		}
	}
	if links := switchLinks(viewer.do("GET", "/admin/history", "", "", nil).body); links["acme"] != "/sites/acme/history" {
		t.Errorf("the switcher on the local history: %v", links)
	}
}

// A refused push (a malformed lockfile, its push token accepted) stands
// on the site's overview, history and history JSON with the 422's words
// until the site's next accepted push removes it; refused pushes hammered
// at once leave one row; a push refused before its token was accepted
// (another site's token) records nothing; the local site reads none of
// it; removing the site removes it.
func TestRefusedPushStandsUntilAccepted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	acme, site, err := b.auth.AddSite(ctx, "acme", "Acme")
	if err != nil {
		t.Fatal(err)
	}
	globex, _, err := b.auth.AddSite(ctx, "globex", "")
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "acme's push", b.push(acme, "acme", sitePagesLock), http.StatusOK)
	wantStatus(t, "globex's token on acme", b.push(globex, "acme", `{"lockfileVersion":3,"packages":`), http.StatusForbidden)
	rows := func() (n int) {
		b.db.QueryRow(t, `SELECT count(*) FROM site_push_refusals WHERE site_id = $1`, site.ID).Scan(&n)
		return n
	}
	if n := rows(); n != 0 {
		t.Fatalf("a push refused before its token was accepted left %d rows", n)
	}

	// Hammered: every refusal is the site's one row.
	var wg sync.WaitGroup
	statuses := make(chan int, 24)
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := `{"lockfileVersion":3,"packages":` + strings.Repeat(" ", i)
			req, _ := http.NewRequest("PUT", b.server.URL+"/api/sites/acme/lockfile?name=package-lock.json", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+acme)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				statuses <- 0
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != http.StatusUnprocessableEntity {
			t.Errorf("a hammered refused push: %d", s)
		}
	}
	if n := rows(); n != 1 {
		t.Errorf("24 refused pushes left %d rows, want 1", n)
	}
	bad := b.push(acme, "acme", `{"lockfileVersion":3,"packages":{"":{"name":"shop"},"node_modules/x":{"version":"1.0.0","integrity":"secret-value!"}}, }`)
	wantStatus(t, "a malformed lockfile", bad, http.StatusUnprocessableEntity)
	var answer struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(bad.body), &answer); err != nil || !strings.Contains(answer.Error, "line 1, column 119") ||
		strings.Contains(answer.Error, "secret-value") {
		t.Fatalf("the 422: %s", bad.body)
	}

	viewer := b.login("viewer@example.test")
	for _, path := range []string{"/sites/acme", "/sites/acme/history"} {
		p := viewer.do("GET", path, "", "", nil)
		if !strings.Contains(p.body, `data-testid="site-push-refused"`) || !strings.Contains(p.body, "The last push was refused just now (package-lock.json): ") ||
			!strings.Contains(p.body, htmlText(strings.TrimSuffix(answer.Error, "."))) {
			t.Errorf("%s does not say the refused push and why (%q)", path, answer.Error)
		}
	}
	var stored string
	b.db.QueryRow(t, `SELECT error FROM site_push_refusals WHERE site_id = $1`, site.ID).Scan(&stored)
	if stored != answer.Error {
		t.Errorf("the refusal stored %q, the 422 said %q", stored, answer.Error)
	}
	h := viewer.historyJSON(t, "/api/sites/acme/history")
	if h.Refusal == nil || h.Refusal.Error != answer.Error || h.Refusal.Input != "lockfile" || h.Refusal.Path != "package-lock.json" ||
		h.RefusalText == nil || !strings.HasPrefix(*h.RefusalText, "The last push was refused") || len(h.Pushes) != 1 {
		t.Errorf("acme's history JSON: %+v", h)
	}
	if p := viewer.do("GET", "/sites/globex", "", "", nil); strings.Contains(p.body, `data-testid="site-push-refused"`) {
		t.Error("globex's overview says acme's refused push")
	}
	type summary struct {
		InputRefusals []struct {
			Input, Path, Error string
		} `json:"input_refusals"`
	}
	if sum := decodeJSON[summary](t, viewer.do("GET", "/api/sites/acme/summary", "", "", nil)); len(sum.InputRefusals) != 1 ||
		sum.InputRefusals[0].Error != answer.Error || sum.InputRefusals[0].Input != "lockfile" {
		t.Errorf("acme's summary's refusals: %+v", sum)
	}
	if sum := decodeJSON[summary](t, viewer.do("GET", "/api/sites/globex/summary", "", "", nil)); len(sum.InputRefusals) != 0 {
		t.Errorf("globex's summary says acme's refused push: %+v", sum)
	}
	local, err := b.store.InputRefusals(ctx)
	if err != nil || len(local) != 0 {
		t.Errorf("the local site reads acme's refusal: %v %v", local, err)
	}
	if p := viewer.do("GET", "/admin", "", "", nil); strings.Contains(p.body, `data-testid="input-refused"`) {
		t.Error("the local dashboard says acme's refused push")
	}

	// The same bytes as the stored tree: accepted, unchanged, and the
	// refusal goes with it.
	wantStatus(t, "acme's push again", b.push(acme, "acme", sitePagesLock), http.StatusOK)
	if n := rows(); n != 0 {
		t.Errorf("an accepted push left %d refusals", n)
	}
	for _, path := range []string{"/sites/acme", "/sites/acme/history"} {
		if p := viewer.do("GET", path, "", "", nil); strings.Contains(p.body, `data-testid="site-push-refused"`) || strings.Contains(p.body, "was refused") {
			t.Errorf("%s still says the refused push", path)
		}
	}
	if h := viewer.historyJSON(t, "/api/sites/acme/history"); h.Refusal != nil || h.RefusalText != nil || len(h.Pushes) != 2 {
		t.Errorf("acme's history JSON after an accepted push: %+v", h)
	}
	if r := viewer.do("GET", "/api/sites/acme/summary", "", "", nil); !strings.Contains(r.body, `"input_refusals":[]`) {
		t.Errorf("acme's summary after an accepted push: %s", r.body)
	}

	// Removing the site removes its refusal.
	wantStatus(t, "a refused push again", b.push(acme, "acme", "{"), http.StatusUnprocessableEntity)
	if _, err := b.auth.RemoveSite(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if n := rows(); n != 0 {
		t.Errorf("a removed site left %d refusals", n)
	}
}

// htmlText is s as templ escapes it in a page's text.
func htmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// atoi is s as a number, failing the test when it is none.
func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A registered site's history lists the fleet's checks, never an
// operator's document import (a local source's), and to a principal that
// may not see the local site it names neither who asked nor the error:
// an operator's email and the local site's source are not the site's.
func TestSiteHistoryRunsAreTheFleetsChecksOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	if _, _, err := b.auth.AddSite(ctx, "acme", "Acme"); err != nil {
		t.Fatal(err)
	}
	b.db.MustExec(t, `INSERT INTO check_runs (trigger, actor, status, started_at, finished_at, duration_ms, error)
		VALUES ('manual', 'admin@example.test', 'failed', clock_timestamp(), clock_timestamp(), 5, 'fetch offline:local-source: refused'),
		       ('import', 'admin@example.test', 'completed', clock_timestamp(), clock_timestamp(), 5, NULL)`)
	type runs struct {
		Runs []struct {
			Trigger string  `json:"trigger"`
			Actor   *string `json:"actor"`
			Error   *string `json:"error"`
		} `json:"runs"`
	}
	var all runs
	b.login("viewer@example.test").fleetJSON(t, "/api/sites/acme/history", &all)
	if len(all.Runs) != 1 || all.Runs[0].Trigger != "manual" || all.Runs[0].Actor == nil || *all.Runs[0].Actor != "admin@example.test" ||
		all.Runs[0].Error == nil {
		t.Errorf("a viewer of every site, acme's runs: %+v", all.Runs)
	}
	limited := b.limitedUser("acme-viewer@example.test", auth.RoleViewer, "acme")
	var lean runs
	r := b.anonymous().do("GET", "/api/sites/acme/history", "", "", limited)
	wantStatus(t, "acme's history, limited to acme", r, http.StatusOK)
	if err := json.Unmarshal([]byte(r.body), &lean); err != nil {
		t.Fatal(err)
	}
	if len(lean.Runs) != 1 || lean.Runs[0].Actor != nil && *lean.Runs[0].Actor != "" || lean.Runs[0].Error != nil && *lean.Runs[0].Error != "" {
		t.Errorf("a viewer limited to acme, acme's runs: %+v", lean.Runs)
	}
	page := b.anonymous().do("GET", "/sites/acme/history", "", "", limited)
	if strings.Contains(page.body, "admin@example.test") || strings.Contains(page.body, "local-source") {
		t.Errorf("acme's history page names the operator or the local source to a viewer limited to acme")
	}
}
