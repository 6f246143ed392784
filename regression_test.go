package timewheel_test

import (
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
)

// TestDurationsNearMaxSaturate starts timers, timers with a channel and
// tickers within a tick of the end of time, on a fresh clock and an hour
// into it: they saturate at the end of time and must not fire a second
// later, as they would if rounding the deadline up to the tick wrapped.
func TestDurationsNearMaxSaturate(t *testing.T) {
	cases := []struct {
		name    string
		advance time.Duration // clock moved this far past the wheel's epoch first
		d       time.Duration
	}{
		{"fresh wheel, MaxInt64", 0, math.MaxInt64},
		{"fresh wheel, MaxInt64-1", 0, math.MaxInt64 - 1},
		{"after 1h, MaxInt64-1h", time.Hour, math.MaxInt64 - time.Hour},
		{"after 1h, MaxInt64-1h-1", time.Hour, math.MaxInt64 - time.Hour - 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, clk := newVirtual(t)
			clk.Advance(c.advance)
			fired := false
			w.AfterFunc(c.d, func() { fired = true })
			tm := w.NewTimer(c.d)
			tk := w.NewTicker(c.d)
			clk.Advance(time.Second)
			if fired {
				t.Errorf("AfterFunc(%d) fired after 1s", int64(c.d))
			}
			select {
			case <-tm.C:
				t.Errorf("NewTimer(%d) fired after 1s", int64(c.d))
			default:
			}
			select {
			case <-tk.C:
				t.Errorf("NewTicker(%d) ticked after 1s", int64(c.d))
			default:
			}
		})
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

// TestCloseConcurrentWithAfterFunc races Close against AfterFunc, Reset
// and Stop on other goroutines: nothing hangs, and nothing started after
// Close fires or stays pending.
func TestCloseConcurrentWithAfterFunc(t *testing.T) {
	for range 50 {
		w, clk := newVirtual(t)
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 200 {
					tm := w.AfterFunc(time.Millisecond, func() {})
					tm.Reset(2 * time.Millisecond)
					tm.Stop()
				}
			}()
		}
		w.Close()
		wg.Wait()
		n := 0
		w.AfterFunc(0, func() { n++ })
		clk.Advance(time.Hour)
		if n != 0 || w.Len() != 0 {
			t.Fatalf("after Close: %d fired, %d pending", n, w.Len())
		}
	}
}

// TestStopResetFromCallback calls Stop and Reset, of another timer and of
// itself, from inside an inline callback: no deadlock, the right results,
// and the timers touched fire as rescheduled.
func TestStopResetFromCallback(t *testing.T) {
	w, clk := newVirtual(t)
	var got []string
	var other, self *timewheel.Timer
	other = w.AfterFunc(5*time.Millisecond, func() { got = append(got, "other") })
	self = w.AfterFunc(time.Millisecond, func() {
		got = append(got, "self")
		if !other.Stop() {
			t.Error("Stop of a pending timer from a callback returned false")
		}
		if other.Reset(3 * time.Millisecond) {
			t.Error("Reset of a stopped timer returned true")
		}
		if len(got) == 1 {
			self.Reset(time.Millisecond)
		}
	})
	clk.Advance(10 * time.Millisecond)
	if s := strings.Join(got, ","); s != "self,self,other" {
		t.Fatalf("fired %s; want self,self,other", s)
	}
}

// TestResetOnClosedWheelTakesBackValue: a value the timer sent before
// Close is taken back by Reset after it, as Stop does, so that no stale
// value is received once Reset has returned.
func TestResetOnClosedWheelTakesBackValue(t *testing.T) {
	w, clk := newVirtual(t)
	tm := w.NewTimer(time.Millisecond)
	clk.Advance(time.Millisecond) // fired: a value waits in C
	w.Close()
	active := tm.Reset(time.Hour)
	select {
	case v := <-tm.C:
		t.Fatalf("Reset on a closed wheel returned %v, then a stale value (%v) was received from C", active, v)
	default:
	}
}

// TestInlinePanicKeepsSameTickTimers: a callback that panics through an
// inline executor (recovered by whoever advanced the clock) does not lose
// the callbacks due at the same tick after it; they run on the next
// advance.
func TestInlinePanicKeepsSameTickTimers(t *testing.T) {
	w, clk := newVirtual(t)
	w.AfterFunc(time.Second, func() { panic("boom") })
	ran := false
	w.AfterFunc(time.Second, func() { ran = true })
	func() {
		defer func() { recover() }()
		clk.Advance(time.Second)
	}()
	clk.Advance(time.Hour)
	if !ran {
		t.Fatalf("the timer due at the same tick as the panicking one never ran (Len %d)", w.Len())
	}
}
