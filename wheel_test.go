package timewheel_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
)

var epoch = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

// newVirtual returns a wheel on a virtual clock whose callbacks run inline,
// so every callback due has run when the clock's Advance returns.
func newVirtual(t *testing.T, opts ...timewheel.Option) (*timewheel.Wheel, *clock.Virtual) {
	t.Helper()
	clk := clock.NewVirtual(epoch)
	opts = append([]timewheel.Option{timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline())}, opts...)
	w := timewheel.New(opts...)
	t.Cleanup(func() { w.Close() })
	return w, clk
}

// TestNeverEarlyAtMostOneTickLate schedules timers at random durations and
// advances the virtual clock one wake at a time: each fires at or after its
// deadline and less than a tick after it, and in deadline order.
func TestNeverEarlyAtMostOneTickLate(t *testing.T) {
	for _, tc := range []struct {
		tick   time.Duration
		shards int
	}{{time.Millisecond, 1}, {7 * time.Millisecond, 1}, {time.Second, 1}, {time.Millisecond, 3}} {
		tick := tc.tick
		t.Run(fmt.Sprintf("tick=%v/shards=%d", tick, tc.shards), func(t *testing.T) {
			w, clk := newVirtual(t, timewheel.WithTick(tick), timewheel.WithShards(tc.shards))
			r := rand.New(rand.NewPCG(1, 2))
			type fire struct{ due, at time.Time }
			var fires []fire
			for range 2000 {
				d := time.Duration(r.Int64N(int64(10 * time.Minute)))
				if r.IntN(10) == 0 {
					clk.Advance(time.Duration(r.Int64N(int64(time.Second)))) // schedule from odd instants
				}
				due := clk.Now().Add(d)
				w.AfterFunc(d, func() { fires = append(fires, fire{due, clk.Now()}) })
			}
			for {
				if _, ok := clk.AdvanceNext(); !ok {
					break
				}
			}
			if len(fires) != 2000 {
				t.Fatalf("%d timers fired, want 2000", len(fires))
			}
			for i, f := range fires {
				if f.at.Before(f.due) {
					t.Fatalf("timer %d fired %v early", i, f.due.Sub(f.at))
				}
				if late := f.at.Sub(f.due); late >= tick {
					t.Fatalf("timer %d fired %v late, tick is %v", i, late, tick)
				}
				if i > 0 && f.at.Before(fires[i-1].at) {
					t.Fatalf("timer %d fired at %v, before timer %d at %v", i, f.at, i-1, fires[i-1].at)
				}
			}
		})
	}
}

// TestSameTickFiresInScheduleOrder checks libuv's start-id order: the
// durations differ by microseconds but round up to the same tick, and a
// Reset to an earlier deadline counts as a new start.
func TestSameTickFiresInScheduleOrder(t *testing.T) {
	w, clk := newVirtual(t)
	var got []int
	timers := make([]*timewheel.Timer, 100)
	for i := range timers {
		d := time.Second - time.Duration(i%3)*time.Microsecond
		if i == 10 {
			d = 2 * time.Second
		}
		timers[i] = w.AfterFunc(d, func() { got = append(got, i) })
	}
	timers[10].Reset(time.Second) // earlier: a new start, so 10 goes last
	clk.Advance(3 * time.Second)
	want := make([]int, 0, 100)
	for i := range 100 {
		if i != 10 {
			want = append(want, i)
		}
	}
	want = append(want, 10)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
}

// TestPostponedTimerJoinsItsTickWhenRefiled checks the order the package
// doc states for a Reset that postpones a pending timer: the timer stays
// where it was until its old deadline, and then joins the timers of its
// new tick behind those already there.
func TestPostponedTimerJoinsItsTickWhenRefiled(t *testing.T) {
	w, clk := newVirtual(t)
	var got []string
	a := w.AfterFunc(time.Second, func() { got = append(got, "a") })
	w.AfterFunc(2*time.Second, func() { got = append(got, "b") })
	if !a.Reset(2 * time.Second) { // later: postponed, not moved
		t.Fatal("Reset of a pending timer = false")
	}
	w.AfterFunc(2*time.Second, func() { got = append(got, "c") })
	clk.Advance(time.Second) // a's old deadline: nothing fires, a is filed again
	if len(got) != 0 {
		t.Fatalf("fired %v at a's old deadline", got)
	}
	w.AfterFunc(time.Second, func() { got = append(got, "d") })
	clk.Advance(time.Second)
	if want := "[b c a d]"; fmt.Sprint(got) != want {
		t.Fatalf("fired %v, want %v", got, want)
	}
}

