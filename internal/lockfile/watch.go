package lockfile

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// WatchInterval is how often serve looks at its lockfile
// (UPCHECK_LOCKFILE).
const WatchInterval = 10 * time.Second

// Watcher applies a lockfile's components whenever its content changes: a
// plugin upgraded outside upcheck is re-evaluated as soon as the lockfile
// says so, never shown as still outdated. Each look reads the file and
// compares its content (a hash), not its size and time, which an edit in
// the same clock tick can keep: a content that was applied is not applied
// again, and one that failed to apply is tried again on the next look.
type Watcher struct {
	path  string
	opt   Options
	apply func(context.Context, *Lockfile) error

	reads atomic.Uint64 // numbers each look's read of the file as it ends

	mu      sync.Mutex // one apply at a time: the ticker's and a check's
	applied [32]byte   // the content last applied
	done    bool       // applied holds a content
	read    uint64     // the number of the read that gave applied
}

// NewWatcher returns a Watcher of the lockfile at path that hands each new
// content's read (its components and its tree) to apply (the sync).
func NewWatcher(path string, opt Options, apply func(context.Context, *Lockfile) error) *Watcher {
	return &Watcher{path: path, opt: opt, apply: apply}
}

// Look applies the lockfile when its content changed since it was last
// applied; applied says whether it did. An unreadable or invalid lockfile
// is an error (naming the file, line and field; anything but a regular
// file is refused unread), and the components last applied stay as they
// are.
//
// The file is read outside the lock, so that a look whose read is slow
// holds no other look; of two looks, the one whose read ended later wins:
// a content read earlier is not applied over it.
func (w *Watcher) Look(ctx context.Context) (applied bool, err error) {
	body, err := readFile(w.path)
	if err != nil {
		return false, err
	}
	n := w.reads.Add(1) // after the read: the order in which reads ended
	sum := sha256.Sum256(body)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done && (sum == w.applied || n < w.read) {
		return false, nil
	}
	l, err := parse(w.path, body, sum, w.opt)
	if err != nil {
		return false, err
	}
	if err := w.apply(ctx, l); err != nil {
		return false, err
	}
	w.applied, w.done, w.read = sum, true, n
	return true, nil
}

// Run looks every interval until ctx ends. report hears every look's
// error, once for each error in a row that says the same, and nil from the
// looks that apply a new content or succeed after one that failed.
func (w *Watcher) Run(ctx context.Context, interval time.Duration, report func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var last string
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		applied, err := w.Look(ctx)
		switch {
		case err == nil:
			if applied || last != "" {
				report(nil)
			}
			last = ""
		case errors.Is(err, context.Canceled) && ctx.Err() != nil:
			return
		case err.Error() != last:
			last = err.Error()
			report(err)
		}
	}
}
