package loop

import (
	"errors"
	"fmt"
	"time"

	"github.com/timewheel/timewheel/internal/ticks"
	"github.com/timewheel/timewheel/queue"
)

// ErrNeverStarted is returned by Again on a timer that has never been
// started, as libuv's uv_timer_again returns UV_EINVAL.
var ErrNeverStarted = errors.New("loop: Again called on a timer never started")

// Timer is a timer of a Loop, libuv's uv_timer_t: a callback run on the
// loop goroutine after a timeout and then, if it repeats, every repeat
// interval. It is made by [Loop.NewTimer], [Loop.AfterFunc] or
// [Loop.Every]. A Timer keeps the loop alive while it is active, unless
// it is unreferenced ([Timer.Unref]).
//
// A Timer is not safe for concurrent use: its methods belong to the loop
// goroutine, or to setting up before the loop runs. Those that change
// the timer (Start, Stop, Again, Ref, Unref) panic if called from
// another goroutine while the loop waits for work; a call from another
// goroutine while the loop runs a callback is a data race, which the race
// detector reports.
//
// The zero Timer is a stopped timer of no loop: Stop returns false, Again
// returns ErrNeverStarted, Active reports false and the repeat and
// reference settings work, but Start panics, having no loop to run on.
// A Timer must not be copied (go vet reports copies): the methods that
// change a timer panic on a copy, which would otherwise unlink the
// original from its loop's wheel. Every method panics on a nil *Timer,
// naming itself: "loop: Timer.Stop called on a nil *Timer".
type Timer struct {
	e       queue.Entry // first: the wheel's link; see runTimers
	l       *Loop
	self    *Timer // the timer NewTimer made; a copy is not its own self
	f       func()
	repeat  time.Duration
	next    int64 // the grid point of the pending run, nanoseconds since the loop's epoch
	started bool  // Start has been called
	batched bool  // expired in the current pass, callback not yet run
	active  bool  // counted as active: pending or batched
	unref   bool
}

// NewTimer returns a stopped timer of the loop that will call f. It may
// be called from any goroutine. It panics if f is nil.
func (l *Loop) NewTimer(f func()) *Timer {
	if f == nil {
		panic("loop: NewTimer called with nil func")
	}
	return l.newTimer("NewTimer", f)
}

// newTimer returns a stopped timer of l that will call f, for method.
func (l *Loop) newTimer(method string, f func()) *Timer {
	l.init(method)
	t := &Timer{l: l, f: f}
	t.self = t
	return t
}

// AfterFunc returns a timer that calls f once, d from now; a d of zero
// or less makes it due on the next pass. It panics if f is nil, and as
// Start does. The complexity is O(1).
func (l *Loop) AfterFunc(d time.Duration, f func()) *Timer {
	if f == nil {
		panic("loop: AfterFunc called with nil func")
	}
	t := l.newTimer("AfterFunc", f)
	l.owned("AfterFunc")
	t.Start(d, 0)
	return t
}

// Every returns a timer that calls f every d, first d from now. It panics
// if f is nil or d is not positive, and as Start does. The complexity is
// O(1).
func (l *Loop) Every(d time.Duration, f func()) *Timer {
	if f == nil {
		panic("loop: Every called with nil func")
	}
	if d <= 0 {
		panic(fmt.Sprintf("loop: Every called with non-positive interval %v", d))
	}
	t := l.newTimer("Every", f)
	l.owned("Every")
	t.Start(d, d)
	return t
}

// nilTimer panics: method was called on a nil *Timer.
func nilTimer(method string) {
	panic("loop: Timer." + method + " called on a nil *Timer")
}

// misuse panics with what is wrong if t is a zero Timer or a copy, or if
// method was called from another goroutine while the loop waits. (If the
// loop has stopped waiting since the caller looked, it returns: the call
// is a data race the race detector reports.)
func (t *Timer) misuse(method string) {
	switch {
	case t.l == nil:
		panic("loop: Timer." + method + " called on a zero Timer; make one with Loop.NewTimer")
	case t.self != t:
		panic("loop: Timer." + method + " called on a copy of a Timer; use the *Timer that Loop.NewTimer returned")
	default:
		t.l.owned("Timer." + method)
	}
}

