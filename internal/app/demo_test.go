package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/dev/demo"

	"github.com/upcheck/upcheck/internal/catalog"
	"github.com/upcheck/upcheck/internal/config"
	"github.com/upcheck/upcheck/internal/lease"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/testkit"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

const demoPassword = "a demo password, long enough"

// serveDemo runs `serve --demo` on d at listen and returns its base URL
// and a stop that waits for it to end. A serve that ends before it is
// ready returns "" and its error.
func serveDemo(t *testing.T, d *pgtest.DB, listen string, env ...string) (string, func(), error) {
	t.Helper()
	return serveDemoLogged(t, d, listen, io.Discard, env...)
}

// serveDemoLogged is serveDemo with its log, at debug level, written to log.
func serveDemoLogged(t *testing.T, d *pgtest.DB, listen string, log io.Writer, env ...string) (string, func(), error) {
	t.Helper()
	vars := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_LISTEN": listen, "UPCHECK_ADMIN_PASSWORD": demoPassword}
	for i := 0; i+1 < len(env); i += 2 {
		vars[env[i]] = env[i+1]
	}
	cfg, err := config.FromEnv(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Demo = true
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, cfg, slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})), func(a string) { addr <- a })
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(ShutdownTimeout):
			t.Error("serve did not stop")
		}
	}
	select {
	case a := <-addr:
		t.Cleanup(stop)
		return "http://" + a, stop, nil
	case err := <-done:
		cancel()
		return "", nil, err
	case <-time.After(time.Minute):
		cancel()
		t.Fatal("serve did not start")
	}
	return "", nil, nil
}

// runsSoFar is the history as "trigger/actor:status", oldest first.
func runsSoFar(t *testing.T, d *pgtest.DB) string {
	t.Helper()
	var runs string
	d.QueryRow(t, `SELECT coalesce(string_agg(trigger || '/' || coalesce(actor, '') || ':' || status, ' ' ORDER BY id), '')
	               FROM check_runs`).Scan(&runs)
	return runs
}

// waitForRuns waits until the history has n runs that are not running.
func waitForRuns(t *testing.T, d *pgtest.DB, n int) string {
	t.Helper()
	wait.For(t, fmt.Sprintf("%d finished runs", n), wait.Guard, func() (bool, error) {
		var finished int
		d.QueryRow(t, "SELECT count(*) FROM check_runs WHERE status <> 'running'").Scan(&finished)
		return finished >= n, wait.Notf("history = %s", runsSoFar(t, d))
	})
	return runsSoFar(t, d)
}

