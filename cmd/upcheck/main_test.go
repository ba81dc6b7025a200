package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/publisher"
)

// cli runs the program in-process with env and returns stdout and the exit
// code main would use.
func cli(t *testing.T, env map[string]string, args ...string) (string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(env["STDIN"]), &stdout, &stderr)
	code := exitCode(err, &stderr)
	if code != 0 {
		t.Logf("upcheck %s: exit %d\nstderr: %s", strings.Join(args, " "), code, stderr.String())
	}
	return stdout.String(), code
}

// The end-to-end story of `upcheck check`: a publisher makes a key and signs
// its document, an operator pins the key in the manifest and syncs it, and
// the check reports a plain update, a security update and a failing source,
// with the exit codes of docs/design.md section 6.
func TestCheckAgainstLocalPublisher(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	dir := t.TempDir()

	out, code := cli(t, nil, "publisher", "keygen")
	if code != 0 {
		t.Fatal("keygen failed")
	}
	var keys struct{ PublicKey, PrivateKey string }
	if err := json.Unmarshal([]byte(out), &struct {
		PublicKey  *string `json:"public_key"`
		PrivateKey *string `json:"private_key"`
	}{&keys.PublicKey, &keys.PrivateKey}); err != nil || !strings.HasPrefix(keys.PublicKey, "ed25519:") {
		t.Fatalf("keygen output %q: %v", out, err)
	}

	document := `{"format": 1, "publisher": "acme", "sequence": 7, "packages": {
	  "core": {"releases": [{"version": "1.10.0"}]},
	  "blog": {"releases": [{"version": "2.4.0", "security": true, "severity": "high"}],
	           "advisories": [{"id": "ACME-9", "affected": "<2.4.0", "fixed_in": "2.4.0", "severity": "high"}]},
	  "forms": {"releases": [{"version": "1.0.0"}]}}}`
	docPath := filepath.Join(dir, "feed.json")
	os.WriteFile(docPath, []byte(document), 0o644)
	keyPath := filepath.Join(dir, "key")
	os.WriteFile(keyPath, []byte(keys.PrivateKey+"\n"), 0o600)
	if _, code := cli(t, nil, "publisher", "sign", "--key-file", keyPath, "--write", docPath); code != 0 {
		t.Fatal("sign failed")
	}
	sig, err := os.ReadFile(docPath + ".sig")
	if err != nil {
		t.Fatal(err)
	}

	pub := publisher.New(t)
	pub.SetSigned("/feed.json", []byte(document), strings.TrimSpace(string(sig)))
	pub.Fail("/down.json", http.StatusBadGateway)

	manifestPath := filepath.Join(dir, "manifest.yaml")
	os.WriteFile(manifestPath, []byte(`components:
  - {code: core, name: Core, version: 1.9.0, source: "`+pub.URL+`/feed.json", key: "`+keys.PublicKey+`"}
  - {code: blog, name: Blog, version: 2.3.0, source: "`+pub.URL+`/feed.json", key: "`+keys.PublicKey+`"}
  - {code: forms, name: Forms, version: 1.0.0, source: "`+pub.URL+`/feed.json", key: "`+keys.PublicKey+`"}
  - {code: shop, name: Shop, version: 0.9.0, source: "`+pub.URL+`/down.json"}
`), 0o644)
	env := map[string]string{
		"UPCHECK_DATABASE_URL":          d.URL,
		"UPCHECK_MANIFEST":              manifestPath,
		"UPCHECK_ALLOW_PRIVATE_SOURCES": "1",
		"UPCHECK_TEST_TIMINGS":          "lease=3s,heartbeat=500ms,cooldown=30s",
	}
	if out, code := cli(t, env, "components", "sync"); code != 0 || !strings.Contains(out, `"added":4`) {
		t.Fatalf("components sync: %s (exit %d)", out, code)
	}

	// Shop's source fails: the check completes with failures, says so in
	// its status, and exits 7.
	out, code = cli(t, env, "check", "--manual")
	if code != 7 {
		t.Fatalf("check with a failing source: exit %d, want 7", code)
	}
	var line struct {
		Status   string           `json:"status"`
		Fetched  int              `json:"fetched"`
		Failed   int              `json:"failed"`
		Failures []map[string]any `json:"failures"`
		Summary  struct {
			Components       int `json:"components"`
			UpdatesAvailable int `json:"updates_available"`
			SecurityUpdates  int `json:"security_updates"`
			Vulnerable       int `json:"vulnerable"`
			FailingSources   int `json:"failing_sources"`
		} `json:"summary"`
	}
	if strings.Count(out, "\n") != 1 {
		t.Fatalf("check printed %q, want one JSON line", out)
	}
	if err := json.Unmarshal([]byte(out), &line); err != nil {
		t.Fatal(err)
	}
	s := line.Summary
	if line.Status != "completed_with_failures" || line.Fetched != 1 || line.Failed != 1 ||
		s.Components != 4 || s.UpdatesAvailable != 2 || s.SecurityUpdates != 1 || s.Vulnerable != 1 || s.FailingSources != 1 {
		t.Fatalf("check line = %s", out)
	}
	// It says why shop's source failed, in the words of Source health.
	wantFailures(t, out, []map[string]any{{"source": pub.URL + "/down.json", "kind": "http_status",
		"message": "The publisher’s server answered 502 Bad Gateway."}})

	// The manual cooldown: exit 4. An operator run ignores it and completes.
	if out, code := cli(t, env, "check", "--manual"); code != 4 || !strings.Contains(out, `"status":"cooldown"`) {
		t.Fatalf("second manual check: %s (exit %d), want cooldown and exit 4", out, code)
	}
	out, code = cli(t, env, "check")
	if code != 7 {
		t.Fatalf("operator check: exit %d, want 7 (shop still fails)", code)
	}
	wantFailures(t, out, []map[string]any{{"source": pub.URL + "/down.json", "kind": "http_status",
		"message": "The publisher’s server answered 502 Bad Gateway."}})

	// Once every source gives a usable document: completed, exit 0.
	pub.Set("/up.json", []byte(`{"format": 1, "publisher": "shop", "sequence": 1, "packages": {"shop": {"releases": [{"version": "0.9.0"}]}}}`))
	manifest, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(manifestPath, []byte(strings.Replace(string(manifest), "/down.json", "/up.json", 1)), 0o644)
	if out, code := cli(t, env, "components", "sync"); code != 0 || !strings.Contains(out, `"changed":1`) {
		t.Fatalf("components sync: %s (exit %d)", out, code)
	}
	if out, code := cli(t, env, "check"); code != 0 || !strings.Contains(out, `"status":"completed"`) || !strings.Contains(out, `"failed":0`) {
		t.Fatalf("check with every source answering: %s (exit %d), want completed and exit 0", out, code)
	} else {
		wantFailures(t, out, []map[string]any{})
	}
}

