package timewheel_test

import (
	"math"
	"testing"
	"time"
)

// TestDurationsNearMaxSaturate starts timers, timers with a channel and
// tickers within a tick of the end of time, on a fresh clock and an hour
// into it: they saturate at the end of time and must not fire a second
// later, as they would if rounding the deadline up to the tick wrapped.
func TestDurationsNearMaxSaturate(t *testing.T) {
	cases := []struct {
		name    string
		advance time.Duration // clock moved this far past the wheel's epoch first
		d       time.Duration
	}{
		{"fresh wheel, MaxInt64", 0, math.MaxInt64},
		{"fresh wheel, MaxInt64-1", 0, math.MaxInt64 - 1},
		{"after 1h, MaxInt64-1h", time.Hour, math.MaxInt64 - time.Hour},
		{"after 1h, MaxInt64-1h-1", time.Hour, math.MaxInt64 - time.Hour - 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, clk := newVirtual(t)
			clk.Advance(c.advance)
			fired := false
			w.AfterFunc(c.d, func() { fired = true })
			tm := w.NewTimer(c.d)
			tk := w.NewTicker(c.d)
			clk.Advance(time.Second)
			if fired {
				t.Errorf("AfterFunc(%d) fired after 1s", int64(c.d))
			}
			select {
			case <-tm.C:
				t.Errorf("NewTimer(%d) fired after 1s", int64(c.d))
			default:
			}
			select {
			case <-tk.C:
				t.Errorf("NewTicker(%d) ticked after 1s", int64(c.d))
			default:
			}
		})
	}
}
