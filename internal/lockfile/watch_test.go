package lockfile_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/upcheck/upcheck/internal/lockfile"
)

func npmLock(blog string) string {
	return `{"lockfileVersion": 3, "packages": {
  "": {"dependencies": {"@vitnode/core": "2.0.0", "@vitnode/blog": "^1"}},
  "node_modules/@vitnode/core": {"version": "2.0.0"},
  "node_modules/@vitnode/blog": {"version": "` + blog + `"}
}}`
}

type applier struct {
	mu   sync.Mutex
	seen []string // the blog's version at each apply
	fail error
}

func (a *applier) apply(_ context.Context, l *lockfile.Lockfile) error {
	m := l.Manifest
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fail != nil {
		return a.fail
	}
	for _, c := range m.Components {
		if c.Name == "@vitnode/blog" {
			a.seen = append(a.seen, c.Version)
		}
	}
	return nil
}

func (a *applier) versions() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return strings.Join(a.seen, " ")
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A content is applied once; a new one (an upgrade made outside upcheck)
// is applied at the next look; an invalid one changes nothing; one whose
// apply failed is applied at the next look.
func TestWatcherAppliesEachNewContentOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "package-lock.json")
	write(t, path, npmLock("1.0.0"))
	a := &applier{}
	w := lockfile.NewWatcher(path, lockfile.Options{Core: "@vitnode/core"}, a.apply)
	look := func(want bool) {
		t.Helper()
		applied, err := w.Look(t.Context())
		if err != nil || applied != want {
			t.Fatalf("look: applied %v, %v; want applied %v", applied, err, want)
		}
	}
	look(true)
	look(false)
	write(t, path, npmLock("1.1.0"))
	look(true)
	write(t, path, npmLock("1.1.0")) // the same content again
	look(false)
	write(t, path, `{"lockfileVersion": 3, "packages": {"node_modules/x": {}}}`)
	if _, err := w.Look(t.Context()); !errors.Is(err, lockfile.ErrInvalid) || !strings.Contains(err.Error(), path+" line 1") {
		t.Errorf("an invalid lockfile: %v", err)
	}
	write(t, path, npmLock("1.2.0"))
	a.fail = errors.New("the database does not answer")
	if _, err := w.Look(t.Context()); err == nil {
		t.Error("a failed apply is no error")
	}
	a.fail = nil
	look(true)
	if got := a.versions(); got != "1.0.0 1.1.0 1.2.0" {
		t.Errorf("applied %q, want each new content once", got)
	}
}

// Run looks every interval, says an error once while it stays the same,
// and says each look that applied a content (serve clears a refusal then).
func TestWatcherRun(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "package-lock.json")
		write(t, path, npmLock("1.0.0"))
		a := &applier{}
		w := lockfile.NewWatcher(path, lockfile.Options{}, a.apply)
		var reports []string
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			w.Run(ctx, lockfile.WatchInterval, func(err error) {
				if err == nil {
					reports = append(reports, "applied")
					return
				}
				reports = append(reports, err.Error())
			})
			close(done)
		}()
		synctest.Wait()
		if a.versions() != "" {
			t.Error("Run looked before its first interval (serve reads the lockfile at start itself)")
		}
		time.Sleep(lockfile.WatchInterval)
		synctest.Wait()
		write(t, path, "not json")
		for range 3 {
			time.Sleep(lockfile.WatchInterval)
			synctest.Wait()
		}
		write(t, path, npmLock("2.0.0"))
		time.Sleep(lockfile.WatchInterval)
		synctest.Wait()
		cancel()
		<-done
		if got := a.versions(); got != "1.0.0 2.0.0" {
			t.Errorf("applied %q", got)
		}
		if len(reports) != 3 || reports[0] != "applied" || !strings.Contains(reports[1], "malformed JSON") || reports[2] != "applied" {
			t.Errorf("reports %q, want applied, the one error once, applied", reports)
		}
	})
}

// An edit that keeps the file's size and modification time (two writes in
// one clock tick) is applied all the same: the content decides.
func TestWatcherSeesAnEditOfTheSameSizeAndTime(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "package-lock.json")
	write(t, path, npmLock("1.4.0"))
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var a applier
	w := lockfile.NewWatcher(path, lockfile.Options{Include: []string{"@vitnode/*"}, Core: "@vitnode/core"}, a.apply)
	if _, err := w.Look(context.Background()); err != nil {
		t.Fatal(err)
	}
	write(t, path, npmLock("1.5.0"))
	if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	if applied, err := w.Look(context.Background()); err != nil || !applied {
		t.Fatalf("look after an edit of the same size and time: applied %v, %v", applied, err)
	}
	if got := a.versions(); got != "1.4.0 1.5.0" {
		t.Errorf("applied %q, want 1.4.0 then 1.5.0", got)
	}
}

// Looks that race each other and an editor that replaces the file (as npm
// and pnpm do, by renaming) apply contents without a data race, and a look
// after the last edit applies the last content.
func TestWatcherLooksRace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "package-lock.json")
	write(t, path, npmLock("1.0.0"))
	a := &applier{}
	w := lockfile.NewWatcher(path, lockfile.Options{}, a.apply)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := w.Look(t.Context()); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for i := 1; i <= 50; i++ {
		tmp := filepath.Join(dir, "lock.tmp")
		write(t, tmp, npmLock("1.0."+strconv.Itoa(i)))
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if _, err := w.Look(t.Context()); err != nil {
		t.Fatal(err)
	}
	seen := strings.Fields(a.versions())
	if len(seen) == 0 || seen[len(seen)-1] != "1.0.50" {
		t.Errorf("applied %v; want 1.0.50 last", seen)
	}
}
