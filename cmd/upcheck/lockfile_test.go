package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/upcheck/upcheck/internal/readmodel"
	"github.com/upcheck/upcheck/internal/store"

	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/testkit"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// cliStderr runs the program like cli and also returns its stderr.
func cliStderr(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errOut)
	code = exitCode(err, &errOut)
	return out.String(), errOut.String(), code
}

// serveCLI runs `upcheck serve` through run until the test ends, which
// then waits for it to stop cleanly; its stderr (the log) is returned.
func serveCLI(t *testing.T, env map[string]string) *testkit.Buffer {
	t.Helper()
	logs := &testkit.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve"}, func(k string) string { return env[k] }, strings.NewReader(""), &bytes.Buffer{}, logs)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v\n%s", err, logs)
			}
		case <-time.After(time.Minute):
			t.Error("serve did not stop")
		}
	})
	return logs
}

// installed is the installed version and source of component code, "" when
// there is no such component.
func installed(t *testing.T, d *pgtest.DB, code string) (version, source string) {
	t.Helper()
	var src *string
	err := d.Pool.QueryRow(context.Background(), "SELECT installed_version, source_url FROM components WHERE code = $1", code).Scan(&version, &src)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ""
	}
	if err != nil {
		t.Fatal(err)
	}
	if src != nil {
		source = *src
	}
	return version, source
}

