package timewheel

import (
	"time"
)

// Ticker holds a channel that delivers the current time at intervals, like
// time.Ticker. A receiver that falls behind misses ticks rather than
// queueing them. It is made by [Wheel.NewTicker].
//
// The ticks keep to an exact grid, every period from the time the Ticker
// was made or last Reset, in nanoseconds; each grid point is rounded up to
// the wheel's tick. So a tick is never early and at most one wheel tick
// (plus the driver's delay) late, and the ticks sent are never more than
// package time's Ticker of the same period would have sent by then, nor,
// for a period of at least one wheel tick, more than one fewer. After a
// late driver the next tick is the first grid point after now. A period
// shorter than the wheel's tick sends at most one tick per wheel tick.
//
// As in Go 1.23, a Ticker that nothing references any more (not the
// Ticker, not C, and no goroutine blocked receiving from C) is collected
// and stops ticking, even if it was never stopped.
//
// A Ticker is safe for concurrent use.
type Ticker struct {
	C <-chan time.Time // the channel on which the ticks are delivered
	n *node            // the wheel's node; nil for a Ticker not made by NewTicker
}

// NewTicker returns a new Ticker that sends the current time on its
// channel every d. NewTicker panics if d is not positive. The complexity
// is O(1).
func (w *Wheel) NewTicker(d time.Duration) *Ticker {
	if d <= 0 {
		panic(badDuration("NewTicker", "interval", d))
	}
	c := make(chan time.Time, 1)
	s := w.shard()
	tk := &Ticker{C: c, n: newNode(s, c)}
	tk.n.period = int64(d)
	ns := w.since()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.started++
		tk.n.startGridLocked(ns)
	}
	return tk
}

// Tick is NewTicker(d).C, for a caller that never stops the ticker: since
// an unreferenced Ticker is collected, the ticker goes once nothing
// receives from the channel any more. Tick returns nil if d is not
// positive, as package time's does. The complexity is O(1).
func (w *Wheel) Tick(d time.Duration) <-chan time.Time {
	if d <= 0 {
		return nil
	}
	return w.NewTicker(d).C
}

// Stop turns off the ticker. No tick is received from C after Stop
// returns. Stop does not close the channel. Stop on a Ticker not made by
// NewTicker (such as &Ticker{C: c}, a fake in a test) does nothing, as
// package time's does. The complexity is O(1).
func (tk *Ticker) Stop() {
	if tk.n == nil {
		return
	}
	s := tk.n.t.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancelLocked(&tk.n.t.e) {
		s.stopped++
	}
	drain(tk.C)
}

// Reset stops the ticker and resets its period to d: the next tick arrives
// after d, and the grid starts anew at the call. No tick for the old
// period is received after Reset returns. Reset panics if d is not
// positive, or if the Ticker was not made by NewTicker, as package time's
// does; on a closed wheel it schedules nothing. The complexity is O(1).
func (tk *Ticker) Reset(d time.Duration) {
	if tk.n == nil {
		panic("timewheel: Reset called on uninitialized Ticker")
	}
	if d <= 0 {
		panic(badDuration("Ticker.Reset", "interval", d))
	}
	s := tk.n.t.s
	ns := s.w.since()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelLocked(&tk.n.t.e)
	drain(tk.C)
	tk.n.period = int64(d)
	if !s.closed {
		s.resets++
		tk.n.startGridLocked(ns)
	}
}
