package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/dev/osvgen"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
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