// What `components sync` refuses before it reads anything: both sources of
// components at once, lockfile flags beside a manifest, a glob that is not
// one; and a lockfile that cannot be read is refused with the lockfile's
// own error (file, line and field), as a bad manifest is (exit 1), leaving
// the components as they were. A broken .npmrc stops the command with its
// file and line, never its token.
func TestComponentsSyncLockfileRefusals(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	dir := t.TempDir()
	manifestPath := filepath.Join(dir, "manifest.json")
	os.WriteFile(manifestPath, []byte(`{"components": [{"code": "core", "name": "Core", "version": "1.0.0"}]}`), 0o644)
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL}
	if _, code := cli(t, env, "components", "sync", "--manifest", manifestPath); code != 0 {
		t.Fatal("manifest sync failed")
	}
	lock := filepath.Join(dir, "package-lock.json")
	os.WriteFile(lock, []byte("{\n  \"lockfileVersion\": 3,\n  \"packages\": {\n    \"\": {\"dependencies\": {\"left-pad\": \"^1.0.0\"}},\n    \"node_modules/left-pad\": {\"resolved\": \"x\"}\n  }\n}\n"), 0o644)
	pnpm := filepath.Join(dir, "pnpm-lock.yaml")
	os.WriteFile(pnpm, []byte("lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n      left-pad:\n        specifier: ^1.0.0\n"), 0o644)

	good := filepath.Join(dir, "good", "package-lock.json")
	os.MkdirAll(filepath.Dir(good), 0o755)
	os.WriteFile(good, []byte(`{"lockfileVersion": 3, "packages": {"": {"dependencies": {"left-pad": "^1.0.0"}}, "node_modules/left-pad": {"version": "1.3.0"}}}`), 0o644)
	for _, c := range []struct {
		args []string
		env  map[string]string
		code int
		want []string
	}{
		{[]string{"--manifest", manifestPath, "--lockfile", lock}, nil, 2, []string{"--manifest and --lockfile are exclusive", `Run "upcheck help components"`}},
		{[]string{"--manifest", manifestPath, "--include", "@acme/*"}, nil, 2, []string{"--include and --core choose a lockfile's packages"}},
		{[]string{"--lockfile", lock, "--include", "@acme/[x"}, nil, 2, []string{`include "@acme/[x" is not a glob`}},
		{[]string{"--lockfile", lock, "--core", "Bad Name"}, nil, 2, []string{"core:"}},
		{nil, map[string]string{"UPCHECK_MANIFEST": manifestPath, "UPCHECK_LOCKFILE": lock}, 1, []string{"UPCHECK_MANIFEST and UPCHECK_LOCKFILE are both set"}},
		{[]string{"--lockfile", lock}, nil, 1, []string{lock + " line 5", `packages["node_modules/left-pad"]`, "has no version"}},
		{nil, map[string]string{"UPCHECK_LOCKFILE": lock}, 1, []string{lock + " line 5", "has no version"}},
		{[]string{"--lockfile", pnpm}, nil, 1, []string{pnpm + " line 5", `importers["."].dependencies["left-pad"].version is missing`}},
		{[]string{"--lockfile", filepath.Join(dir, "missing", "package-lock.json")}, nil, 1, []string{"read lockfile", "no such file"}},
		{[]string{"--lockfile", good}, nil, 1, []string{"invalid lockfile: " + good + ": no package is the core: name the core's package with --core or UPCHECK_LOCKFILE_CORE"}},
		{[]string{"--lockfile", good, "--core", "@acme/core"}, nil, 1, []string{good + ": the core @acme/core is not installed at the top level"}},
		// A flag names the file whatever the other variable says.
		{[]string{"--lockfile", good}, map[string]string{"UPCHECK_MANIFEST": manifestPath}, 1, []string{good + ": no package is the core"}},
	} {
		e := map[string]string{"UPCHECK_DATABASE_URL": d.URL}
		for k, v := range c.env {
			e[k] = v
		}
		stdout, stderr, code := cliStderr(t, e, append([]string{"components", "sync"}, c.args...)...)
		if code != c.code || stdout != "" {
			t.Errorf("sync %v %v: exit %d, stdout %q, want exit %d and nothing on stdout\nstderr: %s", c.args, c.env, code, stdout, c.code, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("sync %v %v: stderr %q, want %q in it", c.args, c.env, stderr, w)
			}
		}
	}
	if v, _ := installed(t, d, "core"); v != "1.0.0" {
		t.Fatalf("core after refused syncs: %q, want 1.0.0 as the manifest had it", v)
	}

	// A broken .npmrc: the file, the line and the problem; not the token.
	npmrc := filepath.Join(dir, ".npmrc")
	os.WriteFile(npmrc, []byte("//npm.example.org/:_authToken=npm_SECRET0123456789\n@acme:registry=ftp://npm.example.org/\n"), 0o600)
	_, stderr, code := cliStderr(t, map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_NPMRC": npmrc, "UPCHECK_LOG_LEVEL": "DEBUG"},
		"components", "sync", "--manifest", manifestPath)
	if code != 1 || !strings.Contains(stderr, npmrc+" line 2 (@acme:registry)") || !strings.Contains(stderr, "not an http or https URL") || strings.Contains(stderr, "SECRET") {
		t.Fatalf("broken .npmrc: exit %d, stderr %q; want exit 1 naming the file and line 2, without the token", code, stderr)
	}
	// Its ${NAME} references come from the command's environment, NPM_*
	// ones only: never upcheck's own settings.
	os.WriteFile(npmrc, []byte("registry=https://npm.example.org/\n//npm.example.org/:_authToken=${UPCHECK_DATABASE_URL}\n"), 0o600)
	e := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_NPMRC": npmrc}
	_, stderr, code = cliStderr(t, e, "components", "sync", "--manifest", manifestPath)
	if code != 1 || !strings.Contains(stderr, npmrc+" line 2") || !strings.Contains(stderr, "not ${UPCHECK_DATABASE_URL}") || strings.Contains(stderr, d.URL) {
		t.Fatalf(".npmrc naming upcheck's own setting: exit %d, stderr %q", code, stderr)
	}
	os.WriteFile(npmrc, []byte("registry=https://npm.example.org/\n//npm.example.org/:_authToken=${NPM_SITE_TOKEN}\n"), 0o600)
	_, stderr, code = cliStderr(t, e, "components", "sync", "--manifest", manifestPath)
	if code != 1 || !strings.Contains(stderr, npmrc+" line 2") || !strings.Contains(stderr, "NPM_SITE_TOKEN is not set") {
		t.Fatalf(".npmrc naming an unset variable: exit %d, stderr %q", code, stderr)
	}
	e["NPM_SITE_TOKEN"] = "npm_SECRET0123456789"
	if _, stderr, code = cliStderr(t, e, "components", "sync", "--manifest", manifestPath); code != 0 {
		t.Fatalf(".npmrc with its variable set: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = cliStderr(t, map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_NPMRC": filepath.Join(dir, "none")}, "check")
	if code != 1 || !strings.Contains(stderr, "UPCHECK_NPMRC") {
		t.Fatalf("missing .npmrc: exit %d, stderr %q; want exit 1 naming UPCHECK_NPMRC", code, stderr)
	}
}

