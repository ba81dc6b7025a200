package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/dev/osvgen"
	"github.com/upcheck/upcheck/internal/metrics"
	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"
	"github.com/upcheck/upcheck/internal/testing/feedserver"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/publisher"
)

// `upcheck feed import`: an air-gapped site brings the OSV archive and the
// KEV catalogue by hand; its offline-sourced component, which names its npm
// package, is matched; a KEV file of another schema exits 8 saying so and
// keeps the catalogue; `feed sync` without UPCHECK_FEEDS says what to set.
func TestFeedImport(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	dir := t.TempDir()
	manifestPath := filepath.Join(dir, "manifest.yaml")
	os.WriteFile(manifestPath, []byte(`components:
  - {code: core, name: Core, version: 1.9.0, source: "offline:acme"}
  - {code: blog, name: Blog, version: 2.3.0, source: "offline:acme", package: "@acme/blog"}
`), 0o644)
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_MANIFEST": manifestPath}
	if out, code := cli(t, env, "components", "sync"); code != 0 {
		t.Fatalf("components sync: %s", out)
	}
	archive := filepath.Join(dir, "all.zip")
	f, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	rec := osvgen.Record("GHSA-9999-8888-7777", "@acme/blog", osvgen.KindVuln, "", "2.4.0", "CVE-2026-11111")
	if err := osvgen.WriteArchive(f, func(yield func(string, []byte) bool) { yield("GHSA-9999-8888-7777", rec) }); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out, code := cli(t, env, "feed", "import", "osv", archive)
	var line struct {
		Kind, Status string
		Written      int
	}
	if err := json.Unmarshal([]byte(out), &line); err != nil || code != 0 || line.Kind != "osv" || line.Status != "completed" || line.Written != 1 {
		t.Fatalf("feed import osv: %s (exit %d), want completed with 1 written", out, code)
	}

	kev := filepath.Join(dir, "kev.json")
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	kf, _ := os.Create(kev)
	osvgen.WriteKEV(kf, osvgen.KEVCatalog{Released: day, Entries: []osvgen.KEVEntry{{CVE: "CVE-2026-11111", VendorProject: "Acme",
		Product: "Blog", Name: "RCE", DateAdded: day, RequiredAction: "Update.", DueDate: day.AddDate(0, 0, 21), RansomwareUse: "Unknown"}}})
	kf.Close()
	if out, code := cli(t, env, "feed", "import", "kev", kev); code != 0 || !strings.Contains(out, `"written":1`) {
		t.Fatalf("feed import kev: %s (exit %d)", out, code)
	}
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, []byte(`{"title": "something else"}`), 0o644)
	out, code = cli(t, env, "feed", "import", "kev", other)
	if code != 8 || !strings.Contains(out, `"status":"failed"`) || !strings.Contains(out, "not of this feed's kind") {
		t.Fatalf("feed import of another schema: %s (exit %d), want failed (exit 8) saying so", out, code)
	}
	var entries int
	d.QueryRow(t, `SELECT count(*) FROM kev_entries`).Scan(&entries)
	if entries != 1 {
		t.Errorf("%d KEV entries after the refused file, want the 1 kept", entries)
	}
	if _, code := cli(t, env, "feed", "sync"); code != 1 {
		t.Errorf("feed sync without UPCHECK_FEEDS: exit %d, want 1", code)
	}
	if _, code := cli(t, env, "feed", "import", "osv"); code != 2 {
		t.Errorf("feed import without a file: exit %d, want 2 (usage)", code)
	}
}

