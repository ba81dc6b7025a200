// Package namedpipe makes the named pipes that tests put where upcheck
// expects a regular file (a lockfile, a manifest, an .npmrc, a command's
// file), to hold that nothing blocks on one.
package namedpipe

import (
	"os"
	"syscall"
	"testing"
)

// New makes a named pipe at path that nothing writes to. The test's
// clean-up opens it for writing, which lets a reader blocked in open (the
// bug the test guards) go, so a failing test ends instead of hanging.
func New(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
}