// TestDriverNeverWakesForNothing counts the driver's wakes: every wake of
// the clock must fire a timer, and with nothing pending nothing is armed.
func TestDriverNeverWakesForNothing(t *testing.T) {
	w, clk := newVirtual(t)
	fired := 0
	var timers []*timewheel.Timer
	for i := range 300 {
		d := time.Duration(i*i) * 37 * time.Millisecond
		timers = append(timers, w.AfterFunc(d, func() { fired++ }))
	}
	for i := 0; i < len(timers); i += 3 {
		timers[i].Stop() // including the first, which the driver waits for
	}
	for {
		before := fired
		if _, ok := clk.AdvanceNext(); !ok {
			break
		}
		if fired == before {
			t.Fatalf("the driver woke at %v with nothing due (%d pending)", clk.Now(), w.Len())
		}
	}
	if fired != 200 || w.Len() != 0 || clk.Len() != 0 {
		t.Fatalf("fired %d, want 200; %d pending; %d clock timers armed", fired, w.Len(), clk.Len())
	}
	w.AfterFunc(time.Hour, func() {}).Stop()
	if clk.Len() != 0 {
		t.Fatal("the driver stays armed after the only timer was stopped")
	}
}

// TestEarlierTimerMovesDriver: scheduling an earlier timer wakes the
// driver sooner.
func TestEarlierTimerMovesDriver(t *testing.T) {
	w, clk := newVirtual(t)
	var order []string
	w.AfterFunc(time.Hour, func() { order = append(order, "hour") })
	w.AfterFunc(time.Second, func() { order = append(order, "second") })
	if d, _ := clk.AdvanceNext(); d != time.Second {
		t.Fatalf("driver woke after %v, want 1s", d)
	}
	clk.Advance(time.Hour)
	if strings.Join(order, ",") != "second,hour" {
		t.Fatalf("fired %v", order)
	}
}

// TestDurationsSaturate: durations near the end of time neither wrap nor
// fire.
func TestDurationsSaturate(t *testing.T) {
	for _, tick := range []time.Duration{time.Nanosecond, time.Millisecond, time.Hour} {
		w, clk := newVirtual(t, timewheel.WithTick(tick))
		clk.Advance(time.Hour)
		fired := false
		w.AfterFunc(math.MaxInt64, func() { fired = true })
		w.AfterFunc(math.MaxInt64-1, func() { fired = true })
		clk.Advance(100 * 365 * 24 * time.Hour)
		if fired || w.Len() != 2 {
			t.Fatalf("tick %v: a timer for the end of time fired (%v) or was lost (%d pending)", tick, fired, w.Len())
		}
	}
}

func TestNegativeAndZeroAreDueNow(t *testing.T) {
	w, clk := newVirtual(t)
	n := 0
	w.AfterFunc(0, func() { n++ })
	w.AfterFunc(-time.Hour, func() { n++ })
	w.AfterFunc(math.MinInt64, func() { n++ })
	clk.Advance(0)
	if n != 3 {
		t.Fatalf("%d of 3 due-now timers fired on Advance(0)", n)
	}
}

func TestTicker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := timewheel.New()
		defer w.Close()
		start := time.Now()
		tk := w.NewTicker(100 * time.Millisecond)
		for i := 1; i <= 3; i++ {
			if at := (<-tk.C).Sub(start); at != time.Duration(i)*100*time.Millisecond {
				t.Fatalf("tick %d at %v", i, at)
			}
		}
		time.Sleep(350 * time.Millisecond) // a slow receiver misses ticks
		if at := (<-tk.C).Sub(start); at != 400*time.Millisecond {
			t.Fatalf("buffered tick at %v, want 400ms", at)
		}
		if at := (<-tk.C).Sub(start); at != 700*time.Millisecond {
			t.Fatalf("next tick at %v, want 700ms (on the grid)", at)
		}
		tk.Reset(time.Second)
		if at := (<-tk.C).Sub(start); at != 1700*time.Millisecond {
			t.Fatalf("tick after Reset at %v, want 1.7s", at)
		}
		tk.Stop()
		time.Sleep(5 * time.Second)
		if received(tk.C) {
			t.Fatal("tick after Stop")
		}
		if w.Len() != 0 {
			t.Fatalf("%d pending after Stop", w.Len())
		}
	})
}

func TestSleepAndAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := timewheel.New()
		defer w.Close()
		start := time.Now()
		w.Sleep(1500 * time.Microsecond)
		if d := time.Since(start); d < 1500*time.Microsecond || d >= 2500*time.Microsecond {
			t.Fatalf("Sleep(1.5ms) took %v", d)
		}
		<-w.After(time.Minute)
		if d := time.Since(start); d < time.Minute {
			t.Fatalf("After(1m) fired after %v", d)
		}
	})
}

