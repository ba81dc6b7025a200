package lockfile_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upcheck/upcheck/internal/localfile"
	"github.com/upcheck/upcheck/internal/lockfile"
	"github.com/upcheck/upcheck/internal/testing/namedpipe"
	"github.com/upcheck/upcheck/internal/testing/wait"
)

// A named pipe at the lockfile's path (nothing writes to it) is refused at
// once, in words, by a look, a sync's read and the watcher's run, which
// still stops when serve shuts down; the components last applied stay.
func TestANamedPipeAtTheLockfilePathIsRefusedWithoutBlocking(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "package-lock.json")
	write(t, path, npmLock("1.0.0"))
	a := &applier{}
	w := lockfile.NewWatcher(path, lockfile.Options{}, a.apply)
	if applied, err := w.Look(t.Context()); !applied || err != nil {
		t.Fatalf("the first look: %v, %v", applied, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	namedpipe.New(t, path)
	want := path + " is not a regular file (it is a named pipe)"

	var err error
	wait.Returns(t, "a look at a named pipe", func() { _, err = w.Look(t.Context()) })
	if !errors.Is(err, localfile.ErrNotRegular) || !strings.Contains(err.Error(), want) {
		t.Errorf("look: %v; want %q", err, want)
	}
	wait.Returns(t, "a sync's read of a named pipe", func() { _, err = lockfile.Read(path, lockfile.Options{}) })
	if !errors.Is(err, localfile.ErrNotRegular) {
		t.Errorf("read: %v", err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	reports := make(chan error, 1)
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		w.Run(ctx, time.Millisecond, func(err error) { reports <- err })
	}()
	wait.Returns(t, "the watcher's report", func() { err = <-reports })
	if !errors.Is(err, localfile.ErrNotRegular) {
		t.Errorf("the watcher reported %v", err)
	}
	cancel()
	wait.Returns(t, "the watcher's stop at shutdown", func() { <-ran })
	if got := a.versions(); got != "1.0.0" {
		t.Errorf("applied %q, want the first content only", got)
	}
}

// A directory or a device at the path is refused the same way.
func TestOnlyARegularFileIsALockfile(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]string{
		t.TempDir(): "is not a regular file (it is a directory)",
		"/dev/zero": "is not a regular file (it is a device)",
	} {
		var err error
		wait.Returns(t, "a read of "+path, func() { _, err = lockfile.Read(path, lockfile.Options{}) })
		if !errors.Is(err, localfile.ErrNotRegular) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", path, err, want)
		}
	}
}
