package timewheel

import (
	"math"
	"time"
)

// Ticker holds a channel that delivers the current time at intervals, like
// time.Ticker. A receiver that falls behind misses ticks rather than
// queueing them, and the ticks stay on the grid of the interval. It is made
// by [Wheel.NewTicker].
//
// A Ticker is safe for concurrent use.
type Ticker struct {
	t      Timer // first: the wheel's link; t.f and t.C nil mark a Ticker
	C      <-chan time.Time
	c      chan time.Time
	period int64 // ticks; guarded by t.s.mu
}

// NewTicker returns a new Ticker that sends the current time on its
// channel every d (rounded up to the wheel's tick). NewTicker panics if d
// is not positive. The complexity is O(1).
func (w *Wheel) NewTicker(d time.Duration) *Ticker {
	if d <= 0 {
		panic(badDuration("NewTicker", "interval", d))
	}
	c := make(chan time.Time, 1)
	tk := &Ticker{C: c, c: c, t: Timer{s: w.shard()}}
	tk.period = w.ticks(d)
	tk.t.s.start(&tk.t.e, d)
	return tk
}

// ticks returns d in ticks, rounded up, at least one.
func (w *Wheel) ticks(d time.Duration) int64 {
	return max(1, (int64(d)-1)/int64(w.tick)+1)
}

// Stop turns off the ticker. No tick is received from C after Stop
// returns. Stop does not close the channel. The complexity is O(1).
func (tk *Ticker) Stop() {
	s := tk.t.s
	if s == nil {
		panic("timewheel: Stop called on uninitialized Ticker")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelLocked(&tk.t.e)
	drain(tk.C)
}

// Reset stops the ticker and resets its period to d: the next tick arrives
// after d. No tick for the old period is received after Reset returns.
// Reset panics if d is not positive; on a closed wheel it schedules
// nothing. The complexity is O(1).
func (tk *Ticker) Reset(d time.Duration) {
	s := tk.t.s
	if s == nil {
		panic("timewheel: Reset called on uninitialized Ticker")
	}
	if d <= 0 {
		panic(badDuration("Ticker.Reset", "interval", d))
	}
	when := s.w.deadline(d)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelLocked(&tk.t.e)
	drain(tk.C)
	tk.period = s.w.ticks(d)
	if !s.closed {
		s.scheduleLocked(&tk.t.e, when)
	}
}

// expireLocked sends a tick and schedules the next one on the grid: the
// first multiple of the period after now, so a late driver skips ticks
// instead of bunching them.
func (tk *Ticker) expireLocked(now int64, sent time.Time) {
	select {
	case tk.c <- sent:
	default:
	}
	last, p := tk.t.e.When(), tk.period
	k := max(now-last, 0)/p + 1  // periods to the first grid point after now
	next := int64(math.MaxInt64) // the grid has run off the end of time
	if k <= (math.MaxInt64-last)/p {
		next = last + p*k
	}
	tk.t.s.q.Insert(&tk.t.e, next)
}
