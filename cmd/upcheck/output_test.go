package main

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/publisher"
	"github.com/upcheck/upcheck/internal/testing/testbin"
)

// The real binary, as an operator's script runs it: a one-shot command
// prints its result on stdout and nothing else, and no log line at all
// (neither upcheck's, River's nor the migrations') unless
// UPCHECK_LOG_LEVEL=DEBUG, which sends them to stderr, never to stdout.
func TestOneShotCommandsPrintTheirResultOnly(t *testing.T) {
	t.Parallel()
	binary := filepath.Join(t.TempDir(), "upcheck")
	if err := testbin.Build(binary); err != nil {
		t.Fatal(err)
	}
	d := pgtest.New(t)
	pub := publisher.New(t)
	pub.Set("/feed.json", []byte(`{"format": 1, "publisher": "acme", "sequence": 1, "packages": {"blog": {"releases": [{"version": "2.0.0"}]}}}`))
	pub.Fail("/down.json", http.StatusBadGateway)
	manifest := filepath.Join(t.TempDir(), "manifest.json")
	os.WriteFile(manifest, []byte(`{"components": [
	  {"code": "core", "name": "Core", "version": "1.0.0"},
	  {"code": "blog", "name": "Blog", "version": "1.0.0", "source": "`+pub.URL+`/feed.json"},
	  {"code": "shop", "name": "Shop", "version": "1.0.0", "source": "`+pub.URL+`/down.json"}]}`), 0o644)
	env := []string{"UPCHECK_DATABASE_URL=" + d.URL, "UPCHECK_MANIFEST=" + manifest, "UPCHECK_ALLOW_PRIVATE_SOURCES=1",
		"UPCHECK_TEST_TIMINGS=lease=3s,heartbeat=500ms,cooldown=30s"}
	upcheck := func(level string, args ...string) (stdout, stderr string, code int) {
		t.Helper()
		cmd := exec.Command(binary, args...)
		cmd.Env = append(env, "PATH="+os.Getenv("PATH"), "UPCHECK_LOG_LEVEL="+level)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
	}
	oneLine := func(what, stdout, prefix string) {
		t.Helper()
		if strings.Count(stdout, "\n") != 1 || !strings.HasPrefix(stdout, prefix) {
			t.Fatalf("%s: stdout %q, want one line starting %q", what, stdout, prefix)
		}
	}

	for _, level := range []string{"", "INFO", "WARN"} {
		stdout, stderr, code := upcheck(level, "migrate")
		if code != 0 || stdout != "" || stderr != "" {
			t.Fatalf("migrate at level %q: exit %d, stdout %q, stderr %q; want silence", level, code, stdout, stderr)
		}
		stdout, stderr, code = upcheck(level, "components", "sync")
		if code != 0 || stderr != "" {
			t.Fatalf("components sync at level %q: exit %d, stderr %q", level, code, stderr)
		}
		oneLine("components sync", stdout, `{"components":3,`)
		// The check warns that shop's source failed: its JSON line says
		// so, and no log line does.
		stdout, stderr, code = upcheck(level, "check")
		if code != 7 || stderr != "" {
			t.Fatalf("check at level %q: exit %d, stderr %q; want 7 and nothing on stderr", level, code, stderr)
		}
		oneLine("check", stdout, `{"status":"completed_with_failures",`)
	}

	stdout, stderr, code := upcheck("DEBUG", "check")
	if code != 7 {
		t.Fatalf("check at DEBUG: exit %d, stderr %q", code, stderr)
	}
	oneLine("check at DEBUG", stdout, `{"status":"completed_with_failures",`)
	for _, want := range []string{`level=DEBUG msg=wired`, `level=INFO msg="update check started"`,
		`level=WARN msg="update source failed"`, `rivermigrate`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("check at DEBUG: stderr does not have %q:\n%s", want, stderr)
		}
	}
	if _, stderr, _ := upcheck("DEBUG", "migrate"); !strings.Contains(stderr, "rivermigrate") {
		t.Errorf("migrate at DEBUG: stderr does not have River's migration lines:\n%s", stderr)
	}
}
