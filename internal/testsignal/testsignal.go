// Package testsignal lets a component tell a test what it did, so that the
// test waits for that rather than for long enough (River's testsignal).
// Production code leaves every Signal zero, and a zero Signal is never
// sent. It lives outside internal/testing because product packages send
// on it, and they import no test harness.
package testsignal

import "time"

// Signal carries values of T from the component to a test.
type Signal[T any] struct {
	c chan T
}

// Init makes room for n values; a test calls it before the component runs.
// A send beyond the room waits for the test to receive.
func (s *Signal[T]) Init(n int) { s.c = make(chan T, n) }

// Send hands v to the test; it does nothing on a zero Signal.
func (s *Signal[T]) Send(v T) {
	if s.c != nil {
		s.c <- v
	}
}

// Len is how many values were sent and not yet received.
func (s *Signal[T]) Len() int { return len(s.c) }

// TB is the part of testing.TB that Wait uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Wait returns the next value, or fails tb when none comes within timeout;
// what says what was awaited.
func (s *Signal[T]) Wait(tb TB, what string, timeout time.Duration) T {
	tb.Helper()
	select {
	case v := <-s.c:
		return v
	case <-time.After(timeout):
		tb.Fatalf("%s: not within %s", what, timeout)
	}
	var zero T
	return zero
}
