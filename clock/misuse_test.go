package clock_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/internal/misusetest"
)

// A misuse is one wrong use of the package and what it must do: want is
// "panic: " and the exact message, or what the call returns, printed.
type misuse struct {
	name string
	f    func() any
	want string
}

func checkMisuse(t *testing.T, c misuse) {
	t.Helper()
	if got := misusetest.Printed(c.f); got != c.want {
		t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
	}
}

func runMisuses(t *testing.T, cases []misuse) {
	t.Helper()
	for _, c := range cases {
		checkMisuse(t, c)
	}
}

// TestZeroVirtual: the zero Virtual is a clock at the zero time.Time,
// ready to use, declared or made with new.
func TestZeroVirtual(t *testing.T) {
	for name, mk := range map[string]func() *clock.Virtual{
		"var":  func() *clock.Virtual { var v clock.Virtual; return &v },
		"new":  func() *clock.Virtual { return new(clock.Virtual) },
		"zero": func() *clock.Virtual { return clock.NewVirtual(time.Time{}) },
	} {
		runMisuses(t, []misuse{
			{name + " Now", func() any { return mk().Now() }, "0001-01-01 00:00:00 +0000 UTC"},
			{name + " Since", func() any { return mk().Since(time.Time{}.Add(-time.Second)) }, "1s"},
			{name + " Len", func() any { return mk().Len() }, "0"},
			{name + " Next", func() any { w, ok := mk().Next(); return fmt.Sprint(w, ok) }, "0001-01-01 00:00:00 +0000 UTC false"},
			{name + " AdvanceNext", func() any { d, ok := mk().AdvanceNext(); return fmt.Sprint(d, ok) }, "0s false"},
			{name + " AdvanceTo its own time", func() any { return mk().AdvanceTo(time.Time{}) }, "0"},
			{name + " AfterFunc and Advance", func() any {
				v := mk()
				var at time.Time
				v.AfterFunc(time.Second, func() { at = v.Now() })
				n := v.Advance(2 * time.Second)
				return fmt.Sprint(n, " ran at ", at.Sub(time.Time{}), ", now ", v.Now().Sub(time.Time{}))
			}, "1 ran at 1s, now 2s"},
		})
	}
}

// TestNilVirtual: every method of a nil *Virtual panics naming itself.
// They used to die with a nil dereference.
func TestNilVirtual(t *testing.T) {
	var v *clock.Virtual
	const nilV = " called on a nil *Virtual"
	runMisuses(t, []misuse{
		{"nil Now", func() any { return v.Now() }, "panic: clock: Now" + nilV},
		{"nil Since", func() any { return v.Since(start) }, "panic: clock: Since" + nilV},
		{"nil AfterFunc", func() any { return v.AfterFunc(time.Second, func() {}) }, "panic: clock: AfterFunc" + nilV},
		{"nil Len", func() any { return v.Len() }, "panic: clock: Len" + nilV},
		{"nil Next", func() any { w, ok := v.Next(); return fmt.Sprint(w, ok) }, "panic: clock: Next" + nilV},
		{"nil Advance", func() any { return v.Advance(time.Second) }, "panic: clock: Advance" + nilV},
		{"nil AdvanceTo", func() any { return v.AdvanceTo(start) }, "panic: clock: AdvanceTo" + nilV},
		{"nil AdvanceNext", func() any { d, ok := v.AdvanceNext(); return fmt.Sprint(d, ok) }, "panic: clock: AdvanceNext" + nilV},
	})
}

func TestMisuseNilAndExtremes(t *testing.T) {
	runMisuses(t, []misuse{
		{"Virtual.AfterFunc nil", func() any { return clock.NewVirtual(start).AfterFunc(time.Second, nil) },
			"panic: clock: Virtual.AfterFunc called with nil func"},
		// Package time would start a goroutine for nil and die with an
		// unrecoverable "go of nil func value" when the timer fires.
		{"Real().AfterFunc nil", func() any { return clock.Real().AfterFunc(time.Hour, nil) },
			"panic: clock: Real().AfterFunc called with nil func"},
		{"Advance -1ns", func() any { return clock.NewVirtual(start).Advance(-1) },
			"panic: clock: Virtual.Advance called with negative duration -1ns"},
		{"Advance MinInt64", func() any { return clock.NewVirtual(start).Advance(math.MinInt64) },
			"panic: clock: Virtual.Advance called with negative duration -2562047h47m16.854775808s"},
		{"AdvanceTo 1ns back", func() any { return clock.NewVirtual(start).AdvanceTo(start.Add(-1)) },
			"panic: clock: Virtual.AdvanceTo called with 2025-12-31 23:59:59.999999999 +0000 UTC, before the current time 2026-01-01 00:00:00 +0000 UTC"},
		{"AfterFunc MinInt64 is due now", func() any {
			v := clock.NewVirtual(start)
			v.AfterFunc(math.MinInt64, func() {})
			return v.Advance(0)
		}, "1"},
		{"AfterFunc MaxInt64 is far off", func() any {
			v := clock.NewVirtual(start)
			v.AfterFunc(math.MaxInt64, func() {})
			n := v.Advance(math.MaxInt64 - 1)
			return fmt.Sprint(n, v.Advance(1))
		}, "0 1"},
		{"Advance MaxInt64 twice", func() any {
			v := clock.NewVirtual(start)
			v.Advance(math.MaxInt64)
			v.Advance(math.MaxInt64)
			return v.Since(start) == math.MaxInt64 && v.Now().Sub(start.Add(math.MaxInt64)) == math.MaxInt64
		}, "true"},
		{"Real().Since the zero time saturates", func() any { return clock.Real().Since(time.Time{}) }, "2562047h47m16.854775807s"},
		{"Real() timer Stop twice, Reset MaxInt64", func() any {
			tm := clock.Real().AfterFunc(time.Hour, func() {})
			return fmt.Sprint(tm.Stop(), tm.Stop(), tm.Reset(math.MaxInt64), tm.Stop())
		}, "true false false true"},
	})
}

