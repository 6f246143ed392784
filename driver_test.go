package timewheel_test

import (
	"fmt"
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

// TestDriverMovesFromShardsAtOnce starts and stops timers of random
// deadlines from every processor at once, so that shards move their wakes
// while others do, and, with firing set, while the driver fires. The
// driver's move skips its lock when nothing changes for it; a skip that
// raced a reset would lose a shard's wake or delay it, a timer that fires
// late or never, or keep a withdrawn one, a wake with nothing due. Every
// timer not stopped must fire within its tick (the bubble's clock has no
// delay), none early, and none stays pending. Without firing, no wake
// may be empty. (With it, a Stop from another processor while the shard
// fires may cost one: see Wheel.)
func TestDriverMovesFromShardsAtOnce(t *testing.T) {
	for _, firing := range []bool{false, true} {
		t.Run(fmt.Sprintf("firing=%v", firing), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { movesFromShardsAtOnce(t, firing) })
		})
	}
}

func movesFromShardsAtOnce(t *testing.T, firing bool) {
	w := timewheel.New()
	defer w.Close()
	start := time.Now()
	var (
		wg                     sync.WaitGroup
		mu                     sync.Mutex
		started, stopped, runs int
		early, late            []time.Duration
	)
	for g := range 4 * runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := uint64(g)*0x9e3779b97f4a7c15 + 1
			next := func(n uint64) uint64 { // xorshift: no shared state
				r ^= r << 13
				r ^= r >> 7
				r ^= r << 17
				return r % n
			}
			var alive []*timewheel.Timer // a few, so that ticks empty as they are stopped
			for i := range 3000 {
				d := time.Duration(next(60)+1) * time.Millisecond
				at := time.Now().Add(d)
				alive = append(alive, w.AfterFunc(d, func() {
					mu.Lock()
					defer mu.Unlock()
					runs++
					switch now := time.Now(); {
					case now.Before(at):
						early = append(early, at.Sub(now))
					case now.Sub(at) > time.Millisecond: // the tick; the bubble's driver is never late
						late = append(late, now.Sub(at))
					}
				}))
				if len(alive) > 8 {
					k := int(next(uint64(len(alive))))
					if alive[k].Stop() {
						mu.Lock()
						stopped++
						mu.Unlock()
					}
					alive = slices.Delete(alive, k, k+1)
				}
				if firing && i%100 == 0 {
					time.Sleep(time.Duration(next(3)) * time.Millisecond) // let the driver fire meanwhile
				}
			}
			mu.Lock()
			started += 3000
			mu.Unlock()
		}()
	}
	wg.Wait()
	time.Sleep(time.Second) // past every deadline
	synctest.Wait()
	if runs+stopped != started {
		t.Errorf("%d timers started, %d stopped, %d fired: %d lost", started, stopped, runs, started-stopped-runs)
	}
	if len(early) > 0 {
		t.Errorf("%d timers early, by up to %v", len(early), slices.Max(early))
	}
	if len(late) > 0 {
		t.Errorf("%d timers late by more than the tick, by up to %v", len(late), slices.Max(late))
	}
	if n := w.Len(); n != 0 {
		t.Errorf("%v after the start: %d timers pending", time.Since(start), n)
	}
	if st := w.Stats(); !firing && st.EmptyWakeups != 0 {
		t.Errorf("%d of %d wakes empty", st.EmptyWakeups, st.Wakeups)
	}
}
