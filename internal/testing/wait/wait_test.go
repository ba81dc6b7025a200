package wait

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A condition that holds at once is asked once, with no pause first.
func TestUntilAsksAtOnce(t *testing.T) {
	t.Parallel()
	calls := 0
	start := time.Now()
	if err := Until(time.Hour, func() (bool, error) { calls++; return true, nil }); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || time.Since(start) > 100*time.Millisecond {
		t.Fatalf("%d calls in %s, want 1 at once", calls, time.Since(start))
	}
}

// A condition that comes true is waited for; one that fails stops the
// wait with its error, however long is left.
func TestUntilWaitsAndStopsOnErrors(t *testing.T) {
	t.Parallel()
	calls := 0
	if err := Until(Guard, func() (bool, error) { calls++; return calls == 5, nil }); err != nil || calls != 5 {
		t.Fatalf("err %v after %d calls, want nil after 5", err, calls)
	}
	boom := errors.New("boom")
	start := time.Now()
	if err := Until(time.Hour, func() (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if time.Since(start) > time.Second {
		t.Fatalf("an error took %s to stop the wait", time.Since(start))
	}
}

// A timeout says how long was allowed and the condition's last word.
func TestUntilTimeoutSaysWhatWasPending(t *testing.T) {
	t.Parallel()
	n := 0
	err := Until(50*time.Millisecond, func() (bool, error) { n++; return false, Notf("%d rows", n) })
	if err == nil || !strings.Contains(err.Error(), "not within 50ms") || !strings.Contains(err.Error(), " rows)") {
		t.Fatalf("err = %v, want the time allowed and the last pending word", err)
	}
	if err := Until(10*time.Millisecond, func() (bool, error) { return false, nil }); err == nil || err.Error() != "not within 10ms" {
		t.Fatalf("err = %v", err)
	}
}
