package timewheel_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel"
)

// TestBurstMovedAheadOnTheScheduler starts bursts of timers due within a
// few ticks, some seconds or minutes ahead, and advances the virtual clock
// from one driver wake to the next: the engine moves a big burst down
// ahead of time (see queue.Wheel), which costs wakes with nothing due
// before the burst, counted in Stats.EmptyWakeups, and none inside it;
// every timer fires at its deadline, those of one tick in start order. A
// burst too small to be moved costs no wake at all.
func TestBurstMovedAheadOnTheScheduler(t *testing.T) {
	for _, c := range []struct {
		n         int
		lead      time.Duration
		wantEmpty bool
	}{
		{3000, 100 * time.Millisecond, true},
		{3000, 10 * time.Second, true},
		{3000, 5 * time.Minute, true},
		{500, 10 * time.Second, false},
	} {
		t.Run(fmt.Sprintf("n=%d/lead=%v", c.n, c.lead), func(t *testing.T) {
			w, clk := newVirtual(t)
			type fire struct {
				i  int
				at time.Time
			}
			var fired []fire
			due := func(i int) time.Duration { return c.lead + time.Duration(i*3%7)*time.Millisecond }
			for i := range c.n {
				w.AfterFunc(due(i), func() { fired = append(fired, fire{i, clk.Now()}) })
			}
			start := epoch.Add(c.lead)
			empty := 0
			for w.Len() > 0 {
				before := len(fired)
				if _, ok := clk.AdvanceNext(); !ok {
					t.Fatalf("%d pending and the driver is not armed", w.Len())
				}
				if len(fired) == before {
					if !clk.Now().Before(start) {
						t.Fatalf("the driver woke at %v, inside the burst, with nothing due", clk.Now().Sub(epoch))
					}
					empty++
				}
			}
			for j, f := range fired {
				if want := epoch.Add(due(f.i)); !f.at.Equal(want) {
					t.Fatalf("timer %d fired at %v, due at %v", f.i, f.at.Sub(epoch), want.Sub(epoch))
				}
				if j > 0 && f.at.Equal(fired[j-1].at) && f.i < fired[j-1].i {
					t.Fatalf("timers %d and %d, due together, fired out of start order", fired[j-1].i, f.i)
				}
			}
			if len(fired) != c.n {
				t.Fatalf("fired %d of %d", len(fired), c.n)
			}
			if got := w.Stats().EmptyWakeups; got != uint64(empty) {
				t.Fatalf("Stats.EmptyWakeups = %d, the clock saw %d", got, empty)
			}
			if c.wantEmpty != (empty > 0) || empty > 3 {
				t.Fatalf("%d wakes with nothing due; want some (at most 3): %v", empty, c.wantEmpty)
			}
		})
	}
}

// TestBurstsUnderConcurrentUse: goroutines start bursts of AfterFunc
// timers due about five seconds out, big enough to be moved ahead of
// time, and stop or reset some of them, earlier and later, while the
// driver moves and fires them, in a synctest bubble on a wheel with
// several shards. Each schedule that was not cancelled fires once, never
// before its deadline, and nothing else fires.
func TestBurstsUnderConcurrentUse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const goroutines, n = 4, 1500
		w := timewheel.New(timewheel.WithShards(3))
		defer w.Close()
		type timer struct {
			t     *timewheel.Timer
			due   time.Time // of the schedule in force; zero if stopped
			fired int       // times its callback ran
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), 7))
				timers := make([]*timer, n)
				for i := range timers {
					tm := &timer{}
					d := 4900*time.Millisecond + time.Duration(r.IntN(200))*time.Millisecond
					mu.Lock()
					tm.due = time.Now().Add(d)
					tm.t = w.AfterFunc(d, func() {
						mu.Lock()
						defer mu.Unlock()
						if tm.due.IsZero() || time.Now().Before(tm.due) {
							t.Errorf("timer fired at %v, due %v", time.Now(), tm.due)
						}
						tm.fired++
					})
					mu.Unlock()
					timers[i] = tm
				}
				for range 3 * n {
					time.Sleep(time.Duration(r.IntN(3)) * time.Millisecond)
					tm := timers[r.IntN(n)]
					mu.Lock()
					// Only timers certainly pending (due after the next
					// tick), whose Stop and Reset must then return true.
					if !tm.due.IsZero() && time.Until(tm.due) > 2*time.Millisecond {
						if r.IntN(3) == 0 {
							if !tm.t.Stop() {
								t.Errorf("Stop of a timer due in %v = false", time.Until(tm.due))
							}
							tm.due = time.Time{}
						} else {
							d := time.Duration(r.IntN(6000)) * time.Millisecond
							if !tm.t.Reset(d) {
								t.Errorf("Reset of a timer due in %v = false", time.Until(tm.due))
							}
							tm.due = time.Now().Add(d)
						}
					}
					mu.Unlock()
				}
				time.Sleep(10 * time.Second)
				mu.Lock()
				defer mu.Unlock()
				for i, tm := range timers {
					if want := 1; tm.due.IsZero() {
						want = 0
						if tm.fired != want {
							t.Errorf("goroutine %d timer %d: stopped, fired %d times", g, i, tm.fired)
						}
					} else if tm.fired != want {
						t.Errorf("goroutine %d timer %d: due %v, fired %d times", g, i, tm.due, tm.fired)
					}
				}
			})
		}
		wg.Wait()
		if w.Len() != 0 {
			t.Fatalf("%d timers pending at the end", w.Len())
		}
	})
}
