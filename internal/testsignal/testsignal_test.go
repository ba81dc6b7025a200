package testsignal

import (
	"fmt"
	"testing"
	"time"
)

// A zero Signal is what production holds: a send neither blocks nor
// panics.
func TestZeroSignalIsNeverSent(t *testing.T) {
	t.Parallel()
	var s Signal[int]
	s.Send(1)
	if s.Len() != 0 {
		t.Fatalf("a zero signal holds %d values", s.Len())
	}
}

func TestWaitReturnsWhatWasSent(t *testing.T) {
	t.Parallel()
	var s Signal[string]
	s.Init(1)
	go s.Send("done")
	if got := s.Wait(t, "the send", time.Minute); got != "done" {
		t.Fatalf("Wait = %q, want done", got)
	}
}

// fatal records Fatalf and stops its goroutine as testing.T does.
type fatal struct{ msg string }

func (f *fatal) Helper() {}
func (f *fatal) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f)
}

func TestWaitFailsWhenNothingComes(t *testing.T) {
	t.Parallel()
	var s Signal[int]
	s.Init(1)
	f := &fatal{}
	func() {
		defer func() { _ = recover() }()
		s.Wait(f, "a value", time.Millisecond)
	}()
	if f.msg != "a value: not within 1ms" {
		t.Fatalf("Fatalf said %q", f.msg)
	}
}
