package ticks

import (
	"math"
	"testing"
	"time"
)

func TestDeadline(t *testing.T) {
	for _, c := range []struct {
		ns   int64
		d    time.Duration
		tick time.Duration
		want int64
	}{
		{0, time.Millisecond, time.Millisecond, 1},
		{1, time.Millisecond, time.Millisecond, 2},                       // 1.000001 ms rounds up
		{999_999, 1, time.Millisecond, 1},                                // exactly on a tick
		{2_500_000, 0, time.Millisecond, 2},                              // due now: the current tick
		{2_500_000, -time.Hour, time.Millisecond, 2},                     // negative: due now
		{10, math.MaxInt64, time.Millisecond, math.MaxInt64 / 1_000_000}, // saturates
	} {
		if got := Deadline(c.ns, c.d, c.tick); got != c.want {
			t.Errorf("Deadline(%d, %v, %v) = %d, want %d", c.ns, c.d, c.tick, got, c.want)
		}
	}
}

func TestNextOnGrid(t *testing.T) {
	for _, c := range []struct{ last, period, ns, want int64 }{
		{10, 5, 10, 15}, // on time: the next point
		{10, 5, 9, 15},  // early reading: still the next point
		{10, 5, 27, 30}, // late: the first point after ns, skipping 15, 20, 25
		{10, 5, 30, 35}, // exactly on a point: the one after
		{math.MaxInt64 - 3, 5, math.MaxInt64 - 1, math.MaxInt64}, // off the end of time
	} {
		if got := NextOnGrid(c.last, c.period, c.ns); got != c.want {
			t.Errorf("NextOnGrid(%d, %d, %d) = %d, want %d", c.last, c.period, c.ns, got, c.want)
		}
	}
}
