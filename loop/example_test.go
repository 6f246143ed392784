package loop_test

import (
	"fmt"
	"sync"
	"time"

	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/loop"
)

// A loop runs its timers on the goroutine that calls Run, and Run returns
// once no referenced timer is left. The unreferenced ticker fires while the
// loop runs, but does not keep it running.
func Example() {
	l := loop.New()
	frames := 0 // touched only on the loop goroutine
	tick := l.Every(10*time.Millisecond, func() { frames++ })
	tick.Unref()
	l.AfterFunc(35*time.Millisecond, func() { fmt.Println("game over; frames drawn:", frames > 0) })
	if err := l.Run(); err != nil {
		fmt.Println(err)
	}
	fmt.Println("Run returned; ticker still active:", tick.Active())
	// Output:
	// game over; frames drawn: true
	// Run returned; ticker still active: true
}

// Work done on other goroutines reports back with Post; the results are
// handled on the loop goroutine, so the map needs no lock. A Ref keeps the
// loop waiting until the producers are done.
func ExampleLoop_Post() {
	l := loop.New()
	results := map[int]int{} // touched only on the loop goroutine
	l.Ref()
	var wg sync.WaitGroup
	for i := 1; i <= 3; i++ {
		wg.Go(func() {
			sq := i * i // work off the loop
			l.Post(func() { results[i] = sq })
		})
	}
	go func() { wg.Wait(); l.Unref() }()
	l.Run()
	fmt.Println(results)
	// Output: map[1:1 2:4 3:9]
}

// Again restarts a repeating timer from now: an idle timeout refreshed by
// each event, as libuv's documentation suggests. Driven here by a virtual
// clock, moved to each timer in turn with Timeout and RunNoWait.
func ExampleTimer_Again() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewVirtual(start)
	l := loop.New(loop.WithClock(clk))

	var idle *loop.Timer
	idle = l.NewTimer(func() {
		fmt.Println("idle at", clk.Now().Sub(start))
		idle.Stop()
	})
	idle.Start(time.Second, time.Second)
	for _, at := range []time.Duration{300, 900, 1500} { // events, in ms
		l.AfterFunc(at*time.Millisecond, func() {
			fmt.Println("event at", clk.Now().Sub(start))
			idle.Again()
		})
	}
	for l.RunNoWait() {
		d, _ := l.Timeout()
		clk.Advance(d)
	}
	// Output:
	// event at 300ms
	// event at 900ms
	// event at 1.5s
	// idle at 2.5s
}
