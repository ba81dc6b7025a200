package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/testing/npmreg"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
)

// `upcheck approve`: under a manifest policy {approve: scripts}, hulud's
// 1.0.1 (a postinstall added) is held; a missing reason is a usage
// mistake (exit 2), a version that brings nothing is refused in words
// (exit 8), an approval by the command line is printed, audited and
// applied at once, and each command is a new process over the same
// database: the next check (a restart) still offers 1.0.1.
func TestApproveCommand(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	r := npmreg.New(t)
	day := func(n int) time.Time { return time.Date(2026, 1, n, 12, 0, 0, 0, time.UTC) }
	r.Publish("@acme/core", "2.0.0", map[string]npmreg.Version{"2.0.0": {Published: day(1)}})
	r.Publish("@acme/hulud", "1.0.1", map[string]npmreg.Version{
		"1.0.0": {Published: day(2)},
		"1.0.1": {Published: day(3), Scripts: map[string]string{"postinstall": "node bundle.js"}}})
	manifestPath := filepath.Join(t.TempDir(), "manifest.yaml")
	os.WriteFile(manifestPath, []byte(`policy: {approve: scripts}
components:
  - {code: core, name: Core, version: 2.0.0, source: "npm:@acme/core"}
  - {code: hulud, name: Hulud, version: 1.0.0, source: "npm:@acme/hulud"}
`), 0o644)
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_MANIFEST": manifestPath, "UPCHECK_NPM_REGISTRY": r.URL,
		"UPCHECK_ALLOW_PRIVATE_SOURCES": "1"}
	if out, code := cli(t, env, "components", "sync"); code != 0 {
		t.Fatalf("components sync: %s", out)
	}
	if out, code := cli(t, env, "check"); code != 0 {
		t.Fatalf("check: %s (exit %d)", out, code)
	}
	offered := func() (update, held string) {
		d.QueryRow(t, `SELECT coalesce(update_version, ''), coalesce(held_version, '') FROM component_results WHERE code = 'hulud'`).Scan(&update, &held)
		return
	}
	if u, h := offered(); u != "" || h != "1.0.1" {
		t.Fatalf("before approval: offered %q, held %q", u, h)
	}
	if _, stderr, code := cliOut(t, env, "approve", "hulud", "1.0.1"); code != 2 || !strings.Contains(stderr, "--reason R is required") {
		t.Errorf("approve without a reason: exit %d, %q", code, stderr)
	}
	if _, stderr, code := cliOut(t, env, "approve", "hulud", "1.0.0", "--reason", "fine"); code != 8 || !strings.Contains(stderr, "nothing to approve") {
		t.Errorf("approve of what brings nothing: exit %d, %q", code, stderr)
	}
	stdout, stderr, code := cliOut(t, env, "approve", "hulud", "1.0.1", "--reason", "bundle.js reviewed")
	var line struct{ Code, Version, Digest, Reason, By string }
	if code != 0 || json.Unmarshal([]byte(stdout), &line) != nil || line.Version != "1.0.1" || len(line.Digest) != 64 || line.By != "command line" {
		t.Fatalf("approve: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if u, h := offered(); u != "1.0.1" || h != "" {
		t.Errorf("after approval: offered %q, held %q; want 1.0.1 at once", u, h)
	}
	if out, code := cli(t, env, "check"); code != 0 {
		t.Fatalf("check: %s (exit %d)", out, code)
	}
	if u, h := offered(); u != "1.0.1" || h != "" {
		t.Errorf("after the next check: offered %q, held %q; want 1.0.1 still approved", u, h)
	}
	var n int
	d.QueryRow(t, `SELECT count(*) FROM audit_log WHERE action = 'component.approve' AND detail->>'by' = 'cli'`).Scan(&n)
	if n != 1 {
		t.Errorf("%d component.approve audit rows by the command line, want 1", n)
	}
}
