package timewheel

import (
	"sync"
	"time"
)

// Default returns the wheel behind the package-level functions: made by
// New() on first use, with a one-millisecond tick and the real clock. It
// serves the whole process, as package time's timers do, so it cannot be
// closed: its Close returns ErrDefaultWheel and closes nothing. While no
// timer is pending it holds no goroutine.
//
// The default wheel is shared by the whole process, so it cannot live in
// a testing/synctest bubble. Code tested inside bubbles should take a
// *Wheel made inside the bubble (New), not use the package-level
// functions.
func Default() *Wheel { return defaultWheel() }

var defaultWheel = sync.OnceValue(func() *Wheel {
	w := New()
	w.process = true
	return w
})

// AfterFunc is Default().AfterFunc: a drop-in for time.AfterFunc.
func AfterFunc(d time.Duration, f func()) *Timer { return Default().AfterFunc(d, f) }

// NewTimer is Default().NewTimer: a drop-in for time.NewTimer. Started and
// stopped with no other timer pending, it costs more than package time's
// (BenchmarkChanPatterns): it sets and stops the wheel's runtime timer,
// and allocates a node for the wheel besides the Timer.
func NewTimer(d time.Duration) *Timer { return Default().NewTimer(d) }

// After is Default().After: a drop-in for time.After. An After dropped
// before it fires, in a select that mostly takes another case, costs
// several times package time's (BenchmarkChanPatterns): there, keep
// time.After.
func After(d time.Duration) <-chan time.Time { return Default().After(d) }

// NewTicker is Default().NewTicker: a drop-in for time.NewTicker. Started
// and stopped with no other timer pending, it costs more than package
// time's, as NewTimer does.
func NewTicker(d time.Duration) *Ticker { return Default().NewTicker(d) }

// Tick is Default().Tick: a drop-in for time.Tick, nil for d ≤ 0.
func Tick(d time.Duration) <-chan time.Time { return Default().Tick(d) }

// Sleep is Default().Sleep: a drop-in for time.Sleep.
func Sleep(d time.Duration) { Default().Sleep(d) }
