package timewheel_test

import (
	"fmt"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
)

// The package-level functions are package time's, one word changed.
func ExampleAfterFunc() {
	done := make(chan string)
	timewheel.AfterFunc(10*time.Millisecond, func() { done <- "fired" })
	fmt.Println(<-done)
	// Output: fired
}

func ExampleNewTimer() {
	t := timewheel.NewTimer(time.Millisecond)
	<-t.C
	fmt.Println("Stop after receiving:", t.Stop())
	// Output: Stop after receiving: false
}

func ExampleAfter() {
	select {
	case <-timewheel.After(5 * time.Millisecond):
		fmt.Println("timed out")
	case <-make(chan int):
	}
	// Output: timed out
}

func ExampleNewTicker() {
	tk := timewheel.NewTicker(time.Millisecond)
	defer tk.Stop()
	for range 3 {
		<-tk.C
	}
	fmt.Println("three ticks")
	// Output: three ticks
}

func ExampleSleep() {
	start := time.Now()
	timewheel.Sleep(2 * time.Millisecond)
	fmt.Println(time.Since(start) >= 2*time.Millisecond)
	// Output: true
}

// A wheel on a virtual clock, with callbacks run inline, is how to test
// code that uses timers: the clock moves only when told, and when Advance
// returns every callback due has run.
func ExampleNew() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()

	for _, d := range []time.Duration{3 * time.Second, time.Second, 2 * time.Second} {
		w.AfterFunc(d, func() { fmt.Println("fired at", clk.Now().Format("15:04:05")) })
	}
	clk.Advance(time.Minute)
	// Output:
	// fired at 00:00:01
	// fired at 00:00:02
	// fired at 00:00:03
}

func ExampleTimer_Stop() {
	w := timewheel.New()
	defer w.Close()
	t := w.AfterFunc(time.Hour, func() { fmt.Println("never") })
	fmt.Println(t.Stop(), t.Stop())
	// Output: true false
}

func ExampleTimer_Reset() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()

	// An idle timeout, pushed back on every bit of activity.
	idle := w.AfterFunc(30*time.Second, func() { fmt.Println("idle at", clk.Now().Format("15:04:05")) })
	for range 3 {
		clk.Advance(20 * time.Second)
		idle.Reset(30 * time.Second)
	}
	clk.Advance(time.Minute)
	// Output: idle at 00:01:30
}

func ExampleWithPanicHandler() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(
		timewheel.WithClock(clk),
		timewheel.WithExecutor(timewheel.Inline()),
		timewheel.WithPanicHandler(func(r any) { fmt.Println("recovered:", r) }),
	)
	defer w.Close()
	w.AfterFunc(time.Second, func() { panic("boom") })
	w.AfterFunc(2*time.Second, func() { fmt.Println("still running") })
	clk.Advance(time.Minute)
	// Output:
	// recovered: boom
	// still running
}

func ExampleWheel_Close() {
	w := timewheel.New()
	w.AfterFunc(time.Hour, func() {})
	w.AfterFunc(time.Hour, func() {})
	fmt.Println(w.Close(), w.Discarded())
	fmt.Println(w.Close())
	fmt.Println(w.AfterFunc(time.Second, func() {}).Stop())
	// Output:
	// <nil> 2
	// timewheel: wheel closed
	// false
}

// A ticker on a virtual clock: ticks stay on the grid of the interval, and
// Reset starts a new grid from now.
func ExampleTicker_Reset() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()

	tk := w.NewTicker(time.Second)
	defer tk.Stop()
	for range 2 {
		clk.Advance(time.Second)
		fmt.Println("tick at", (<-tk.C).Format("15:04:05"))
	}
	tk.Reset(time.Minute)
	clk.Advance(time.Minute)
	fmt.Println("tick at", (<-tk.C).Format("15:04:05"))
	// Output:
	// tick at 00:00:01
	// tick at 00:00:02
	// tick at 00:01:02
}

// Shards let many goroutines start and stop timers without contending for
// one lock; timers on different shards due at the same tick fire in no
// particular order.
func ExampleWithShards() {
	w := timewheel.New(timewheel.WithShards(8))
	defer w.Close()
	done := make(chan struct{}, 100)
	for range 100 {
		go w.AfterFunc(time.Millisecond, func() { done <- struct{}{} })
	}
	for range 100 {
		<-done
	}
	fmt.Println("100 fired, pending:", w.Len())
	// Output: 100 fired, pending: 0
}
