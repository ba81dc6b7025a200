package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upcheck/upcheck/internal/testing/namedpipe"
	"github.com/upcheck/upcheck/internal/testing/pgtest"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// fifo makes a named pipe nothing writes to, named name in a folder of
// the test's own.
func fifo(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	namedpipe.New(t, path)
	return path
}

// cliPromptly is cliOut, failing the test if the command has not returned
// within wait.Guard.
func cliPromptly(t *testing.T, env map[string]string, args ...string) (stderr string, code int) {
	t.Helper()
	wait.Returns(t, "upcheck "+strings.Join(args, " "), func() { _, stderr, code = cliOut(t, env, args...) })
	return stderr, code
}

// A named pipe given to `upcheck feed import` is refused at once, in words,
// before the lease, instead of waiting for a writer that never comes; so
// is one given to `upcheck publisher lint` and to `--key-file`.
func TestANamedPipeGivenToACommandIsRefusedPromptly(t *testing.T) {
	t.Parallel()
	d := pgtest.New(t)
	env := map[string]string{"UPCHECK_DATABASE_URL": d.URL}
	for _, args := range [][]string{
		{"feed", "import", "osv", fifo(t, "all.zip")},
		{"feed", "import", "kev", fifo(t, "kev.json")},
		{"publisher", "lint", fifo(t, "updates.json")},
		{"source", "import", "--source", "offline:acme", fifo(t, "updates.json")},
	} {
		stderr, code := cliPromptly(t, env, args...)
		want := args[len(args)-1] + " is not a regular file (it is a named pipe)"
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("upcheck %s: exit %d, stderr %q; want exit 1 saying %q", strings.Join(args, " "), code, stderr, want)
		}
	}
	doc := filepath.Join(t.TempDir(), "updates.json")
	if err := os.WriteFile(doc, []byte(`{"format": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	key := fifo(t, "key")
	stderr, code := cliPromptly(t, env, "publisher", "sign", "--key-file", key, doc)
	if want := key + " is not a regular file (it is a named pipe)"; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("publisher sign --key-file FIFO: exit %d, stderr %q; want exit 1 saying %q", code, stderr, want)
	}
	var runs int
	d.QueryRow(t, `SELECT count(*) FROM feed_syncs`).Scan(&runs)
	if runs != 0 {
		t.Errorf("%d feed sync runs recorded for refused imports, want none", runs)
	}
}
