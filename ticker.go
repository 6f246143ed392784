package timewheel

import (
	"time"
	"unsafe"
)

// Ticker holds a channel that delivers the current time at intervals, like
// time.Ticker. A receiver that falls behind misses ticks rather than
// queueing them. It is made by [Wheel.NewTicker].
//
// The ticks keep to an exact grid, every period from the time the Ticker
// was made or last Reset, in nanoseconds. Each grid point is rounded up
// to the wheel's tick. So a tick is never early, and at most one wheel
// tick (plus the driver's delay) late. By any moment it has sent no more
// ticks than package time's Ticker of the same period would have. For a
// period of at least one wheel tick, it has sent at most one fewer. After
// a late driver the next tick is the first grid point after now. A period
// shorter than the wheel's tick sends at most one tick per wheel tick.
//
// As in Go 1.23, a Ticker that nothing references any more is collected
// and stops ticking, even if it was never stopped (see [Timer]).
//
// A Ticker is safe for concurrent use.
type Ticker struct {
	C <-chan time.Time // the channel on which the ticks are delivered
	n *node            // the wheel's node; nil for a Ticker not made by NewTicker
}

// NewTicker returns a new Ticker that sends the current time on its
// channel every d. NewTicker panics if d is not positive. The complexity
// is O(1).
//
//go:noinline
func (w *Wheel) NewTicker(d time.Duration) *Ticker {
	// Not inlined, so that tk is allocated here, on the heap, where its
	// address, which the node keeps to tell tk from a copy, never changes.
	if d <= 0 {
		panic(badDuration("NewTicker", "interval", d))
	}
	s := w.shard("NewTicker")
	c := make(chan time.Time, 1)
	tk := &Ticker{C: c, n: newNode(s, c, d)}
	tk.n.owner = uintptr(unsafe.Pointer(tk))
	s.start(nil, tk.n, d)
	return tk
}

// Tick is NewTicker(d).C, for a caller that never stops the ticker: since
// an unreferenced Ticker is collected, the ticker goes once nothing
// receives from the channel any more. Tick returns nil if d is not
// positive, as package time's does. The complexity is O(1).
func (w *Wheel) Tick(d time.Duration) <-chan time.Time {
	if d <= 0 {
		w.shard("Tick") // a zero Wheel is a mistake whatever d is
		return nil
	}
	return w.NewTicker(d).C
}

// node returns the ticker's node after checking that tk is the Ticker
// NewTicker returned; op names the method for the panic.
func (tk *Ticker) node(op string) *node {
	if tk.n != nil && tk.n.owner != uintptr(unsafe.Pointer(tk)) {
		panic("timewheel: " + op + " called on a copy of a Ticker; call it on the *Ticker NewTicker returned")
	}
	return tk.n
}

// Stop turns off the ticker. No tick is received after Stop returns. Stop
// does not close the channel. Stop on a Ticker not made by NewTicker
// (such as &Ticker{C: c}, a fake in a test) does nothing, as package
// time's does. On a copy of a Ticker it panics. The complexity is O(1).
func (tk *Ticker) Stop() {
	n := tk.node("Stop")
	if n == nil {
		return
	}
	n.stop(tk.C)
	keepAlive(tk)
}

// Reset stops the ticker and resets its period to d: the next tick arrives
// after d, and the grid starts anew at the call. No tick for the old
// period is received after Reset returns. Reset panics if d is not
// positive, or if the Ticker was not made by NewTicker (as package time's
// does) or is a copy. On a closed wheel it schedules nothing. The
// complexity is O(1).
func (tk *Ticker) Reset(d time.Duration) {
	n := tk.node("Reset")
	if n == nil {
		panic("timewheel: Reset called on uninitialized Ticker")
	}
	if d <= 0 {
		panic(badDuration("Ticker.Reset", "interval", d))
	}
	s := n.shard()
	ns := s.w.since()
	s.mu.Lock()
	s.cancelLocked(&n.t.e)
	if c := n.channel(); c != nil {
		drain(c)
	}
	n.grid().period = int64(d)
	if !s.closed {
		s.resets++
		n.startGridLocked(ns)
	}
	s.unlockAndPromote()
	keepAlive(tk) // so the grid is not cancelled under the call
}
