package timewheel

import (
	"time"

	"github.com/timewheel/timewheel/internal/ticks"
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
// A Ticker is safe for concurrent use.
type Ticker struct {
	t      Timer // first: the wheel's link; t.f and t.C nil mark a Ticker
	C      <-chan time.Time
	c      chan time.Time
	period int64 // nanoseconds; guarded by t.s.mu
	next   int64 // the grid point pending, nanoseconds since the wheel's epoch; guarded by t.s.mu
}

// NewTicker returns a new Ticker that sends the current time on its
// channel every d. NewTicker panics if d is not positive. The complexity
// is O(1).
func (w *Wheel) NewTicker(d time.Duration) *Ticker {
	if d <= 0 {
		panic(badDuration("NewTicker", "interval", d))
	}
	c := make(chan time.Time, 1)
	tk := &Ticker{C: c, c: c, t: Timer{s: w.shard()}, period: int64(d)}
	s := tk.t.s
	ns := w.since()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		tk.scheduleLocked(ns)
	}
	return tk
}

// scheduleLocked starts the grid at clock reading ns: the first tick is
// one period later.
func (tk *Ticker) scheduleLocked(ns int64) {
	tk.next = ticks.Add(ns, tk.period)
	tk.t.s.scheduleLocked(&tk.t.e, ticks.Ceil(tk.next, tk.t.s.w.tick), ns)
}

// Stop turns off the ticker. No tick is received from C after Stop
// returns. Stop does not close the channel. Stop on a Ticker not made by
// NewTicker (such as &Ticker{C: c}, a fake in a test) does nothing, as
// package time's does. The complexity is O(1).
func (tk *Ticker) Stop() {
	s := tk.t.s
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelLocked(&tk.t.e)
	drain(tk.C)
}

// Reset stops the ticker and resets its period to d: the next tick arrives
// after d, and the grid starts anew at the call. No tick for the old
// period is received after Reset returns. Reset panics if d is not
// positive, or if the Ticker was not made by NewTicker, as package time's
// does; on a closed wheel it schedules nothing. The complexity is O(1).
func (tk *Ticker) Reset(d time.Duration) {
	s := tk.t.s
	if s == nil {
		panic("timewheel: Reset called on uninitialized Ticker")
	}
	if d <= 0 {
		panic(badDuration("Ticker.Reset", "interval", d))
	}
	ns := s.w.since()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelLocked(&tk.t.e)
	drain(tk.C)
	tk.period = int64(d)
	if !s.closed {
		tk.scheduleLocked(ns)
	}
}

// expireLocked sends a tick and schedules the next one on the grid: the
// first grid point after ns, the driver's clock reading, so that a late
// driver skips ticks instead of bunching them.
func (tk *Ticker) expireLocked(ns int64, sent time.Time) {
	select {
	case tk.c <- sent:
	default:
	}
	if ns >= tk.next {
		k := (ns-tk.next)/tk.period + 1 // periods to the first grid point after ns
		if k > (1<<63-1-tk.next)/tk.period {
			tk.next = 1<<63 - 1 // the grid has run off the end of time
		} else {
			tk.next += tk.period * k
		}
	}
	tk.t.s.q.Insert(&tk.t.e, ticks.Ceil(tk.next, tk.t.s.w.tick))
}