// TestPackageLevelFunctions uses the default wheel on the real clock. (The
// default wheel is process-wide, so it must not be first used inside a
// synctest bubble: a bubble's channels and timers cannot outlive it.)
func TestPackageLevelFunctions(t *testing.T) {
	if timewheel.Default() != timewheel.Default() {
		t.Fatal("Default returns different wheels")
	}
	done := make(chan bool)
	timewheel.AfterFunc(0, func() { done <- true })
	<-done
	<-timewheel.After(0)
	<-timewheel.NewTimer(-1).C
	tk := timewheel.NewTicker(time.Millisecond)
	<-tk.C
	tk.Stop()
	timewheel.Sleep(-1)
}

func TestBadInputPanics(t *testing.T) {
	w, _ := newVirtual(t)
	cases := []struct {
		name, want string
		f          func()
	}{
		{"NewTicker", "timewheel: NewTicker: non-positive interval -5ms", func() { w.NewTicker(-5 * time.Millisecond) }},
		{"NewTicker zero", "timewheel: NewTicker: non-positive interval 0s", func() { w.NewTicker(0) }},
		{"Ticker.Reset", "timewheel: Ticker.Reset: non-positive interval -1s", func() { w.NewTicker(time.Second).Reset(-time.Second) }},
		{"WithTick", "timewheel: WithTick: non-positive tick -1ns", func() { timewheel.WithTick(-1) }},
		{"AfterFunc nil", "timewheel: AfterFunc: nil func", func() { w.AfterFunc(time.Second, nil) }},
		{"WithWorkers", "timewheel: WithWorkers: fewer than one worker: 0", func() { timewheel.WithWorkers(0) }},
		{"WithShards", "timewheel: WithShards: fewer than one shard: -1", func() { timewheel.WithShards(-1) }},
		{"zero Timer", "timewheel: Stop called on uninitialized Timer", func() { new(timewheel.Timer).Stop() }},
		{"Pool.Execute nil", "timewheel: Pool.Execute: nil func", func() { timewheel.NewPool(1).Execute(nil) }},
		{"WithClock nil", "timewheel: WithClock: nil clock", func() { timewheel.WithClock(nil) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != c.want {
					t.Fatalf("panic %q, want %q", r, c.want)
				}
			}()
			c.f()
		})
	}
}

func TestPanicHandlerKeepsTheWheelRunning(t *testing.T) {
	var mu sync.Mutex
	var caught []any
	for _, name := range []string{"inline", "pool"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := []timewheel.Option{timewheel.WithPanicHandler(func(r any) {
					mu.Lock()
					caught = append(caught, r)
					mu.Unlock()
				})}
				if name == "inline" {
					opts = append(opts, timewheel.WithExecutor(timewheel.Inline()))
				}
				w := timewheel.New(opts...)
				defer w.Close()
				caught = nil
				ran := make(chan int, 10)
				for i := range 10 {
					w.AfterFunc(time.Second, func() {
						if i%3 == 0 {
							panic(fmt.Sprint("boom ", i))
						}
						ran <- i
					})
				}
				time.Sleep(2 * time.Second)
				synctest.Wait()
				if len(ran) != 6 || len(caught) != 4 {
					t.Fatalf("%d callbacks ran, %d panics caught; want 6 and 4", len(ran), len(caught))
				}
			})
		})
	}
}

func TestClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := timewheel.New()
		for range 5 {
			w.AfterFunc(time.Hour, func() { t.Error("a discarded timer fired") })
		}
		tm := w.NewTimer(time.Hour)
		slept := make(chan struct{})
		go func() { w.Sleep(24 * time.Hour); close(slept) }()
		synctest.Wait()
		started := make(chan struct{})
		finished := false
		w.AfterFunc(0, func() { close(started); time.Sleep(time.Second); finished = true })
		<-started
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if !finished {
			t.Fatal("Close returned before a running callback finished")
		}
		<-slept // Close ends a Sleep in progress
		if got := w.Discarded(); got != 7 {
			t.Fatalf("Discarded() = %d, want 7 (5 AfterFunc, 1 NewTimer, 1 Sleep)", got)
		}
		if tm.Stop() {
			t.Fatal("Stop of a discarded timer returned true")
		}
		if err := w.Close(); err != timewheel.ErrClosed {
			t.Fatalf("second Close = %v, want ErrClosed", err)
		}
		late := w.AfterFunc(time.Millisecond, func() { t.Error("a timer made after Close fired") })
		if late.Stop() || late.Reset(time.Second) || w.Len() != 0 {
			t.Fatal("a timer made after Close is pending")
		}
		w.Sleep(time.Hour) // returns at once
		time.Sleep(time.Hour)
	})
}

