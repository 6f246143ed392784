package loop_test

import (
	"math"
	"testing"
	"time"
)

// TestTimeoutNearMaxSaturates starts timers within a tick of the end of
// time: they saturate there and must not run an hour later, as they would
// if rounding the deadline up to the tick wrapped round.
func TestTimeoutNearMaxSaturates(t *testing.T) {
	for _, d := range []time.Duration{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 - time.Microsecond} {
		clk, l := virtualLoop()
		ran := false
		tm := l.AfterFunc(d, func() { ran = true })
		tm.Unref()
		clk.Advance(time.Hour)
		l.RunNoWait()
		if ran {
			t.Errorf("AfterFunc(%d) ran an hour later", int64(d))
		}
	}
}
