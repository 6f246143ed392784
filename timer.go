package timewheel

import (
	"runtime"
	"time"
	"unsafe"

	"github.com/timewheel/timewheel/internal/lockcheck"
	"github.com/timewheel/timewheel/internal/ticks"
	"github.com/timewheel/timewheel/internal/wheelhook"
	"github.com/timewheel/timewheel/queue"
)

// Timer is a single event on a wheel, like time.Timer: when it fires, the
// current time is sent on C, unless the Timer was made by AfterFunc. It is
// made by [Wheel.NewTimer] or [Wheel.AfterFunc].
//
// Stop and Reset follow package time's Go 1.23 semantics. Once either has
// returned, no value sent for an earlier deadline can be received from
// the channel. They return true when that value had not been received
// yet. C has a buffer of one, as before Go 1.23, so len(C) shows a value
// waiting to be received. (The package doc lists every difference from
// package time.)
//
// As in Go 1.23, a channel Timer that nothing references any more is
// removed from the wheel and collected, even if it was never stopped.
// Nothing means not the Timer, not C, and no goroutine blocked receiving
// from it. Whatever its duration, a forgotten one goes within three
// back-to-back collections, as Go's own test asks. Under the race
// detector the runtime runs the cleanups this relies on several
// collections late. An AfterFunc timer stays pending until it fires or
// is stopped, as in package time.
//
// A Timer is safe for concurrent use. It takes 48 bytes on the heap for an
// AfterFunc timer; a channel timer takes more, see [Wheel.NewTimer].
//
// Its zero value is not a timer: Stop and Reset on it panic, as package
// time's do. A copy of a Timer (c := *t, which go vet reports) is not the
// timer either:
//   - On a copy of a channel Timer, Stop and Reset panic.
//   - On a copy of an AfterFunc Timer taken while it was pending, they
//     panic too, except for a Reset that only postpones it. That Reset
//     changes the copy alone and reports true.
//   - A copy taken while it was stopped or fired cannot be told from a
//     Timer of its own: telling would take another word in every Timer.
//     Reset on it starts a second timer calling the same func, which Len
//     and Stats count as such.
//
// Setting C, as Go's own tests do on an AfterFunc timer, changes only the
// field. The wheel sends on the channel NewTimer made, and Stop and Reset
// take values back from it.
type Timer struct {
	e queue.Entry // first: the wheel's link to an AfterFunc Timer, unused in a channel Timer; see expireLocked
	// f is AfterFunc's callback; nil for a channel Timer and a node. It
	// comes right after e, so that it lies in a cache line the engine's
	// walks over e load, whatever the Timer's place in its 64-byte lines.
	// A burst's expireLocked then finds it warm.
	f func()
	// C is the channel on which the time is delivered. It is nil for a
	// Timer made by AfterFunc.
	C <-chan time.Time
	// p is the *shard of an AfterFunc Timer (f set) and the *node of a
	// channel Timer (f nil). So no field a user can set decides an unsafe
	// cast. It is nil in a zero Timer. In a node's own Timer it is the
	// node's *shard (see node).
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

// strayLocked panics if t, an AfterFunc Timer, is a copy of one that was
// pending when copied (see queue.Entry.Stray); mu of its shard is held.
func (t *Timer) strayLocked(op string) {
	lockcheck.Held(&t.afterFuncShard().mu, "Timer.strayLocked")
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
	t := new(Timer)
	w.afterFuncAt(t, time.Time{}, d, f)
	return t
}

// afterFuncAt is AfterFunc in t, a zero Timer (see wheelhook). now is a
// reading of w's clock that the caller took just before, or the zero
// Time: on the real clock, the deadline is computed from it, which
// saves reading the clock again.
func (w *Wheel) afterFuncAt(t *Timer, now time.Time, d time.Duration, f func()) {
	if f == nil {
		panic("timewheel: AfterFunc: nil func")
	}
	s := w.shard("AfterFunc")
	t.f, t.p = f, unsafe.Pointer(s)
	var ns int64
	if w.real && !now.IsZero() {
		ns = int64(now.Sub(w.epoch)) // monotonic, as since
	} else {
		ns = w.since()
	}
	s.startAt(&t.e, nil, ticks.Deadline(ns, d, w.tick), ns)
}

func init() {
	wheelhook.AfterFuncAt = func(w, t unsafe.Pointer, now time.Time, d time.Duration, f func()) {
		(*Wheel)(w).afterFuncAt((*Timer)(t), now, d, f)
	}
	wheelhook.RealClock = func(w unsafe.Pointer) bool { return (*Wheel)(w).real }
}

// NewTimer creates a new Timer that will send the current time on its
// channel after at least duration d. A d of zero or less means now. The
// complexity is O(1).
//
// A channel timer costs more than an AfterFunc timer: its channel and a
// node for the wheel to hold. If it is still pending after its shard
// has started some more timers, or when a garbage collection ends, it
// also costs a weak pointer and a cleanup on its channel (see [Timer]).
// BenchmarkChanPatterns measures it beside package time.
//
//go:noinline
func (w *Wheel) NewTimer(d time.Duration) *Timer {
	// Not inlined, so that t is allocated here, on the heap, where its
	// address, which the node keeps to tell t from a copy, never changes.
	s := w.shard("NewTimer")
	c := make(chan time.Time, 1)
	n := newNode(s, c, 0)
	t := &Timer{C: c, p: unsafe.Pointer(n)}
	n.owner = uintptr(unsafe.Pointer(t))
	s.start(nil, n, d)
	return t
}

// After waits for the duration to elapse and then sends the current time
// on the returned channel, as NewTimer(d).C would, without the Timer. On
// a closed wheel nothing is ever sent: a receive that must end selects on
// another channel too, as with any timer that may be stopped.
func (w *Wheel) After(d time.Duration) <-chan time.Time { return w.after("After", d) }

// after is After; op names the method for the panic on a zero Wheel.
func (w *Wheel) after(op string, d time.Duration) <-chan time.Time {
	s := w.shard(op)
	c := make(chan time.Time, 1)
	s.start(nil, newNode(s, c, 0), d)
	return c
}

// Sleep pauses the current goroutine for at least the duration d. A d of
// zero or less returns at once, and so does Sleep on a closed wheel; Close
// ends a Sleep in progress. A callback that an [Inline] executor runs must
// not call Sleep on its own wheel (see Inline).
func (w *Wheel) Sleep(d time.Duration) {
	if d <= 0 {
		w.shard("Sleep") // a zero Wheel is a mistake whatever d is
		return
	}
	select {
	case <-w.after("Sleep", d):
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
// no lock. It marks the timer stopped, and the timer's shard takes it off
// the wheel on a later start (see inbox.go). The one difference it makes
// is on a copy of a pending AfterFunc Timer (see [Timer]). Stop on it
// panics only on the timer's own processor. Elsewhere it returns true,
// and the Timer it was copied from still fires.
func (t *Timer) Stop() bool {
	if t.f == nil {
		stopped := t.chanNode("Stop").stop(t.C)
		keepAlive(t)
		return stopped
	}
	if !t.e.Pending() {
		return false // fired or stopped: no lock needed to say so
	}
	s := t.afterFuncShard()
	if k := s.kill(&t.e, false); k != killLocked {
		return k == killStopped // from another processor: no lock (see inbox.go)
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
// stopped. For a channel Timer an unreceived value counts as active, and
// Reset takes it back. On a closed wheel Reset schedules nothing: it only
// takes back an unreceived value, as Stop does, and reports whether it
// did.
//
// Servers refresh an idle timeout or a deadline on every read or request.
// That Reset, of a pending timer to a deadline no earlier than its
// current one, takes no lock and does not move the timer. It records the
// new deadline on the timer with one compare-and-swap. The wheel files
// the timer again when it reaches the old deadline (see
// [queue.Entry.Postpone]). Such a timer fires after timers reset or
// started for the same tick in the meantime. A Reset that restarts a
// timer just stopped on another processor takes no lock either, if the
// deadline is no earlier than the one it had. The complexity is O(1).
func (t *Timer) Reset(d time.Duration) bool {
	if t.f == nil {
		active := t.chanNode("Reset").reset(d)
		keepAlive(t)
		return active
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

// keepAlive keeps the Timer or Ticker p, and so its channel C, alive
// to the end of the Stop or Reset that calls it last. A channel timer's
// node holds C weakly once promoted, and a cleanup cancels the timer once
// C is collected (see node). Without it, the Timer being dead to the
// compiler after its last use, a collection during the call could cancel
// the timer under it and the call report false for a timer that was
// pending (TestStopRacesPromotion did, about one run in ten).
func keepAlive(p any) { runtime.KeepAlive(p) }

// drain takes a buffered value from c, if any, and reports whether it did.
func drain(c <-chan time.Time) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