// A second `feed sync` with every feed unchanged writes only its own
// bookkeeping: the read model's version stays (no cache turns) and no
// River job is queued; a sync that brings a change moves both.
func TestFeedSyncWithNothingNewChangesNothing(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	dir := t.TempDir()
	pub := publisher.New(t)
	pub.Set("/acme.json", []byte(`{"format": 1, "publisher": "acme", "sequence": 1, "packages": {
	  "core": {"releases": [{"version": "1.9.0"}]},
	  "blog": {"releases": [{"version": "2.3.0"}, {"version": "2.4.0"}]}}}`))
	manifestPath := filepath.Join(dir, "manifest.yaml")
	os.WriteFile(manifestPath, []byte(`components:
  - {code: core, name: Core, version: 1.9.0, source: "`+pub.URL+`/acme.json"}
  - {code: blog, name: Blog, version: 2.3.0, source: "`+pub.URL+`/acme.json", package: "@acme/blog"}
`), 0o644)
	fs := feedserver.New(t)
	fs.SetRecords(func(yield func(string, []byte) bool) {
		yield("GHSA-9999-8888-7777", osvgen.Record("GHSA-9999-8888-7777", "@acme/blog", osvgen.KindVuln, "", "2.4.0", "CVE-2026-11111"))
	})
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	kev := func(entries ...osvgen.KEVEntry) {
		fs.SetKEV(osvgen.KEVCatalog{Released: day, Entries: append([]osvgen.KEVEntry{{CVE: "CVE-2026-22222", VendorProject: "Other",
			Product: "Thing", Name: "RCE", DateAdded: day, RequiredAction: "Update.", DueDate: day.AddDate(0, 0, 21), RansomwareUse: "Unknown"}}, entries...)})
	}
	kev()
	fs.SetEPSS(osvgen.EPSSFile{Model: "v2025.03.14", Date: day, Scores: []osvgen.EPSSScore{{CVE: "CVE-2026-11111", EPSS: 0.5, Percentile: 0.9}}})
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_MANIFEST": manifestPath, "UPCHECK_FEEDS": fs.Setting(),
		"UPCHECK_ALLOW_PRIVATE_SOURCES": "1", "UPCHECK_FEED_DIR": t.TempDir()}
	if out, code := cli(t, env, "components", "sync"); code != 0 {
		t.Fatalf("components sync: %s", out)
	}
	if out, code := cli(t, env, "notify", "add", "webhook", "--url", "https://hooks.example/x"); code != 0 {
		t.Fatalf("notify add: %s", out)
	}
	if out, code := cli(t, env, "check"); code != 0 && code != 10 {
		t.Fatalf("check: %s (exit %d)", out, code)
	}
	state := func() (version, jobs int64) {
		d.QueryRow(t, `SELECT (SELECT version FROM read_model_version), (SELECT count(*) FROM river_job)`).Scan(&version, &jobs)
		return
	}
	if out, code := cli(t, env, "feed", "sync"); code != 0 {
		t.Fatalf("first feed sync: %s (exit %d)", out, code)
	}
	v1, j1 := state()
	out, code := cli(t, env, "feed", "sync")
	if code != 0 {
		t.Fatalf("second feed sync: %s (exit %d)", out, code)
	}
	v2, j2 := state()
	if v2 != v1 || j2 != j1 {
		t.Errorf("a feed sync with nothing new: read model version %d -> %d, River jobs %d -> %d; want both unchanged\n%s", v1, v2, j1, j2, out)
	}
	var syncs int
	d.QueryRow(t, `SELECT count(*) FROM feed_syncs WHERE status = 'not_modified'`).Scan(&syncs)
	if syncs < 3 {
		t.Errorf("%d syncs recorded not_modified, want at least the 3 of the second sync (its bookkeeping)", syncs)
	}
	// The KEV catalogue now names the blog's CVE: the blog is known
	// exploited, the read model turns and its event is queued.
	kev(osvgen.KEVEntry{CVE: "CVE-2026-11111", VendorProject: "Acme", Product: "Blog", Name: "RCE", DateAdded: day,
		RequiredAction: "Update.", DueDate: day.AddDate(0, 0, 21), RansomwareUse: "Known"})
	if out, code := cli(t, env, "feed", "sync"); code != 0 {
		t.Fatalf("third feed sync: %s (exit %d)", out, code)
	}
	if v3, j3 := state(); v3 == v2 || j3 == j2 {
		t.Errorf("a feed sync that made the blog known exploited: read model version %d -> %d, River jobs %d -> %d; want both moved", v2, v3, j2, j3)
	}
}

// `feed sync` with an UPCHECK_FEED_DIR that does not exist prints the osv
// feed's real status, failed, in words, syncs the others and exits 8 (a
// feed failed), not 1 with an empty status as if the database were gone.
func TestFeedSyncIntoAMissingFeedDir(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	fs := feedserver.New(t)
	fs.SetRecords(func(yield func(string, []byte) bool) {
		yield("GHSA-9999-8888-7777", osvgen.Record("GHSA-9999-8888-7777", "@acme/blog", osvgen.KindVuln, "", "2.4.0"))
	})
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	fs.SetKEV(osvgen.KEVCatalog{Released: day, Entries: []osvgen.KEVEntry{{CVE: "CVE-2026-22222", VendorProject: "Other",
		Product: "Thing", Name: "RCE", DateAdded: day, RequiredAction: "Update.", DueDate: day.AddDate(0, 0, 21), RansomwareUse: "Unknown"}}})
	fs.SetEPSS(osvgen.EPSSFile{Model: "v2025.03.14", Date: day, Scores: []osvgen.EPSSScore{{CVE: "CVE-2026-22222", EPSS: 0.5, Percentile: 0.9}}})
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_FEEDS": fs.Setting(), "UPCHECK_ALLOW_PRIVATE_SOURCES": "1",
		"UPCHECK_FEED_DIR": filepath.Join(t.TempDir(), "missing")}
	stdout, stderr, code := cliOut(t, env, "feed", "sync")
	want := "upcheck cannot write the archive to UPCHECK_FEED_DIR: no such file or directory."
	if code != 8 || !strings.Contains(stderr, want) {
		t.Errorf("feed sync into a missing directory: exit %d, stderr %q; want 8 and %q", code, stderr, want)
	}
	statuses := map[string]string{}
	for line := range strings.Lines(stdout) {
		var r struct{ Kind, Status, Error string }
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("feed sync printed %q: %v", line, err)
		}
		statuses[r.Kind] = r.Status
		if r.Kind == "osv" && !strings.Contains(r.Error, want) {
			t.Errorf("osv's error %q, want %q", r.Error, want)
		}
	}
	if statuses["osv"] != "failed" || statuses["kev"] != "completed" || statuses["epss"] != "completed" {
		t.Errorf("statuses %v, want osv failed, kev and epss completed", statuses)
	}
}