// serve with a lockfile it cannot read at start says so loudly and keeps
// the components as stored; serve with a manifest and a lockfile refuses
// to start. It names the registry of its .npmrc, never the token.
func TestServeKeepsTheComponentsOfABadLockfile(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	dir := t.TempDir()
	manifestPath := filepath.Join(dir, "manifest.json")
	os.WriteFile(manifestPath, []byte(`{"components": [{"code": "core", "name": "Core", "version": "1.0.0"}]}`), 0o644)
	if _, code := cli(t, map[string]string{"UPCHECK_DATABASE_URL": d.URL}, "components", "sync", "--manifest", manifestPath); code != 0 {
		t.Fatal("manifest sync failed")
	}
	lock := filepath.Join(dir, "package-lock.json")
	os.WriteFile(lock, []byte("{\n  \"lockfileVersion\": 1,\n  \"dependencies\": {}\n}\n"), 0o644)
	// The site's .npmrc, with a token that must appear in no log line.
	npmrc := filepath.Join(dir, ".npmrc")
	os.WriteFile(npmrc, []byte("registry=https://npm.example.org/\n//npm.example.org/:_authToken=npm_SECRET0123456789\n"), 0o600)
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_LISTEN": "127.0.0.1:0", "UPCHECK_LOCKFILE": lock,
		"UPCHECK_NPMRC": npmrc, "UPCHECK_LOG_LEVEL": "DEBUG", "UPCHECK_METRICS_PUBLIC": "1",
		"UPCHECK_LOCKFILE_CORE": "@site/core", "UPCHECK_TEST_TIMINGS": "lockfile=50ms"}

	_, stderr, code := cliStderr(t, map[string]string{"UPCHECK_DATABASE_URL": d.URL, "UPCHECK_LISTEN": "127.0.0.1:0",
		"UPCHECK_LOCKFILE": lock, "UPCHECK_MANIFEST": manifestPath}, "serve")
	if code != 1 || !strings.Contains(stderr, "UPCHECK_MANIFEST and UPCHECK_LOCKFILE are both set") {
		t.Fatalf("serve with both: exit %d, stderr %q", code, stderr)
	}

	logs := serveCLI(t, env)
	wait.True(t, "serve to listen", wait.Guard, func() bool { return strings.Contains(logs.String(), "msg=serving") })
	// Said at start, before serve listens (and so before any check).
	l, _, _ := strings.Cut(logs.String(), "msg=serving")
	if !strings.Contains(l, `level=ERROR msg="lockfile refused; keeping the installed components as they were"`) ||
		!strings.Contains(l, lock+" line 2: lockfileVersion 1 is not read") {
		t.Fatalf("serve's log before it listened %q: want an ERROR naming the file, the line and the problem", l)
	}
	if v, _ := installed(t, d, "core"); v != "1.0.0" {
		t.Fatalf("core under a bad lockfile: %q, want 1.0.0 as stored", v)
	}
	if !strings.Contains(l, `msg="npm registries" default=https://npm.example.org/`) || strings.Contains(logs.String(), "SECRET") {
		t.Fatalf("serve's log %q: want the registry named and never the token", logs)
	}

	// Not only the log says it: the summary (every instance's dashboard
	// banner) and /metrics do, until the lockfile is accepted again.
	_, rest, _ := strings.Cut(logs.String(), "msg=serving addr=")
	addr, _, _ := strings.Cut(rest, " ")
	st := store.New(d.Pool)
	refusals := func() readmodel.InputRefusals {
		t.Helper()
		sum, err := st.Summary(context.Background(), store.LocalSite, readmodel.DevSeparate)
		if err != nil {
			t.Fatal(err)
		}
		return sum.InputRefusals
	}
	metric := func() string {
		t.Helper()
		res, err := http.Get(addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		for line := range strings.Lines(string(b)) {
			if strings.HasPrefix(line, `upcheck_input_refused{input="lockfile"}`) {
				return strings.TrimSpace(line)
			}
		}
		return ""
	}
	if r := refusals(); len(r) != 1 || r[0].Input != readmodel.InputLockfile || r[0].Path != lock ||
		!strings.Contains(r[0].Error, "line 2: lockfileVersion 1 is not read") {
		t.Fatalf("refused inputs in the summary: %+v, want the lockfile with its error", r)
	}
	if m := metric(); m != `upcheck_input_refused{input="lockfile"} 1` {
		t.Fatalf("/metrics: %q, want the lockfile refused", m)
	}
	os.WriteFile(lock, []byte(`{"lockfileVersion": 3, "packages": {
  "": {"name": "site", "dependencies": {"@site/core": "^2.0.0"}},
  "node_modules/@site/core": {"version": "2.0.0"}
}}`), 0o644)
	wait.True(t, "the lockfile accepted again", wait.Guard, func() bool { return len(refusals()) == 0 })
	if m := metric(); m != `upcheck_input_refused{input="lockfile"} 0` {
		t.Fatalf("/metrics after the lockfile was accepted: %q, want 0", m)
	}
	if !strings.Contains(logs.String(), `msg="lockfile accepted again"`) {
		t.Fatalf("serve's log %q: want the lockfile accepted again", logs)
	}
}