// page signs in as the demo admin and returns the page at path, as text
// without tags.
func page(t *testing.T, base, path string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.PostForm(base+"/login", url.Values{"email": {DemoAdminEmail}, "password": {demoPassword}, "next": {path}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s after signing in: %d %v", path, resp.StatusCode, err)
	}
	return strings.Join(strings.Fields(tags.ReplaceAllString(string(b), " ")), " ")
}

var tags = regexp.MustCompile(`<[^>]*>`)

// A fresh install's first start runs the demo's check, labelled as the
// demo's, and nothing answers busy beside it; the scheduler's catch-up
// finds that check completed.
func TestDemoFirstStartRecordsOneCheck(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	var log testkit.Buffer
	_, stop, err := serveDemoLogged(t, d, "127.0.0.1:0", &log)
	if err != nil {
		t.Fatal(err)
	}
	// The demo's Shop source fails by design.
	if runs := waitForRuns(t, d, 1); runs != "operator/demo:completed_with_failures" {
		t.Fatalf("history after a fresh start = %q", runs)
	}
	// The scheduler's decision at start, then the stop that waits for any
	// run it started: a scheduler's run, were it to race, is in the history.
	wait.True(t, "the scheduler's catch-up decision", wait.Guard, func() bool {
		return strings.Contains(log.String(), "catch-up check: ")
	})
	if got := log.String(); !strings.Contains(got, "catch-up check: not needed") {
		t.Fatalf("the scheduler's catch-up after the demo's check:\n%s", got)
	}
	stop()
	if runs := runsSoFar(t, d); runs != "operator/demo:completed_with_failures" {
		t.Fatalf("history after a fresh start = %q, want the demo's check alone (no busy row)", runs)
	}
}

// A start that finds the lease held (by a previous serve killed during its
// check, or another instance) tries again a lease later: the demo's new
// sources are fetched without waiting for the next day's check.
func TestDemoFirstCheckWaitsForTheLease(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	holder, err := lease.New(store.New(d.Pool), lease.Timings{Lease: time.Minute, Heartbeat: 10 * time.Second,
		Cooldown: time.Minute, Period: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	held, err := holder.Acquire(context.Background(), lease.Operator)
	if err != nil || held.Outcome != lease.Acquired {
		t.Fatalf("hold the lease: %+v %v", held, err)
	}
	if _, _, err := serveDemo(t, d, "127.0.0.1:0", "UPCHECK_TEST_TIMINGS", "lease=5s,heartbeat=1s"); err != nil {
		t.Fatal(err)
	}
	if runs := waitForRuns(t, d, 1); runs != "operator/demo:busy" {
		t.Fatalf("history = %q, want the demo's check refused while the lease is held", runs)
	}
	if _, err := holder.Release(context.Background(), held.Lease.Owner, false); err != nil {
		t.Fatal(err)
	}
	if runs := waitForRuns(t, d, 2); runs != "operator/demo:busy operator/demo:completed_with_failures" {
		t.Fatalf("history = %q, want the demo's check run once the lease was free", runs)
	}
}

// A second start moves the demo's sources to a new port. Shop's source
// there has never been read: after the start's check, Shop is failing
// everywhere (catalog filter, source health, dashboard) and its page says
// that nothing is known, never "no known advisory" nor "no releases".
func TestDemoRestartKeepsShopUnknown(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	_, stop, err := serveDemo(t, d, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	waitForRuns(t, d, 1)
	stop()

	base, _, err := serveDemo(t, d, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	waitForRuns(t, d, 2)
	var shopURL string
	d.QueryRow(t, "SELECT source_url FROM components WHERE code = 'shop'").Scan(&shopURL)
	if !strings.HasPrefix(shopURL, base[:strings.LastIndex(base, ":")]) {
		t.Fatalf("shop's source %q", shopURL)
	}
	detail := page(t, base, "/admin/plugins/shop")
	for _, never := range []string{"No known advisory", "lists no releases", "Not checked yet"} {
		if strings.Contains(detail, never) {
			t.Errorf("Shop's page says %q:\n%s", never, detail)
		}
	}
	for _, want := range []string{"never been read successfully", "The publisher’s server answered 503 Service Unavailable."} {
		if !strings.Contains(detail, want) {
			t.Errorf("Shop's page does not say %q:\n%s", want, detail)
		}
	}
	if failing := page(t, base, "/admin/plugins?status=failing"); !strings.Contains(failing, "Shop shop") {
		t.Errorf("the failing filter does not list Shop:\n%s", failing)
	}
	if dash := page(t, base, "/admin"); !strings.Contains(dash, "1 failing source") {
		t.Errorf("the dashboard does not count Shop's source as failing:\n%s", dash)
	}
}

// A serve that cannot listen (the address is taken by a running one)
// changes nothing: the running site keeps its components and sources.
func TestServeOnATakenAddressChangesNothing(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	base, _, err := serveDemo(t, d, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	waitForRuns(t, d, 1)
	sources := func() string {
		var s string
		d.QueryRow(t, "SELECT string_agg(code || '=' || coalesce(source_url, ''), ' ' ORDER BY code) FROM components").Scan(&s)
		return s
	}
	before := sources()
	_, _, err = serveDemo(t, d, strings.TrimPrefix(base, "http://"))
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Fatalf("a second serve on %s: %v, want a listen error", base, err)
	}
	if after := sources(); after != before {
		t.Fatalf("components after a serve that could not listen:\n%s\nwere\n%s", after, before)
	}
	if dash := page(t, base, "/admin/plugins"); strings.Contains(dash, "Not checked yet") {
		t.Errorf("the running site lost its results:\n%s", dash)
	}
}

// The demo's npm plugins are read from the demo's own registry at its first
// check: after it, the catalog holds each with its registry's facts (a
// deprecated installed version with its message, a release needing a
// newer core, a release that lost provenance, a plain update with its npm
// command), and the core is the npm package the plugins' peerDependencies
// name. The site's npm settings do not send the demo's packages elsewhere.
func TestDemoChecksItsNpmPlugins(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	if _, _, err := serveDemo(t, d, "127.0.0.1:0", "UPCHECK_NPM_REGISTRY", "http://127.0.0.1:9/not-the-demo/"); err != nil {
		t.Fatal(err)
	}
	// Shop's document source fails by design; nothing else does.
	if runs := waitForRuns(t, d, 1); runs != "operator/demo:completed_with_failures" {
		t.Fatalf("history = %q", runs)
	}
	entries, _, err := catalog.ReadPage(context.Background(), store.New(d.Pool), store.CatalogFilter{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]store.CatalogEntry{}
	for _, e := range entries {
		by[e.Code] = e
	}
	for code, pkg := range map[string]string{"core": "@demo/core", "seo": "@demo/seo", "search": "@demo/search", "comments": "@demo/comments", "analytics": "@demo/analytics"} {
		e := by[code]
		if e.SourceKind != readmodel.SourceNpm || e.Package != pkg || e.LastError != "" || e.LastSuccessAt == nil || !e.Evaluated {
			t.Errorf("%s, read from the demo's registry: %+v", code, e)
		}
	}
	if e := by["core"]; !e.UpdateAvailable || e.UpdateVersion != "1.10.0" {
		t.Errorf("core: %+v, want the update to 1.10.0", e)
	}
	if e := by["seo"]; !strings.Contains(e.Deprecated, "sends unpublished drafts to search engines") || e.UpdateVersion != "2.0.1" {
		t.Errorf("seo: %+v, want its installed version deprecated, with the publisher's message, and 2.0.1 offered", e)
	}
	if e := by["search"]; !e.NeedsNewerCore || e.RequiredCore != ">=2.0.0" || e.UpdateAvailable {
		t.Errorf("search: %+v, want 3.1.0 needing core >=2.0.0", e)
	}
	if e := by["comments"]; e.ProvenanceLost != "1.3.0" || !e.UpdateAvailable {
		t.Errorf("comments: %+v, want 1.3.0 offered without the provenance 1.2.0 had", e)
	}
	if e := by["analytics"]; !e.UpdateAvailable || e.UpdateVersion != "0.5.0" || e.UpdateCommand != "npm install @demo/analytics@0.5.0" ||
		e.Deprecated != "" || e.ProvenanceLost != "" || e.NeedsNewerCore {
		t.Errorf("analytics: %+v, want a plain update to 0.5.0", e)
	}
	// The document plugins beside them still read the core's version.
	if e := by["newsletter"]; !e.NeedsNewerCore || e.LastError != "" {
		t.Errorf("newsletter: %+v, want it still needing a newer core", e)
	}
}

// A second start serves the demo's registry at a new address with new
// keys: its check reads the npm plugins from there (the documents the
// first start's registry tagged are fetched anew, not kept), their facts
// hold, and the new registry's keys are a first sight, not a key change.
func TestDemoRestartRereadsItsNpmPlugins(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	_, stop, err := serveDemo(t, d, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	waitForRuns(t, d, 1)
	stop()
	registryOf := func() string {
		var reg string
		d.QueryRow(t, "SELECT coalesce(registry, '') FROM sources WHERE url = 'npm:@demo/seo'").Scan(&reg)
		return reg
	}
	first := registryOf()
	if _, _, err := serveDemo(t, d, "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if runs := waitForRuns(t, d, 2); runs != "operator/demo:completed_with_failures operator/demo:completed_with_failures" {
		t.Fatalf("history = %q", runs)
	}
	if again := registryOf(); again == first || !strings.HasSuffix(again, "/npm/") {
		t.Fatalf("seo read from %q at the second start, %q at the first", again, first)
	}
	var registries, changed int
	d.QueryRow(t, "SELECT count(*), count(changed_at) FROM registry_keys").Scan(&registries, &changed)
	if registries != 2 || changed != 0 {
		t.Errorf("%d registries pinned, %d changed: want each start's registry pinned once, none changed", registries, changed)
	}
	entries, _, err := catalog.ReadPage(context.Background(), store.New(d.Pool), store.CatalogFilter{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.SourceKind == readmodel.SourceNpm && (e.LastError != "" || !e.Evaluated) {
			t.Errorf("%s after the second start: %+v", e.Code, e)
		}
		if e.Code == "seo" && e.Deprecated == "" || e.Code == "comments" && e.ProvenanceLost != "1.3.0" {
			t.Errorf("%s lost its registry's facts at the second start: %+v", e.Code, e)
		}
	}
}

// The demo's pages say its registry's facts in words: the publisher's
// deprecation message, the core a release needs, the lost provenance, and
// each version's provenance and the key its signature was verified by.
func TestDemoPagesSayTheRegistrysFacts(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	base, _, err := serveDemo(t, d, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	waitForRuns(t, d, 1)
	for path, wants := range map[string][]string{
		"/admin/plugins/seo":       {"The installed version 2.0.0 is deprecated by its publisher: 2.0.0 sends unpublished drafts to search engines"},
		"/admin/plugins/search":    {"needs core 2.0.0 or newer", "Security 2.0.0 or newer Needs a newer core"},
		"/admin/plugins/comments":  {"1.3.0 was published without the provenance that 1.2.0 had"},
		"/admin/plugins/analytics": {"published with provenance", "signature verified by key SHA256:"},
	} {
		got := page(t, base, path)
		for _, want := range wants {
			if !strings.Contains(got, want) {
				t.Errorf("%s does not say %q:\n%s", path, want, got)
			}
		}
	}
}

// The demo syncs its own advisory feeds before its first check evaluates:
// its seo package is known malicious, its core's advisory is known
// exploited (KEV) and scored (EPSS), the withdrawn record counts for
// nothing, and every feed synced.
func TestDemoReadsItsFeeds(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	if _, _, err := serveDemo(t, d, "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	waitForRuns(t, d, 1)
	var malicious, exploited, analytics string
	d.QueryRow(t, `SELECT coalesce(string_agg(code, ',' ORDER BY code), '') FROM component_state WHERE malicious`).Scan(&malicious)
	d.QueryRow(t, `SELECT coalesce(string_agg(code, ',' ORDER BY code), '') FROM component_state WHERE known_exploited`).Scan(&exploited)
	if malicious != "seo" || exploited != "core" {
		t.Errorf("malicious %q, known exploited %q; want seo and core", malicious, exploited)
	}
	var epss float64
	d.QueryRow(t, `SELECT coalesce((a->'epss'->>'score')::float8, 0) FROM component_results r, jsonb_array_elements(r.advisories) a
		WHERE r.code = 'core' AND a->>'known_exploited' = 'true'`).Scan(&epss)
	if epss < 0.9 {
		t.Errorf("core's exploited advisory has EPSS %v, want the demo's 0.943", epss)
	}
	d.QueryRow(t, `SELECT advisories::text FROM component_results WHERE code = 'analytics'`).Scan(&analytics)
	if strings.Contains(analytics, demo.DemoWithdrawnAdvisory) {
		t.Errorf("analytics lists the withdrawn record: %s", analytics)
	}
	var synced int
	d.QueryRow(t, `SELECT count(*) FROM feeds WHERE last_success_at IS NOT NULL AND last_error IS NULL`).Scan(&synced)
	if synced != 3 {
		t.Errorf("%d feeds synced, want osv, kev and epss", synced)
	}
}