// Start starts the timer, as uv_timer_start: its callback runs timeout
// from now (zero or negative: on the next pass) and then, if repeat is
// positive, every repeat. The runs keep to the exact grid of the repeat
// from the start, each point rounded up to the loop's tick. (libuv's
// repeats start from the time each run was due to run.) So a repeat that
// is not a whole number of ticks keeps its rate. A pass that comes late
// runs the timer once and goes on at the next grid point. A timer
// already active is restarted. Timers due at the same tick run in the
// order they were started. Deadlines beyond the end of time saturate
// there. On a stopped loop, which runs no callback again, Start does
// nothing and the timer is left as it was ([Timer.Active] tells).
//
// Start panics if repeat is negative, on a zero Timer, on a copy of a
// Timer, and if called from another goroutine while the loop waits. The
// complexity is O(1).
func (t *Timer) Start(timeout, repeat time.Duration) {
	if repeat < 0 {
		panic(fmt.Sprintf("loop: Timer.Start called with negative repeat %v", repeat))
	}
	if t == nil {
		nilTimer("Start")
	}
	l := t.l
	if t.self != t || l.waiting.Load() {
		t.misuse("Start")
	}
	if l.stopped.Load() {
		return
	}
	l.q.Cancel(&t.e)
	t.batched = false
	t.repeat = repeat
	t.started = true
	ns := l.since()
	t.next = ticks.Add(ns, int64(max(timeout, 0)))
	l.q.Insert(&t.e, ticks.Deadline(ns, timeout, l.tick))
	t.sync()
}

// Stop stops the timer, as uv_timer_stop, and reports whether it was
// active. A timer due in the current pass whose callback has not run yet
// does not run. Called from its own callback, Stop returns false for a
// timer that does not repeat, and true for one that does, which then
// runs no more. Stop on the zero Timer returns false. Stop panics on a
// copy of a Timer, and if called from another goroutine while the loop
// waits. The complexity is O(1).
func (t *Timer) Stop() bool {
	if t == nil {
		nilTimer("Stop")
	}
	if t.l == nil {
		return false // the zero Timer: never started
	}
	if t.self != t || t.l.waiting.Load() {
		t.misuse("Stop")
	}
	was := t.active
	t.l.q.Cancel(&t.e)
	t.batched = false
	t.sync()
	return was
}

// Again restarts a repeating timer, as uv_timer_again: it is stopped and,
// if its repeat interval is positive, started again with the repeat as
// its timeout. It returns ErrNeverStarted if the timer has never been
// started (the zero Timer included), and ErrStopped, having stopped the
// timer, if the loop is stopped. It panics as Start does. The complexity
// is O(1).
func (t *Timer) Again() error {
	if t == nil {
		nilTimer("Again")
	}
	if !t.started {
		return ErrNeverStarted
	}
	if t.self != t || t.l.waiting.Load() {
		t.misuse("Again")
	}
	t.Stop()
	if t.l.stopped.Load() {
		return ErrStopped
	}
	if t.repeat > 0 {
		t.Start(t.repeat, t.repeat)
	}
	return nil
}

// SetRepeat sets the repeat interval, as uv_timer_set_repeat: it takes
// effect when the timer next fires or is restarted with Again. A zero
// interval makes the timer fire once more at most. SetRepeat panics if d
// is negative.
func (t *Timer) SetRepeat(d time.Duration) {
	if d < 0 {
		panic(fmt.Sprintf("loop: Timer.SetRepeat called with negative repeat %v", d))
	}
	if t == nil {
		nilTimer("SetRepeat")
	}
	t.repeat = d
}

// Repeat returns the repeat interval.
func (t *Timer) Repeat() time.Duration {
	if t == nil {
		nilTimer("Repeat")
	}
	return t.repeat
}

// Active reports whether the timer is started and has not fired for the
// last time or been stopped.
func (t *Timer) Active() bool {
	if t == nil {
		nilTimer("Active")
	}
	return t.active
}

// Unref makes the timer not keep the loop alive: Run may return while it
// is active, as with Node.js's timeout.unref(). It still fires while the
// loop runs. It panics as Stop does. The complexity is O(1).
func (t *Timer) Unref() {
	if t == nil {
		nilTimer("Unref")
	}
	if t.l != nil && (t.self != t || t.l.waiting.Load()) {
		t.misuse("Unref")
	}
	if !t.unref && t.active {
		t.l.refs--
	}
	t.unref = true
}

// Ref undoes Unref: the active timer keeps the loop alive again. It
// panics as Stop does. The complexity is O(1).
func (t *Timer) Ref() {
	if t == nil {
		nilTimer("Ref")
	}
	if t.l != nil && (t.self != t || t.l.waiting.Load()) {
		t.misuse("Ref")
	}
	if t.unref && t.active {
		t.l.refs++
	}
	t.unref = false
}

// HasRef reports whether the timer keeps the loop alive when active.
func (t *Timer) HasRef() bool {
	if t == nil {
		nilTimer("HasRef")
	}
	return !t.unref
}

// sync recomputes whether the timer is active and updates the loop's
// count of active referenced timers.
func (t *Timer) sync() {
	active := t.e.Pending() || t.batched
	if active == t.active {
		return
	}
	t.active = active
	if t.unref {
		return
	}
	if active {
		t.l.refs++
	} else {
		t.l.refs--
	}
}