// wantFailures checks the "failures" of a check's JSON line: present (an
// empty list when none failed), each with its source, kind and message.
func wantFailures(t *testing.T, line string, want []map[string]any) {
	t.Helper()
	var got struct {
		Failures *[]map[string]any `json:"failures"`
	}
	if err := json.Unmarshal([]byte(line), &got); err != nil || got.Failures == nil {
		t.Fatalf("check line without a failures list (%v): %s", err, line)
	}
	g, _ := json.Marshal(*got.Failures)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("failures = %s\nwant       %s", g, w)
	}
}

func TestUsageAndBadInput(t *testing.T) {
	t.Parallel()
	if _, code := cli(t, nil); code != 2 {
		t.Fatalf("no command: exit %d, want 2", code)
	}
	// An unknown command is told in one line, with where the usage is,
	// not with the whole usage text; so is an unknown subcommand.
	for _, tc := range []struct {
		args    []string
		mistake string
		pointer string
	}{
		{[]string{"frobnicate"}, `upcheck: unknown command "frobnicate"`, `Run "upcheck help" for the list of commands.`},
		{[]string{"frobnicate", "--help"}, `upcheck: unknown command "frobnicate"`, `Run "upcheck help" for the list of commands.`},
		{[]string{"token", "frobnicate"}, `upcheck token: unknown command "frobnicate"`, `Run "upcheck help token" for its usage.`},
		{[]string{"components"}, `upcheck components: want "sync"`, `Run "upcheck help components" for its usage.`},
		// A misspelled flag: one line, not the flag package's dump.
		{[]string{"check", "--manaul"}, `upcheck check: flag provided but not defined: -manaul`, `Run "upcheck help check" for its usage.`},
		{[]string{"token", "create", "--emial", "x"}, `upcheck token create: flag provided but not defined: -emial`, `Run "upcheck help token" for its usage.`},
		// A skip names what it lacks, not all three arguments.
		{[]string{"skip", "core", "2.4.0"}, `upcheck skip: --reason R is required: why this site does not take 2.4.0 (kept in the audit log)`, `Run "upcheck help skip" for its usage.`},
		{[]string{"skip", "core", "--reason", "r"}, `upcheck skip: VERSION is required: the version of core to skip`, `Run "upcheck help skip" for its usage.`},
	} {
		stdout, stderr, code := cliOut(t, map[string]string{"UPCHECK_DATABASE_URL": "postgres://nowhere.invalid/x"}, tc.args...)
		if code != 2 || stdout != "" || stderr != tc.mistake+"\n"+tc.pointer+"\n" {
			t.Errorf("upcheck %s: exit %d, stdout %q, stderr %q; want exit 2 and\n%s\n%s",
				strings.Join(tc.args, " "), code, stdout, stderr, tc.mistake, tc.pointer)
		}
	}
	// --version is `upcheck version`.
	for _, arg := range []string{"version", "--version"} {
		if stdout, stderr, code := cliOut(t, nil, arg); code != 0 || stderr != "" || !strings.HasPrefix(stdout, "upcheck dev") {
			t.Errorf("upcheck %s: exit %d, stdout %q, stderr %q; want the version", arg, code, stdout, stderr)
		}
	}
	// The pointer leads somewhere: help for a command is its usage.
	if stdout, stderr, code := cliOut(t, nil, "help", "token"); code != 0 || stderr != "" ||
		!strings.Contains(stdout, "upcheck token create") || strings.Contains(stdout, "upcheck check") {
		t.Fatalf("help token: exit %d, stdout %q, stderr %q; want the token commands alone", code, stdout, stderr)
	}
	if _, code := cli(t, nil, "check", "--nope"); code != 2 {
		t.Fatalf("unknown flag: exit %d, want 2", code)
	}
	if _, code := cli(t, map[string]string{"UPCHECK_TEST_TIMINGS": "lease=oops"}, "check"); code != 1 {
		t.Fatalf("bad configuration: exit %d, want 1", code)
	}
	// Signing refuses a document upcheck would refuse to read.
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"format": 2}`), 0o644)
	err := run(context.Background(), []string{"publisher", "sign", bad}, func(k string) string {
		return map[string]string{"UPCHECK_PUBLISHER_KEY": "ed25519-private:" + strings.Repeat("A", 43) + "="}[k]
	}, nil, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || errors.Is(err, errUsage) {
		t.Fatalf("signing an invalid document: %v", err)
	}
}

// A manifest refused as a whole changes nothing.
func TestBadManifestChangesNothing(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"components": [{"code": "core", "name": "Core", "version": "1.0.0"}, {"code": "blog", "name": "Blog", "version": "1.0.0"}]}`), 0o644)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"components": [{"code": "core", "name": "Core", "version": "2.0.0"}, {"code": "blog", "name": "Blog", "version": "1.0"}]}`), 0o644)
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL}
	if _, code := cli(t, env, "components", "sync", "--manifest", good); code != 0 {
		t.Fatal("good manifest refused")
	}
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"components", "sync", "--manifest", bad}, func(k string) string { return env[k] }, nil, &bytes.Buffer{}, &stderr)
	if err == nil || !strings.Contains(err.Error(), `components[1] ("blog"): version "1.0" is not a semantic version`) {
		t.Fatalf("bad manifest: %v", err)
	}
	var core string
	if err := d.Pool.QueryRow(context.Background(), "SELECT installed_version FROM components WHERE code = 'core'").Scan(&core); err != nil || core != "1.0.0" {
		t.Fatalf("core after a refused manifest = %q (%v), want 1.0.0 unchanged", core, err)
	}
}

// `user add` reads the password from stdin; `token create` prints a token
// that the API accepts with that user's permissions.
func TestUserAddAndTokenCreate(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "STDIN": "a long enough password\n"}
	out, code := cli(t, env, "user", "add", "--email", "ops@example.test", "--role", "viewer")
	if code != 0 || !strings.Contains(out, `"role":"viewer"`) {
		t.Fatalf("user add: %s (exit %d)", out, code)
	}
	var hash string
	d.QueryRow(t, "SELECT password_hash FROM users WHERE email = 'ops@example.test'").Scan(&hash)
	if !strings.HasPrefix(hash, "$argon2id$") || strings.Contains(hash, "a long enough password") {
		t.Fatalf("stored password = %q, want an argon2id hash", hash)
	}
	if _, code := cli(t, map[string]string{"UPCHECK_DATABASE_URL": d.URL, "STDIN": "short\n"}, "user", "add", "--email", "x@example.test", "--role", "admin"); code != 1 {
		t.Fatalf("short password: exit %d, want 1", code)
	}
	if _, code := cli(t, env, "user", "add", "--email", "y@example.test", "--role", "root"); code != 2 {
		t.Fatalf("bad role: exit %d, want 2", code)
	}
	out, code = cli(t, env, "token", "create", "--email", "ops@example.test")
	token := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(token, "upc_") {
		t.Fatalf("token create: %q (exit %d)", out, code)
	}
	var stored int
	d.QueryRow(t, "SELECT count(*) FROM api_tokens WHERE position($1 in encode(token_hash, 'escape')) > 0", token).Scan(&stored)
	if stored != 0 {
		t.Fatal("the raw token is stored")
	}
	if _, code := cli(t, env, "token", "create", "--email", "nobody@example.test"); code != 1 {
		t.Fatalf("token for an unknown user: exit %d, want 1", code)
	}
}