// A feed URL's query (a mirror's access token) never reaches a log line,
// the JSON line feed sync prints, nor the stored errors: the fetcher's
// WARN of a retried fetch and the sync's WARN of its failure give the URL
// with "?…".
func TestFeedTokenIsNotLogged(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	fs := feedserver.New(t)
	fs.SetRecords(func(yield func(string, []byte) bool) {
		yield("GHSA-9999-8888-7777", osvgen.Record("GHSA-9999-8888-7777", "@acme/blog", osvgen.KindVuln, "", "2.4.0"))
	})
	fs.Fail(feedserver.KEVPath, 503)
	const secret = "s3cr3tT0KENxyz"
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_ALLOW_PRIVATE_SOURCES": "1", "UPCHECK_LOG_LEVEL": "debug",
		"UPCHECK_FEEDS": "osv=" + fs.ArchiveURL() + "?token=" + secret + ",kev=" + fs.KEVURL() + "?token=" + secret}
	stdout, stderr, code := cliOut(t, env, "feed", "sync")
	if code != 8 || !strings.Contains(stdout, `"status":"failed"`) {
		t.Fatalf("feed sync with kev failing: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, line := range []string{"fetch failed, retrying once", "feed sync failed", "feed synced"} {
		if !strings.Contains(stderr, line) {
			t.Errorf("the log lacks %q:\n%s", line, stderr)
		}
	}
	if !strings.Contains(stderr, fs.KEVURL()+"?…") {
		t.Errorf("the log does not name the KEV URL as %s?…:\n%s", fs.KEVURL(), stderr)
	}
	var stored string
	d.QueryRow(t, `SELECT coalesce(string_agg(coalesce(last_error, ''), ' '), '') || (SELECT coalesce(string_agg(error, ' '), '') FROM feed_syncs) FROM feeds`).Scan(&stored)
	for name, text := range map[string]string{"the log": stderr, "the JSON lines": stdout, "the stored errors": stored} {
		if strings.Contains(text, secret) {
			t.Errorf("%s show the feed's token:\n%s", name, text)
		}
	}
}

// `feed import osv WRONGFILE` (a file that is not an archive) prints why
// and exits 8, and leaves the configured feed's state alone: Source
// health's feed row and upcheck_feed_failing still say its last sync
// succeeded; the history records the refused import.
func TestRefusedFeedImportLeavesTheFeedAlone(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	fs := feedserver.New(t)
	fs.SetRecords(func(yield func(string, []byte) bool) {
		yield("GHSA-9999-8888-7777", osvgen.Record("GHSA-9999-8888-7777", "@acme/blog", osvgen.KindVuln, "", "2.4.0"))
	})
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_ALLOW_PRIVATE_SOURCES": "1", "UPCHECK_FEEDS": "osv=" + fs.ArchiveURL()}
	if out, code := cli(t, env, "feed", "sync"); code != 0 {
		t.Fatalf("feed sync: %s (exit %d)", out, code)
	}
	wrong := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(wrong, []byte("not an archive\n"), 0o644)
	stdout, stderr, code := cliOut(t, env, "feed", "import", "osv", wrong)
	if code != 8 || !strings.Contains(stderr, "The archive could not be read") || !strings.Contains(stdout, `"status":"failed"`) {
		t.Errorf("feed import of a text file: exit %d\n%s\n%s; want 8 saying the archive could not be read", code, stdout, stderr)
	}
	st := store.New(d.Pool)
	rows, err := st.Feeds(context.Background())
	if err != nil || len(rows) != 1 {
		t.Fatalf("feeds %+v, %v", rows, err)
	}
	if f := rows[0]; f.Failing || f.LastError != "" || f.ConsecutiveFailures != 0 || f.LastSuccessAt == nil {
		t.Errorf("the osv feed after a refused import: %+v, want its last sync's success standing", f)
	}
	srv := httptest.NewServer(metrics.New(st.SummaryReader(store.LocalSite, readmodel.DevSeparate), metrics.WithFeeds(st.Feeds)).Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `upcheck_feed_failing{kind="osv"} 0`) {
		t.Errorf("metrics after a refused import:\n%s\nwant upcheck_feed_failing{kind=\"osv\"} 0", body)
	}
	var history string
	d.QueryRow(t, `SELECT string_agg(trigger || ' ' || status, ', ' ORDER BY id) FROM feed_syncs`).Scan(&history)
	if history != "cli completed, import failed" {
		t.Errorf("history %q, want the sync and the refused import", history)
	}
}