// TestConcurrentUse hammers one wheel from several goroutines; run it with
// -race. Every timer either fires once or is stopped, never both.
func TestConcurrentUse(t *testing.T) {
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprint("shards=", shards), func(t *testing.T) { concurrentUse(t, shards) })
	}
}

func concurrentUse(t *testing.T, shards int) {
	synctest.Test(t, func(t *testing.T) {
		w := timewheel.New(timewheel.WithShards(shards))
		defer w.Close()
		var wg sync.WaitGroup
		var mu sync.Mutex
		fired := map[int]int{}
		stopped := map[int]bool{}
		for g := range 4 {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), 9))
				for i := range 500 {
					id := g*1000 + i
					tm := w.AfterFunc(time.Duration(r.IntN(20))*time.Millisecond, func() {
						mu.Lock()
						fired[id]++
						mu.Unlock()
					})
					if r.IntN(2) == 0 {
						time.Sleep(time.Duration(r.IntN(3)) * time.Millisecond)
					}
					if r.IntN(3) == 0 && tm.Stop() {
						mu.Lock()
						stopped[id] = true
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		for id := range 4000 {
			if id%1000 >= 500 {
				continue
			}
			if fired[id]+btoi(stopped[id]) != 1 {
				t.Fatalf("timer %d fired %d times, stopped %v", id, fired[id], stopped[id])
			}
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestInlinePanicLeavesTheWheelWorking: with an inline executor and no
// panic handler, a callback's panic reaches whoever advanced the clock;
// if it is recovered there, the wheel still fires the timers after it.
func TestInlinePanicLeavesTheWheelWorking(t *testing.T) {
	w, clk := newVirtual(t)
	w.AfterFunc(time.Second, func() { panic("boom") })
	ran := false
	w.AfterFunc(2*time.Second, func() { ran = true })
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v, want boom", r)
			}
		}()
		clk.Advance(time.Second)
	}()
	clk.Advance(time.Second)
	if !ran {
		t.Fatal("the wheel stopped firing after a recovered panic")
	}
}

// TestEmptyingAWheelStopsTheDriver: when the driver waits at the start of
// a big coarse slot (its earliest timers were stopped), stopping all the
// rest must stop the driver too.
func TestEmptyingAWheelStopsTheDriver(t *testing.T) {
	w, clk := newVirtual(t)
	timers := make([]*timewheel.Timer, 200)
	for i := range timers {
		timers[i] = w.AfterFunc(10*time.Minute+time.Duration(i)*time.Millisecond, func() {})
	}
	for _, tm := range timers {
		tm.Stop()
	}
	if w.Len() != 0 || clk.Len() != 0 {
		t.Fatalf("%d pending, %d clock timers armed; want 0 and 0", w.Len(), clk.Len())
	}
}

// TestDueNowFiresAfterTimersAlreadyDue starts a timer with d = 0 at the
// instant an earlier timer falls due but before the driver has expired
// it: both are due at the same tick, so the one started first fires first
// (DESIGN: Order), as with package time.
func TestDueNowFiresAfterTimersAlreadyDue(t *testing.T) {
	w, clk := newVirtual(t)
	var order []string
	// A clock callback started before the wheel's driver runs first at the
	// same instant: the wheel's timer "first" is due then but not expired.
	clk.AfterFunc(10*time.Millisecond, func() {
		w.AfterFunc(0, func() { order = append(order, "second(d=0)") })
	})
	w.AfterFunc(10*time.Millisecond, func() { order = append(order, "first(d=10ms)") })
	clk.Advance(10 * time.Millisecond)
	clk.Advance(0)
	if got := strings.Join(order, ","); got != "first(d=10ms),second(d=0)" {
		t.Fatalf("fired in order %s; want first(d=10ms),second(d=0)", got)
	}
}

// captureClock is a virtual clock that also hands the test the driver
// callback the wheel registers, so that the test can call it from a
// second goroutine as a real clock's timer goroutine would.
type captureClock struct {
	*clock.Virtual
	mu sync.Mutex
	f  func()
}

func (c *captureClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	c.mu.Lock()
	c.f = f
	c.mu.Unlock()
	return c.Virtual.AfterFunc(d, f)
}

func (c *captureClock) driver() func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.f
}
