package timewheel_test

import (
	"runtime"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
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

// realTimeClock is the real clock under another name, so that the wheel
// cannot tell it is clock.Real; rt says what its RealTime reports.
type realTimeClock struct {
	clock.Clock
	rt bool
}

func (c realTimeClock) RealTime() bool { return c.rt }

// TestRealTimeClock: a wheel treats a clock.RealTime that reports true as
// the real clock (a shard per processor, due shards fired in parallel)
// and one that reports false as a test clock (one shard); timers fire on
// both, never early. It runs in a synctest bubble, where the real clock's
// time is the bubble's.
func TestRealTimeClock(t *testing.T) {
	for _, rt := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			w := timewheel.New(timewheel.WithClock(realTimeClock{clock.Real(), rt}))
			defer w.Close()
			want := 1
			if rt {
				want = runtime.GOMAXPROCS(0)
			}
			if got := w.Stats().Shards; got != want {
				t.Errorf("RealTime %v: %d shards, want %d", rt, got, want)
			}
			start := time.Now()
			var wg sync.WaitGroup
			var mu sync.Mutex
			var early []time.Duration
			for i := range 64 {
				wg.Add(1)
				d := time.Duration(i%8+1) * time.Second
				done := make(chan struct{})
				go func() {
					w.AfterFunc(d, func() {
						if e := time.Since(start); e < d {
							mu.Lock()
							early = append(early, d-e)
							mu.Unlock()
						}
						close(done)
					})
					<-done
					wg.Done()
				}()
			}
			wg.Wait()
			if len(early) > 0 {
				t.Errorf("RealTime %v: %d timers early, by up to %v", rt, len(early), slices.Max(early))
			}
		})
	}
}
