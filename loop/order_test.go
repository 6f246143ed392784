package loop_test

import (
	"testing"
	"time"

	"github.com/timewheel/timewheel/loop"
)

// TestRepeatRearmOrderAsLibuv: libuv re-arms a repeating timer
// (uv_timer_again, a new start_id) right before running its own callback,
// so a timer started by an earlier callback of the same pass, for the same
// due time, runs first.
func TestRepeatRearmOrderAsLibuv(t *testing.T) {
	clk, l := virtualLoop()
	g := &log{clk: clk}
	l.AfterFunc(10*time.Millisecond, func() {
		g.add("X starts B")
		l.AfterFunc(10*time.Millisecond, func() { g.add("B") })
	})
	n := 0
	var a *loop.Timer
	a = l.NewTimer(func() {
		n++
		g.add("A%d", n)
		if n == 2 {
			a.Stop()
		}
	})
	a.Start(10*time.Millisecond, 10*time.Millisecond)
	drive(l, clk, time.Hour)
	g.want(t, "10ms X starts B", "10ms A1", "20ms B", "20ms A2")
}
