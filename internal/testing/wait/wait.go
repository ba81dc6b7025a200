// Package wait is the tests' one way to wait for a condition: a test
// waits on something it can observe (a row, a counter, a page's text, a
// request that arrived), never for a fixed time.
//
// For asks at once, then again with a growing pause (1 ms up to 50 ms),
// until the condition holds, the condition fails, or the time allowed has
// passed; no assertion may depend on how often it asks. On a timeout the
// test fails with what it waited for and the condition's last word.
package wait

import (
	"fmt"
	"testing"
	"time"
)

// Guard is the time allowed by the callers that have no reason to choose
// another: long enough for a loaded machine, short enough to fail a hung
// test in the same run.
const Guard = 30 * time.Second

// For calls cond until it returns true, and fails t (t.Fatalf: call it from
// the test's goroutine) when cond returns an error or when within has
// passed. what says what the test waits for ("the event delivered"); cond
// may return false with a non-nil *Pending to say how far things are.
func For(t testing.TB, what string, within time.Duration, cond func() (bool, error)) {
	t.Helper()
	if err := Until(within, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// True is For with a condition that cannot fail.
func True(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	For(t, what, within, func() (bool, error) { return cond(), nil })
}

// Pending is what a condition returns, with false, to say how far things
// are; a timeout's message carries it.
type Pending struct{ Now string }

func (p *Pending) Error() string { return p.Now }

// Notf is a Pending with a formatted message.
func Notf(format string, args ...any) *Pending {
	return &Pending{Now: fmt.Sprintf(format, args...)}
}

// Until is For for goroutines that may not fail the test (an HTTP handler,
// a helper's goroutine): it returns nil once cond holds, cond's error, or
// an error that says the time ran out (with cond's last *Pending).
func Until(within time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(within)
	pause := time.Millisecond
	for {
		ok, err := cond()
		var last *Pending
		if p, isPending := err.(*Pending); isPending {
			last, err = p, nil
		}
		switch {
		case err != nil:
			return err
		case ok:
			return nil
		case !time.Now().Before(deadline):
			if last != nil {
				return fmt.Errorf("not within %s (%s)", within, last.Now)
			}
			return fmt.Errorf("not within %s", within)
		}
		timer := time.NewTimer(min(pause, time.Until(deadline)))
		<-timer.C
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// Returns runs f and fails t (t.Fatalf) if f has not returned within
// Guard: a deadline that only a hang reaches, for code that must not block
// (a read of a named pipe, a lock held across an open). f runs on its own
// goroutine, so it must not call t.Fatal.
func Returns(t testing.TB, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	timer := time.NewTimer(Guard)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		t.Fatalf("%s did not return within %s", what, Guard)
	}
}
