package lease

import "time"

// Clock is the process clock. It is used only for the local trust window,
// the heartbeat's cadence and the lock-hold measure, and always through
// differences between two readings or through its timers, never for a lease
// decision, so a clock that is hours off changes nothing. Tests give a clock
// they advance themselves.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once, d from now.
	NewTimer(d time.Duration) Timer
}

// Timer is a Clock's timer, as time.Timer: Reset and Stop leave no stale
// fire to be received.
type Timer interface {
	C() <-chan time.Time
	Reset(d time.Duration)
	Stop()
}

type systemClock struct{}

func (systemClock) Now() time.Time                 { return time.Now() }
func (systemClock) NewTimer(d time.Duration) Timer { return systemTimer{time.NewTimer(d)} }

type systemTimer struct{ t *time.Timer }

func (t systemTimer) C() <-chan time.Time   { return t.t.C }
func (t systemTimer) Reset(d time.Duration) { t.t.Reset(d) }
func (t systemTimer) Stop()                 { t.t.Stop() }
