package timewheel_test

import (
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
)

// TestDriverCalledConcurrentlyNeverStalls calls the wheel's driver from a
// second goroutine while the clock fires it, as the real clock does when
// the driver for one tick starts while the one for the tick before is
// finishing. A call that finds the driver busy asks it to go round again;
// the request must never be lost, or the shard stops firing for good. The
// race is narrow: the test repeats it for a fixed amount of work time,
// and fails on the first stall.
func TestDriverCalledConcurrentlyNeverStalls(t *testing.T) {
	cc := &captureClock{Virtual: clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	w := timewheel.New(timewheel.WithClock(cc), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	budget := time.Now().Add(500 * time.Millisecond) // bounds the work, asserts nothing about time
	for i := 0; time.Now().Before(budget); i++ {
		var fired sync.WaitGroup
		fired.Add(1)
		done := make(chan struct{})
		var once sync.Once
		w.AfterFunc(time.Millisecond, func() { once.Do(func() { fired.Done(); close(done) }) })
		f := cc.driver()
		var wg sync.WaitGroup
		wg.Add(2)
		deadline := cc.Now().Add(time.Millisecond)
		go func() { // stray driver calls until the clock reaches the deadline
			defer wg.Done()
			for cc.Now().Before(deadline) {
				f()
			}
		}()
		go func() { // the clock reaches the deadline and fires the driver
			defer wg.Done()
			cc.Advance(time.Millisecond)
		}()
		wg.Wait()
		select {
		case <-done:
			continue
		default:
		}
		// Both driver calls have returned after the deadline. Give the
		// wheel every chance: move the clock a long way.
		cc.Advance(time.Hour)
		select {
		case <-done:
			continue
		default:
		}
		later := false
		w.AfterFunc(time.Millisecond, func() { later = true })
		cc.Advance(time.Hour)
		t.Fatalf("iteration %d: timer due 1ms out never fired after the clock moved 1h past it (Len %d, clock timers pending %d); a new 1ms timer fired after another hour: %v",
			i, w.Len(), cc.Virtual.Len(), later)
	}
}
