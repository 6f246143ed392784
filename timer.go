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
// holds only a small node, which holds C weakly. A timer due a minute or
// more ahead (when made or reset) goes within three back-to-back
// collections, as Go's own test of package time asks; one due sooner is
// kept until it fires or until the second collection after it, whichever
// is first (being collectable from the start costs as much again as the
// rest of NewTimer). Under the race detector the runtime runs the cleanups
// this relies on several collections late. An AfterFunc timer stays
// pending until it fires or is stopped, as in package time.
//
// A Timer is safe for concurrent use. It takes 48 bytes on the heap for an
// AfterFunc timer; a channel timer takes more, see [Wheel.NewTimer].
//
// Its zero value is not a timer: Stop and Reset on it panic, as package
// time's do. A copy of a Timer (c := *t, which go vet reports) is not the
// timer either: Stop and Reset on a copy of a channel Timer panic, and so
// do they on a copy of an AfterFunc Timer taken while it was pending,
// except for a Reset that only postpones it, which changes the copy alone
// and reports true. A copy of an AfterFunc Timer taken while it was
// stopped or fired cannot be told from a Timer of its own (telling would
// take another word in every Timer): Reset on it starts a second timer
// calling the same func, which Len and Stats count as such. Setting C, as Go's own tests do on an AfterFunc timer,
// changes only the field: the wheel sends on, and Stop and Reset take
// values back from, the channel NewTimer made.
type Timer struct {
	e queue.Entry // first: the wheel's link to an AfterFunc Timer, unused in a channel Timer; see expireLocked
	// f is AfterFunc's callback; nil for a channel Timer and a node. It
	// comes right after e, so that it lies in a cache line the engine's
	// walks over e load, whatever the Timer's place in its 64-byte lines:
	// a burst's expireLocked then finds it warm.
	f func()
	// C is the channel on which the time is delivered. It is nil for a
	// Timer made by AfterFunc.
	C <-chan time.Time
	// p is what f says it is, so that no field a user can set decides an
	// unsafe cast: the *shard of an AfterFunc Timer (f set), the *node of
	// a channel Timer (f nil). It is nil in a zero Timer and in a node.
	p unsafe.Pointer
}

// afterFuncShard returns the shard of an AfterFunc Timer (f set).
func (t *Timer) afterFuncShard() *shard { return (*shard)(t.p) }

// chanNode returns the node of a channel Timer (f nil), after checking
// that t is the Timer NewTimer returned; op names the method for the
// panic.
func (t *Timer) chanNode(op string) *node {
	n := (*node)(t.p)
	if n == nil {
		panic("timewheel: " + op + " called on uninitialized Timer")
	}
	if n.owner != uintptr(unsafe.Pointer(t)) {
		panic("timewheel: " + op + " called on a copy of a Timer; call it on the *Timer NewTimer returned")
	}
	return n
}

// stray panics if t, an AfterFunc Timer, is a copy of one that was
// pending when copied (see queue.Entry.Stray); mu of its shard is held.
func (t *Timer) strayLocked(op string) {
	if t.e.Stray() {
		panic("timewheel: " + op + " called on a copy of a Timer; call it on the *Timer AfterFunc returned")
	}
}

// AfterFunc waits for the duration to elapse and then calls f through the
// wheel's executor. It returns a Timer that can be used to cancel the call
// using its Stop method. A d of zero or less means now. AfterFunc panics
// if f is nil. The complexity is O(1).
func (w *Wheel) AfterFunc(d time.Duration, f func()) *Timer {
	if f == nil {
		panic("timewheel: AfterFunc: nil func")
	}
	s := w.shard("AfterFunc")
	t := &Timer{f: f, p: unsafe.Pointer(s)}
	s.start(&t.e, nil, d)
	return t
}

// NewTimer creates a new Timer that will send the current time on its
// channel after at least duration d. A d of zero or less means now. The
// complexity is O(1).
//
// A channel timer costs more than an AfterFunc timer: besides its channel,
// a node for the wheel to hold, and, if it is due a minute or more from
// now or still pending when a garbage collection ends, a weak pointer to
// the channel and a cleanup that removes the node once the channel is
// collected (see [Timer] and node); BenchmarkChanTimer measures it beside
// package time.
//
//go:noinline
func (w *Wheel) NewTimer(d time.Duration) *Timer {
	// Not inlined, so that t is allocated here, on the heap, where its
	// address, which the node keeps to tell t from a copy, never changes.
	s := w.shard("NewTimer")
	c := make(chan time.Time, 1)
	n := newNode(s, c, 0, d)
	t := &Timer{C: c, p: unsafe.Pointer(n)}
	n.owner = uintptr(unsafe.Pointer(t))
	s.start(nil, n, d)
	return t
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
// ends a Sleep in progress. A callback that an [Inline] executor runs must
// not wait for a timer of its own wheel, by Sleep or by a receive from a
// Timer's C: the driver that would fire it is the goroutine waiting.
func (w *Wheel) Sleep(d time.Duration) {
	if d <= 0 {
		w.shard("Sleep") // a zero Wheel is a mistake whatever d is
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
//
// A Stop on another processor than the one that started the timer takes
// no lock: it marks the timer stopped, and the timer's shard takes it off
// the wheel on a later start (see inbox.go). The one difference it makes:
// Stop on a copy of a pending AfterFunc Timer (see [Timer]) panics only
// on the timer's own processor; elsewhere it returns true, and the Timer
// it was copied from still fires.
func (t *Timer) Stop() bool {
	if t.f == nil {
		return t.chanNode("Stop").stop()
	}
	if !t.e.Pending() {
		return false // fired or stopped: no lock needed to say so
	}
	s := t.afterFuncShard()
	if stopped, handled := s.kill(&t.e, false); handled {
		return stopped // from another processor: no lock (see inbox.go)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t.strayLocked("Stop")
	if !s.cancelLocked(&t.e) {
		return false
	}
	s.stopped++
	return true
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
// started for the same tick in the meantime. A Reset that restarts a
// timer just stopped on another processor, to a deadline no earlier than
// the one it had, takes no lock either. The complexity is O(1).
func (t *Timer) Reset(d time.Duration) bool {
	if t.f == nil {
		return t.chanNode("Reset").reset(d)
	}
	s := t.afterFuncShard()
	when, ns := s.w.deadline(d)
	if s.postpone(&t.e, when) {
		return true
	}
	if s.revive(&t.e, when) {
		return false // stopped, and restarted where it lies
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t.strayLocked("Reset")
	pending := s.cancelLocked(&t.e)
	if !s.closed {
		s.resets++
		s.scheduleLocked(&t.e, when, ns)
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
