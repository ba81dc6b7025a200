package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/publisher"
)

// `upcheck skip` and `upcheck unskip`: the plain update is skipped at once
// (the summary stops counting it, without a check), by the command line,
// audited; a security release, a version not newer or not published, and
// the manifest's skip are refused in words (exit 8); an unknown component
// is an error (exit 1) and a missing reason a usage mistake (exit 2).
func TestSkipCommands(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	dir := t.TempDir()
	pub := publisher.New(t)
	pub.Set("/feed.json", []byte(`{"format": 1, "publisher": "acme", "sequence": 1, "packages": {
	  "core": {"releases": [{"version": "1.9.0"}, {"version": "1.10.0"}]},
	  "blog": {"releases": [{"version": "2.4.0", "security": true, "severity": "high"}]},
	  "forms": {"releases": [{"version": "1.0.0"}, {"version": "1.1.0"}]}}}`))
	manifestPath := filepath.Join(dir, "manifest.yaml")
	os.WriteFile(manifestPath, []byte(`components:
  - {code: core, name: Core, version: 1.9.0, source: "`+pub.URL+`/feed.json"}
  - {code: blog, name: Blog, version: 2.3.0, source: "`+pub.URL+`/feed.json"}
  - {code: forms, name: Forms, version: 1.0.0, source: "`+pub.URL+`/feed.json"}
skips:
  - {component: forms, version: 1.1.0, reason: "reviewed with the site"}
`), 0o644)
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_MANIFEST": manifestPath, "UPCHECK_ALLOW_PRIVATE_SOURCES": "1"}
	if out, code := cli(t, env, "components", "sync"); code != 0 {
		t.Fatalf("components sync: %s", out)
	}
	if out, code := cli(t, env, "check"); code != 0 {
		t.Fatalf("check: %s (exit %d)", out, code)
	}
	updates := func() (n int) {
		d.QueryRow(t, `SELECT count(*) FROM component_state WHERE evaluated AND update_available`).Scan(&n)
		return n
	}
	if n := updates(); n != 2 {
		t.Fatalf("%d updates offered before the skip, want core's and blog's", n)
	}

	stdout, stderr, code := cliOut(t, env, "skip", "core", "1.10.0", "--reason", "waits for the theme")
	var line struct {
		Code, Version, Reason, By string
		FromManifest              bool `json:"from_manifest"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &line) != nil || line.Code != "core" || line.Version != "1.10.0" ||
		line.Reason != "waits for the theme" || line.By != "command line" || line.FromManifest {
		t.Fatalf("skip: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if n := updates(); n != 1 {
		t.Errorf("%d updates offered after the skip, want blog's alone", n)
	}
	var audits int
	d.QueryRow(t, `SELECT count(*) FROM audit_log WHERE action = 'component.skip' AND detail->>'by' = 'cli' AND detail->>'version' = '1.10.0'`).Scan(&audits)
	if audits != 1 {
		t.Errorf("%d audit rows of the command line's skip, want 1", audits)
	}

	for _, tc := range []struct {
		args  []string
		code  int
		words string
	}{
		{[]string{"skip", "blog", "2.4.0", "--reason", "r"}, 8, "is a security release for this site, which cannot be skipped. To accept the risk of one of its advisories, dismiss the advisory"},
		{[]string{"skip", "core", "1.9.0", "--reason", "r"}, 8, "not newer than the installed version"},
		{[]string{"skip", "core", "1.11.0", "--reason", "r"}, 8, "publishes no release “1.11.0”"},
		{[]string{"skip", "forms", "1.1.0", "--reason", "mine"}, 8, "The manifest declares this component’s skip"},
		{[]string{"unskip", "forms"}, 8, "The manifest declares this component’s skip"},
		{[]string{"skip", "nope", "1.0.0", "--reason", "r"}, 1, `no installed component has the code "nope"`},
		{[]string{"skip", "core", "1.10.0"}, 2, "--reason R is required"},
		{[]string{"unskip"}, 2, "one CODE is required"},
	} {
		stdout, stderr, code := cliOut(t, env, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.words) || code != 0 && stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d saying %q", strings.Join(tc.args, " "), code, stdout, stderr, tc.code, tc.words)
		}
	}

	stdout, _, code = cliOut(t, env, "unskip", "core")
	if code != 0 || strings.TrimSpace(stdout) != `{"code":"core","ended":"1.10.0"}` {
		t.Errorf("unskip: exit %d, %q", code, stdout)
	}
	if n := updates(); n != 2 {
		t.Errorf("%d updates offered after the unskip, want core's and blog's again", n)
	}
	stdout, stderr, code = cliOut(t, env, "unskip", "core")
	if code != 0 || strings.TrimSpace(stdout) != `{"code":"core","ended":null}` || !strings.Contains(stderr, "skips no version") {
		t.Errorf("unskip again: exit %d, stdout %q, stderr %q; want 0 with ended null", code, stdout, stderr)
	}
}

// `upcheck skip`, `unskip` and `approve` with --site NAME act on that
// registered site's component, audited naming it, and leave the local
// site's: acme's forms (no manifest skip there) is skipped and its skip
// ended while the local forms keeps its manifest's skip; a site that does
// not exist, or a component the site does not install, is an error in
// words (exit 1); without --site the command is the local site's, whose
// manifest skip is refused as before.
func TestSkipCommandsOnASite(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	dir := t.TempDir()
	pub := publisher.New(t)
	pub.Set("/feed.json", []byte(`{"format": 1, "publisher": "acme", "sequence": 1, "packages": {
	  "core": {"releases": [{"version": "1.9.0"}]},
	  "forms": {"releases": [{"version": "1.0.0"}, {"version": "1.1.0"}]}}}`))
	manifestPath := filepath.Join(dir, "manifest.yaml")
	os.WriteFile(manifestPath, []byte(`components:
  - {code: core, name: Core, version: 1.9.0, source: "`+pub.URL+`/feed.json"}
  - {code: forms, name: Forms, version: 1.0.0, source: "`+pub.URL+`/feed.json"}
skips:
  - {component: forms, version: 1.1.0, reason: "reviewed with the site"}
`), 0o644)
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_MANIFEST": manifestPath, "UPCHECK_ALLOW_PRIVATE_SOURCES": "1"}
	for _, args := range [][]string{{"components", "sync"}, {"site", "add", "acme"}} {
		if out, code := cli(t, env, args...); code != 0 {
			t.Fatalf("%s: %s", strings.Join(args, " "), out)
		}
	}
	// acme installs the same two components (as its push would write
	// them); the check evaluates them under acme's own inputs.
	d.MustExec(t, `INSERT INTO components (site_id, code, name, installed_version, source_url, pinned_key, package)
	               SELECT s.id, c.code, c.name, c.installed_version, c.source_url, c.pinned_key, c.package
	               FROM components c, sites s WHERE c.site_id = 1 AND s.name = 'acme'`)
	if out, code := cli(t, env, "check"); code != 0 {
		t.Fatalf("check: %s (exit %d)", out, code)
	}
	offered := func(site string) (v string) {
		d.QueryRow(t, `SELECT coalesce(cs.update_version, '') FROM component_state cs JOIN sites s ON s.id = cs.site_id
		               WHERE s.name = $1 AND cs.code = 'forms' AND cs.evaluated`, site).Scan(&v)
		return v
	}
	if a, l := offered("acme"), offered("local"); a != "1.1.0" || l != "" {
		t.Fatalf("forms offered %q on acme and %q on the local site before the skip, want 1.1.0 and nothing", a, l)
	}

	stdout, stderr, code := cliOut(t, env, "skip", "forms", "1.1.0", "--site", "acme", "--reason", "waits for acme's theme")
	var line struct{ Code, Version, Reason string }
	if code != 0 || json.Unmarshal([]byte(stdout), &line) != nil || line.Code != "forms" || line.Version != "1.1.0" {
		t.Fatalf("skip --site acme: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if a := offered("acme"); a != "" {
		t.Errorf("acme's forms offered %q after its skip, want nothing", a)
	}
	var skips, audits int
	d.QueryRow(t, `SELECT count(*) FROM component_skips k JOIN sites s ON s.id = k.site_id
	               WHERE s.name = 'acme' AND k.code = 'forms' AND NOT k.from_manifest`).Scan(&skips)
	d.QueryRow(t, `SELECT count(*) FROM audit_log WHERE action = 'component.skip' AND detail->>'site' = 'acme'`).Scan(&audits)
	if skips != 1 || audits != 1 {
		t.Errorf("acme's skips %d, audit rows naming acme %d; want 1 and 1", skips, audits)
	}

	for _, tc := range []struct {
		args  []string
		code  int
		words string
	}{
		{[]string{"skip", "forms", "1.1.0", "--reason", "mine"}, 8, "The manifest declares this component’s skip"},
		{[]string{"skip", "forms", "1.1.0", "--site", "nope", "--reason", "r"}, 1, `no site is named "nope"`},
		{[]string{"unskip", "forms", "--site", "nope"}, 1, `no site is named "nope"`},
		{[]string{"approve", "blog", "1.0.0", "--site", "acme", "--reason", "r"}, 1, `site acme has no installed component with the code "blog"`},
		{[]string{"approve", "forms", "1.1.0", "--site", "acme", "--reason", "r"}, 8, "refused: 1.1.0 of forms"},
	} {
		stdout, stderr, code := cliOut(t, env, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.words) || code != 0 && stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d saying %q", strings.Join(tc.args, " "), code, stdout, stderr, tc.code, tc.words)
		}
	}

	stdout, _, code = cliOut(t, env, "unskip", "--site", "acme", "forms")
	if code != 0 || strings.TrimSpace(stdout) != `{"code":"forms","ended":"1.1.0"}` {
		t.Errorf("unskip --site acme: exit %d, %q", code, stdout)
	}
	if a, l := offered("acme"), offered("local"); a != "1.1.0" || l != "" {
		t.Errorf("forms offered %q on acme and %q on the local site after acme's unskip, want 1.1.0 and nothing", a, l)
	}
}
