// Package clock is where timewheel reads time from.
//
// Everything above this package reads the time only through a [Clock].
// [Real] is for programs: it goes through package time, so it also runs
// inside testing/synctest bubbles. [Virtual] is for tests: it moves only
// when told, and fires what falls due, in deadline order, as it moves.
//
//	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
//	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
//	w.AfterFunc(time.Hour, func() { fmt.Println("an hour later") })
//	clk.Advance(time.Hour) // the callback has run when Advance returns
//
// A Clock offers exactly what a timer driver needs: the current time, the
// time elapsed since an earlier reading (on the monotonic clock), and one
// callback timer to sleep until the next due tick.
package clock

import "time"

// Clock is a source of time. Implementations are safe for concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Since returns the time elapsed since t. For the real clock and a t
	// returned by its Now, this reads only the monotonic clock.
	Since(t time.Time) time.Duration
	// AfterFunc waits for the duration to elapse and then calls f.
	// It returns a Timer that can be used to cancel or reschedule the call.
	// Neither AfterFunc nor the Timer's Reset may call f before returning,
	// even for a duration of zero or less: callers hold locks f takes.
	// The clocks of this package panic if f is nil, and never return a
	// nil Timer.
	AfterFunc(d time.Duration, f func()) Timer
}

// RealTime is implemented by a Clock that runs in step with real time
// (real time plus an offset, say) and calls its timers' functions on
// goroutines of their own, as package time does. A timewheel.Wheel on a
// Clock whose RealTime reports true treats it as [Real]: one shard per
// processor unless told otherwise, and shards due at one wake fire in
// parallel. A test clock such as [Virtual] must not: its Advance returns
// only when every callback it made due has run, which firing on other
// goroutines would break.
type RealTime interface {
	Clock
	RealTime() bool
}

// Timer is a callback timer made by [Clock.AfterFunc].
type Timer interface {
	// Stop prevents the Timer from firing. It returns true if the call
	// stops the timer, false if the timer has already expired or been
	// stopped.
	Stop() bool
	// Reset changes the timer to expire after duration d. It returns true
	// if the timer had been active, false if the timer had expired or been
	// stopped.
	Reset(d time.Duration) bool
}

// Real returns the clock of package time. Its Since reads only the
// monotonic clock for times returned by its Now. Its AfterFunc is
// [time.AfterFunc], except that it panics at once if f is nil. (Package
// time would fail only when the timer fires, with the fatal error "go of
// nil func value".) Inside a testing/synctest bubble it reads the
// bubble's fake time. The real clock is safe for concurrent use.
func Real() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time                  { return time.Now() }
func (realClock) Since(t time.Time) time.Duration { return time.Since(t) }
func (realClock) AfterFunc(d time.Duration, f func()) Timer {
	if f == nil {
		panic("clock: Real().AfterFunc called with nil func")
	}
	return time.AfterFunc(d, f)
}
