package timewheel

import (
	"time"
	"unsafe"

	"github.com/timewheel/timewheel/queue"
)

// Timer is a single event on a wheel, like time.Timer: when it fires, the
// current time is sent on C, unless the Timer was made by AfterFunc. It is
// made by [Wheel.NewTimer] or [Wheel.AfterFunc].
//
// Stop and Reset follow package time's Go 1.23 semantics: once either has
// returned, no value sent for an earlier deadline can be received from C,
// and they return true when that value had not been received yet. C has a
// buffer of one, as before Go 1.23, where Go 1.23's timer channels report
// a capacity and length of zero; so len(C) shows a value waiting to be
// received. (The package doc lists every difference from package time.)
//
// As in Go 1.23, a channel Timer that nothing references any more (not
// the Timer, not C, and no goroutine blocked receiving from C) is removed
// from the wheel and collected, even if it was never stopped: the wheel
// holds only a small node, which holds C weakly once the timer has lived
// through a garbage collection, so a forgotten timer goes by the second
// collection after it was started. An AfterFunc timer stays pending until
// it fires or is stopped, as in package time.
//
// A Timer is safe for concurrent use. It takes 48 bytes on the heap for an
// AfterFunc timer; a channel timer takes more, see [Wheel.NewTimer].
type Timer struct {
	e queue.Entry // first: the wheel's link to an AfterFunc Timer; see expireLocked
	// C is the channel on which the time is delivered. It is nil for a
	// Timer made by AfterFunc.
	C <-chan time.Time
	f func() // AfterFunc's callback; nil for a channel Timer and a node
	s *shard // the shard the timer was started on
}

// chanTimer is what NewTimer allocates: the Timer the user holds, and the
// node the wheel holds for it. Every Timer with C set and s set is the
// first field of a chanTimer.
type chanTimer struct {
	Timer
	n *node
}

// entry returns the wheel's link to t: t's own for an AfterFunc timer, its
// node's for a channel timer.
func (t *Timer) entry() *queue.Entry {
	if t.C == nil {
		return &t.e
	}
	return &(*chanTimer)(unsafe.Pointer(t)).n.t.e // C and s set: made by NewTimer
}

// AfterFunc waits for the duration to elapse and then calls f through the
// wheel's executor. It returns a Timer that can be used to cancel the call
// using its Stop method. A d of zero or less means now. AfterFunc panics
// if f is nil. The complexity is O(1).
func (w *Wheel) AfterFunc(d time.Duration, f func()) *Timer {
	if f == nil {
		panic("timewheel: AfterFunc: nil func")
	}
	t := &Timer{f: f, s: w.shard()}
	t.s.start(&t.e, d)
	return t
}

// NewTimer creates a new Timer that will send the current time on its
// channel after at least duration d. A d of zero or less means now. The
// complexity is O(1).
//
// A channel timer costs more than an AfterFunc timer: besides its channel,
// a node for the wheel to hold, and, if it is still pending when a
// garbage collection ends, a weak pointer to the channel and a cleanup
// that removes the node once the channel is collected (see [Timer] and
// node); BenchmarkChanTimer measures it beside package time.
func (w *Wheel) NewTimer(d time.Duration) *Timer {
	c := make(chan time.Time, 1)
	s := w.shard()
	t := &chanTimer{Timer: Timer{C: c, s: s}, n: newNode(s, c)}
	when, ns := w.deadline(d)
	s.mu.Lock()
	if !s.closed {
		s.started++
		t.n.scheduleLocked(when, ns)
	}
	s.mu.Unlock()
	return &t.Timer
}

// After waits for the duration to elapse and then sends the current time
// on the returned channel. It is NewTimer(d).C. On a closed wheel nothing
// is ever sent: a receive that must end selects on another channel too,
// as with any timer that may be stopped.
func (w *Wheel) After(d time.Duration) <-chan time.Time {
	return w.NewTimer(d).C
}

// Sleep pauses the current goroutine for at least the duration d. A d of
// zero or less returns at once, and so does Sleep on a closed wheel; Close
// ends a Sleep in progress.
func (w *Wheel) Sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	t := w.NewTimer(d)
	select {
	case <-t.C:
	case <-w.done:
	}
}

// Stop prevents the Timer from firing. It returns true if the call stops
// the timer, false if the timer has already expired or been stopped. For a
// channel Timer, a value sent but not yet received counts as not expired:
// Stop takes it back and returns true. Stop does not wait for an AfterFunc
// callback that has started. The complexity is O(1).
func (t *Timer) Stop() bool {
	s := t.s
	if s == nil {
		panic("timewheel: Stop called on uninitialized Timer")
	}
	if t.C == nil && !t.e.Pending() {
		return false // fired or stopped: no lock needed to say so
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pending := s.cancelLocked(t.entry())
	if pending {
		s.stopped++
	}
	if t.C != nil && drain(t.C) {
		pending = true
	}
	return pending
}

// Reset changes the timer to expire after duration d. It returns true if
// the timer had been active, false if the timer had expired or been
// stopped; for a channel Timer an unreceived value counts as active, and
// Reset takes it back. On a closed wheel Reset schedules nothing: it only
// takes back an unreceived value, as Stop does, and reports whether it
// did.
//
// Reset of a pending timer to a deadline no earlier than its current one,
// the refresh of an idle timeout or a deadline that servers do on every
// read or request, takes no lock and does not move the timer: it records
// the new deadline on the timer with one compare-and-swap, and the wheel
// files the timer again when it reaches the old deadline (see
// [queue.Entry.Postpone]). Such a timer fires after timers reset or
// started for the same tick in the meantime. The complexity is O(1).
func (t *Timer) Reset(d time.Duration) bool {
	s := t.s
	if s == nil {
		panic("timewheel: Reset called on uninitialized Timer")
	}
	when, ns := s.w.deadline(d)
	e := t.entry()
	old := e.When()
	if e.Postpone(when) {
		// Pending and not yet claimed by the driver, so no value of
		// this arming was sent on C, and every earlier one was taken
		// back by the Stop or Reset that armed it again.
		if when != old {
			// Counted only when the deadline moves: a refresh within
			// the tick the timer is already due at, the common case at
			// high rates, changes nothing and costs no atomic add.
			s.w.lazy.add()
		}
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pending := s.cancelLocked(e)
	if t.C != nil && drain(t.C) {
		pending = true
	}
	if !s.closed {
		s.resets++
	}
	switch {
	case s.closed:
	case t.C == nil:
		s.scheduleLocked(e, when, ns)
	default:
		(*chanTimer)(unsafe.Pointer(t)).n.scheduleLocked(when, ns)
	}
	return pending
}

// drain takes a buffered value from c, if any, and reports whether it did.
func drain(c <-chan time.Time) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
