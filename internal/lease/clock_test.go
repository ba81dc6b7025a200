package lease

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
)

// guard bounds every wait for something the code under test must do: a
// test that waits this long has failed. No assertion depends on it.
const guard = 10 * time.Second

// fakeClock is a Clock that moves only when the test advances it. Its timers
// fire inside Advance, so a test decides exactly when a renewal is due and
// when trust runs out, and counts renewals exactly.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	armed  []*fakeTimer
	change chan struct{} // closed, and replaced, whenever a timer is armed, stopped or fires
}

func newFakeClock(now time.Time) *fakeClock {
	return &fakeClock{now: now, change: make(chan struct{})}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) Timer {
	t := &fakeTimer{clock: c, c: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// Advance moves the clock forward by d and fires, in order, every timer
// due by then.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	slices.SortStableFunc(c.armed, func(a, b *fakeTimer) int { return a.at.Compare(b.at) })
	for len(c.armed) > 0 && !c.armed[0].at.After(c.now) {
		t := c.armed[0]
		c.armed = c.armed[1:]
		t.c <- c.now // never blocks: arming empties the channel
	}
	c.changed()
}

// waitArmed waits until exactly n timers are armed. A heartbeat waiting for
// its next renewal has two (trust and next); one with a renewal on its way
// has one (trust); a stopped one has none.
func (c *fakeClock) waitArmed(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(guard)
	for {
		c.mu.Lock()
		armed, change := len(c.armed), c.change
		c.mu.Unlock()
		if armed == n {
			return
		}
		select {
		case <-change:
		case <-deadline:
			t.Fatalf("%d timers armed, want %d", armed, n)
		}
	}
}

// armedNow is how many timers are armed at this moment.
func (c *fakeClock) armedNow() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.armed)
}

func (c *fakeClock) changed() {
	close(c.change)
	c.change = make(chan struct{})
}

type fakeTimer struct {
	clock *fakeClock
	c     chan time.Time
	at    time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Reset(d time.Duration) {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	t.disarm()
	t.at = c.now.Add(d)
	if t.at.After(c.now) {
		c.armed = append(c.armed, t)
	} else {
		t.c <- c.now
	}
	c.changed()
}

func (t *fakeTimer) Stop() {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	t.disarm()
	c.changed()
}

// disarm takes t off the clock and drops a fire not yet received, as
// time.Timer does since Go 1.23. The clock's lock is held.
func (t *fakeTimer) disarm() {
	t.clock.armed = slices.DeleteFunc(t.clock.armed, func(o *fakeTimer) bool { return o == t })
	select {
	case <-t.c:
	default:
	}
}

// renewal is one call of a testRenewer, as it starts.
type renewal struct {
	sent time.Time // on the test's clock
}

// testRenewer is the tests' Renewer. It tells the test about every renewal
// as it starts (calls) and as it answers (answers), runs it with the next
// scripted step, or with next once the script is done (or, with no next,
// hangs until its context ends), and records how renewals overlap.
type testRenewer struct {
	clock Clock
	next  Renewer

	mu    sync.Mutex
	steps []func(ctx context.Context) error

	calls    chan renewal
	answers  chan error
	inFlight atomic.Int32
	maxOver  atomic.Int32
}

func newTestRenewer(clock Clock, next Renewer, steps ...func(ctx context.Context) error) *testRenewer {
	return &testRenewer{clock: clock, next: next, steps: steps, calls: make(chan renewal, 100), answers: make(chan error, 100)}
}

func (r *testRenewer) Renew(ctx context.Context, owner uuid.UUID) error {
	n := r.inFlight.Add(1)
	defer r.inFlight.Add(-1)
	for {
		m := r.maxOver.Load()
		if n <= m || r.maxOver.CompareAndSwap(m, n) {
			break
		}
	}
	r.calls <- renewal{sent: r.clock.Now()}
	r.mu.Lock()
	step := func(ctx context.Context) error {
		if r.next != nil {
			return r.next.Renew(ctx, owner)
		}
		<-ctx.Done()
		return ctx.Err()
	}
	if len(r.steps) > 0 {
		step, r.steps = r.steps[0], r.steps[1:]
	}
	r.mu.Unlock()
	err := step(ctx)
	r.answers <- err
	return err
}

// call waits for the next renewal to start.
func (r *testRenewer) call(t *testing.T) renewal {
	t.Helper()
	select {
	case c := <-r.calls:
		return c
	case <-time.After(guard):
		t.Fatal("no renewal started")
	}
	return renewal{}
}

// answer waits for the next renewal's answer.
func (r *testRenewer) answer(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.answers:
		return err
	case <-time.After(guard):
		t.Fatal("no renewal answered")
	}
	return nil
}

// gate holds scripted steps until the test lets them through. A held step
// ignores its context, as a hung database call would.
type gate struct {
	pass     chan struct{}
	once     sync.Once
	released chan struct{}
}

func newGate() *gate { return &gate{pass: make(chan struct{}), released: make(chan struct{})} }

// open lets one held step through.
func (g *gate) open() { g.pass <- struct{}{} }

// release lets every step through, now and later.
func (g *gate) release() { g.once.Do(func() { close(g.released) }) }

// answer is a step that passes the gate, then answers err.
func (g *gate) answer(err error) func(context.Context) error {
	return g.then(func(context.Context) error { return err })
}

// then is a step that passes the gate, then runs fn.
func (g *gate) then(fn func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		select {
		case <-g.pass:
		case <-g.released:
		}
		return fn(ctx)
	}
}

// startTestHeartbeat starts a heartbeat renewing through r and stops it
// when the test ends, passed or failed: first its parent context ends and
// g (if any) releases its steps, so no renewal can keep Stop waiting.
func startTestHeartbeat(t *testing.T, r Renewer, l Lease, interval, window time.Duration, clock Clock, g *gate) (context.Context, *Heartbeat) {
	parent, cancel := context.WithCancel(context.Background())
	ctx, hb := startHeartbeat(parent, r, l, interval, window, clock, slog.Default())
	t.Cleanup(func() {
		cancel()
		if g != nil {
			g.release()
		}
		hb.Stop()
	})
	return ctx, hb
}

// waitLost waits for the check's context to end with cause ErrLeaseLost and
// returns that cause.
func waitLost(t *testing.T, ctx context.Context) error {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(guard):
		t.Fatal("the check's context was not cancelled")
	}
	cause := context.Cause(ctx)
	if !errors.Is(cause, ErrLeaseLost) {
		t.Fatalf("cause = %v, want ErrLeaseLost", cause)
	}
	return cause
}
