// Package ticks is the tick arithmetic that the scheduler and the loop
// share. Time on a wheel is a count of ticks since an epoch. Every
// deadline rounds up to a tick, so that no timer fires early.
package ticks

import (
	"math"
	"time"
)

// Deadline returns the tick at which a timer started at ns (nanoseconds
// since the epoch) with duration d falls due: rounded up, so that it never
// fires early, and saturated at the end of time. A d of zero or less is due
// at the current tick, ns rounded down: after the timers already due at it.
func Deadline(ns int64, d time.Duration, tick time.Duration) int64 {
	if d <= 0 {
		return ns / int64(tick)
	}
	if ns > math.MaxInt64-int64(d) {
		return math.MaxInt64 / int64(tick) // saturate, never wrap
	}
	return Ceil(ns+int64(d), tick)
}

// Ceil returns the first tick at or after ns, without overflow.
func Ceil(ns int64, tick time.Duration) int64 {
	if ns <= 0 {
		return ns / int64(tick)
	}
	return (ns-1)/int64(tick) + 1
}

// Add returns a+b for b ≥ 0, saturated at math.MaxInt64.
func Add(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Until returns the time from ns to the start of tick t, or math.MaxInt64
// if the tick lies past the end of time. It is negative for a past tick.
func Until(t int64, ns int64, tick time.Duration) time.Duration {
	if t > math.MaxInt64/int64(tick) {
		return math.MaxInt64
	}
	return time.Duration(t*int64(tick) - ns)
}

// NextOnGrid returns the first point after ns of the grid through last
// with the given period, all in nanoseconds, saturated at the end of time.
// So a tick or a repeating run that comes late skips grid points instead
// of bunching them. last is the grid point just served.
func NextOnGrid(last, period, ns int64) int64 {
	if ns < last {
		return Add(last, period)
	}
	k := (ns-last)/period + 1
	if k > (math.MaxInt64-last)/period {
		return math.MaxInt64
	}
	return last + period*k
}
