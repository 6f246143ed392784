package clock_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/timewheel/timewheel/clock"
)

var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestAdvanceStopsAtEveryDeadline: callbacks run in deadline order, then
// start order, each seeing Now at its own deadline.
func TestAdvanceStopsAtEveryDeadline(t *testing.T) {
	v := clock.NewVirtual(start)
	var got []string
	for i, d := range []time.Duration{3 * time.Second, time.Second, 2 * time.Second, time.Second} {
		v.AfterFunc(d, func() { got = append(got, fmt.Sprintf("%d@%v", i, v.Since(start))) })
	}
	if n := v.Advance(10 * time.Second); n != 4 {
		t.Fatalf("Advance ran %d callbacks, want 4", n)
	}
	want := "[1@1s 3@1s 2@2s 0@3s]"
	if fmt.Sprint(got) != want {
		t.Fatalf("got %v, want %v", got, want)
	}
	if v.Since(start) != 10*time.Second {
		t.Fatalf("clock at %v, want 10s", v.Since(start))
	}
}

// TestCallbackMayScheduleInsideTheAdvance: a timer started by a callback
// for a deadline inside the advance runs in the same advance.
func TestCallbackMayScheduleInsideTheAdvance(t *testing.T) {
	v := clock.NewVirtual(start)
	var at []time.Duration
	var tick func()
	tick = func() {
		at = append(at, v.Since(start))
		if len(at) < 5 {
			v.AfterFunc(time.Second, tick)
		}
	}
	v.AfterFunc(time.Second, tick)
	v.Advance(3500 * time.Millisecond)
	if fmt.Sprint(at) != "[1s 2s 3s]" {
		t.Fatalf("ran at %v, want [1s 2s 3s]", at)
	}
	if v.Len() != 1 {
		t.Fatalf("%d pending, want 1", v.Len())
	}
}

func TestStopAndReset(t *testing.T) {
	v := clock.NewVirtual(start)
	ran := 0
	tm := v.AfterFunc(time.Second, func() { ran++ })
	if !tm.Stop() || tm.Stop() {
		t.Fatal("Stop: want true then false")
	}
	if tm.Reset(2 * time.Second) {
		t.Fatal("Reset of a stopped timer returned true")
	}
	if !tm.Reset(3 * time.Second) {
		t.Fatal("Reset of a pending timer returned false")
	}
	v.Advance(2 * time.Second)
	if ran != 0 {
		t.Fatal("the timer ran at its old deadline")
	}
	if d, ok := v.AdvanceNext(); !ok || d != time.Second || ran != 1 {
		t.Fatalf("AdvanceNext moved %v (%v), ran %d; want 1s and 1", d, ok, ran)
	}
	if _, ok := v.AdvanceNext(); ok {
		t.Fatal("AdvanceNext with nothing pending moved the clock")
	}
	if _, ok := v.Next(); ok {
		t.Fatal("Next with nothing pending")
	}
}

func TestDueNowRunsOnTheNextMove(t *testing.T) {
	v := clock.NewVirtual(start)
	ran := 0
	v.AfterFunc(-time.Hour, func() { ran++ })
	v.AfterFunc(0, func() { ran++ })
	if next, _ := v.Next(); !next.Equal(start) {
		t.Fatalf("Next = %v, want the current time", next)
	}
	v.Advance(0)
	if ran != 2 {
		t.Fatalf("ran %d of 2 due-now callbacks", ran)
	}
}

func TestRealClock(t *testing.T) {
	c := clock.Real()
	now := c.Now()
	if c.Since(now) < 0 {
		t.Fatal("negative Since on the real clock")
	}
	done := make(chan struct{})
	c.AfterFunc(time.Millisecond, func() { close(done) })
	<-done
}

func ExampleVirtual() {
	v := clock.NewVirtual(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	v.AfterFunc(90*time.Minute, func() { fmt.Println("reminder at", v.Now().Format("15:04")) })
	v.AfterFunc(30*time.Minute, func() { fmt.Println("coffee at", v.Now().Format("15:04")) })
	v.Advance(2 * time.Hour)
	fmt.Println("now", v.Now().Format("15:04"))
	// Output:
	// coffee at 09:30
	// reminder at 10:30
	// now 11:00
}