// TestMisuseFromCallbacks: calls into the clock from one of its own
// callbacks.
func TestMisuseFromCallbacks(t *testing.T) {
	defer clock.SetRearmLimit(1000)()
	runMisuses(t, []misuse{
		{"Stop own timer", func() any {
			v := clock.NewVirtual(start)
			var tm clock.Timer
			var stopped bool
			tm = v.AfterFunc(time.Second, func() { stopped = tm.Stop() })
			return fmt.Sprint(v.Advance(time.Second), stopped, v.Len())
		}, "1 false 0"},
		{"Reset own timer", func() any {
			v := clock.NewVirtual(start)
			var tm clock.Timer
			var was []bool
			tm = v.AfterFunc(time.Second, func() { was = append(was, tm.Reset(time.Second)) })
			return fmt.Sprint(v.Advance(3*time.Second), was, v.Len())
		}, "3 [false false false] 1"},
		// The outer Advance goes on from where the inner one left the
		// clock; it used to set the clock back to its own target, 2s.
		{"Advance past the outer target", func() any {
			v := clock.NewVirtual(start)
			v.AfterFunc(time.Second, func() { v.Advance(10 * time.Second) })
			var late time.Duration
			v.AfterFunc(5*time.Second, func() { late = v.Since(start) })
			n := v.Advance(2 * time.Second)
			return fmt.Sprint(n, " ", late, " ", v.Since(start))
		}, "1 5s 11s"}, // the inner Advance ran the 5s timer
		{"Advance within the outer target", func() any {
			v := clock.NewVirtual(start)
			v.AfterFunc(time.Second, func() { v.Advance(time.Second) })
			n := v.Advance(3 * time.Second)
			return fmt.Sprint(n, " ", v.Since(start))
		}, "1 3s"},
		// These used to keep Advance from returning.
		{"Reset own timer to zero forever", func() any {
			v := clock.NewVirtual(start)
			var tm clock.Timer
			tm = v.AfterFunc(time.Second, func() { tm.Reset(0) })
			return v.Advance(time.Hour)
		}, "panic: clock: Virtual.Advance stuck at 2026-01-01 00:00:01 +0000 UTC: callbacks started or reset 1000 timers in a row due at once (for zero or less), so time could not pass; give them a positive duration"},
		{"a chain of new timers due at once", func() any {
			v := clock.NewVirtual(start)
			var again func()
			again = func() { v.AfterFunc(-time.Second, again) }
			v.AfterFunc(0, again)
			return v.AdvanceTo(start)
		}, "panic: clock: Virtual.AdvanceTo stuck at 2026-01-01 00:00:00 +0000 UTC: callbacks started or reset 1000 timers in a row due at once (for zero or less), so time could not pass; give them a positive duration"},
		// The first is not counted: it was started before the advance.
		{"a finite chain due at once runs", func() any {
			v := clock.NewVirtual(start)
			n := 0
			var again func()
			again = func() {
				if n++; n <= 1000 {
					v.AfterFunc(0, again)
				}
			}
			v.AfterFunc(0, again)
			d, ok := v.AdvanceNext()
			return fmt.Sprint(d, ok, n)
		}, "0s true 1001"},
		{"many timers due at once, started before", func() any {
			v := clock.NewVirtual(start)
			for range 5000 {
				v.AfterFunc(0, func() {})
			}
			return v.Advance(0)
		}, "5000"},
		{"the clock works after the stuck panic", func() any {
			v := clock.NewVirtual(start)
			var tm clock.Timer
			tm = v.AfterFunc(0, func() { tm.Reset(0) })
			misusetest.Printed(func() any { return v.Advance(0) })
			tm.Stop()
			v.AfterFunc(time.Second, func() {})
			return fmt.Sprint(v.Advance(time.Second), v.Since(start))
		}, "1 1s"},
	})
}
