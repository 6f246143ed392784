package loop_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/loop"
)

var start = time.Unix(1e9, 0)

func virtualLoop() (*clock.Virtual, *loop.Loop) {
	clk := clock.NewVirtual(start)
	return clk, loop.New(loop.WithClock(clk))
}

// drive runs l on the test goroutine, moving the virtual clock to each
// timer in turn, until the loop has nothing left or the clock would pass
// limit.
func drive(l *loop.Loop, clk *clock.Virtual, limit time.Duration) {
	for l.RunNoWait() {
		d, ok := l.Timeout()
		if !ok || clk.Now().Add(d).Sub(start) > limit {
			return
		}
		clk.Advance(d)
	}
}

// log records what ran when, on the loop goroutine only: a plain slice,
// which the race detector checks is never touched concurrently.
type log struct {
	clk   clock.Clock
	lines []string
}

func (g *log) add(format string, args ...any) {
	g.lines = append(g.lines, fmt.Sprintf("%v ", g.clk.Now().Sub(start))+fmt.Sprintf(format, args...))
}

func (g *log) want(t *testing.T, want ...string) {
	t.Helper()
	if !slices.Equal(g.lines, want) {
		t.Fatalf("ran:\n%s\nwant:\n%s", strings.Join(g.lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestTimerOrder(t *testing.T) {
	clk, l := virtualLoop()
	g := &log{clk: clk}
	for i, ms := range []int{30, 10, 20, 10, 0} {
		l.AfterFunc(time.Duration(ms)*time.Millisecond, func() { g.add("timer %d started %d", ms, i) })
	}
	drive(l, clk, time.Hour)
	// Equal deadlines run in start order, as libuv's start_id.
	g.want(t, "0s timer 0 started 4", "10ms timer 10 started 1", "10ms timer 10 started 3",
		"20ms timer 20 started 2", "30ms timer 30 started 0")
}

func TestRepeatStopAgain(t *testing.T) {
	clk, l := virtualLoop()
	g := &log{clk: clk}
	n := 0
	var tm *loop.Timer
	tm = l.NewTimer(func() {
		n++
		g.add("tick %d", n)
		switch n {
		case 3:
			tm.SetRepeat(100 * time.Millisecond)
		case 5:
			tm.Stop()
		}
	})
	if err := tm.Again(); err != loop.ErrNeverStarted {
		t.Fatalf("Again before Start = %v, want ErrNeverStarted", err)
	}
	tm.Start(100*time.Millisecond, 50*time.Millisecond)
	drive(l, clk, time.Hour)
	g.want(t, "100ms tick 1", "150ms tick 2", "200ms tick 3", "250ms tick 4", "350ms tick 5")
	if tm.Active() {
		t.Fatal("stopped timer is active")
	}
	// Again restarts it with the repeat as the timeout.
	if err := tm.Again(); err != nil {
		t.Fatal(err)
	}
	drive(l, clk, 450*time.Millisecond)
	g.want(t, "100ms tick 1", "150ms tick 2", "200ms tick 3", "250ms tick 4", "350ms tick 5", "450ms tick 6")
	if !tm.Stop() || tm.Stop() {
		t.Fatal("Stop should report true once, then false")
	}
}

func TestCallbackStopsAndRestartsDueTimers(t *testing.T) {
	clk, l := virtualLoop()
	g := &log{clk: clk}
	var b, c *loop.Timer
	l.AfterFunc(10*time.Millisecond, func() {
		g.add("a stops b, restarts c")
		if !b.Stop() {
			t.Error("b was due but not yet run: Stop should report it active")
		}
		c.Start(5*time.Millisecond, 0)
	})
	b = l.AfterFunc(10*time.Millisecond, func() { g.add("b") })
	c = l.AfterFunc(10*time.Millisecond, func() { g.add("c") })
	drive(l, clk, time.Hour)
	g.want(t, "10ms a stops b, restarts c", "15ms c")
}

// TestNeverEarly: random timers fire at the first tick at or after their
// deadline, never before.
func TestNeverEarly(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	clk, l := virtualLoop()
	fired := 0
	for range 500 {
		d := time.Duration(r.Int64N(int64(10 * time.Second)))
		due := start.Add(d)
		l.AfterFunc(d, func() {
			fired++
			now := clk.Now()
			if now.Before(due) || now.Sub(due) >= time.Millisecond {
				t.Errorf("timer for %v fired at %v", due.Sub(start), now.Sub(start))
			}
		})
	}
	drive(l, clk, time.Hour)
	if fired != 500 {
		t.Fatalf("%d of 500 timers fired", fired)
	}
}

// TestRunSynctest runs the loop with the real clock inside a synctest
// bubble: Run returns when the last referenced timer has fired, and an
// unreferenced ticker fires meanwhile without keeping it alive.
func TestRunSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		l := loop.New()
		g := &log{clk: clock.Real()}
		g.lines = nil
		tick := l.Every(300*time.Millisecond, func() { g.lines = append(g.lines, fmt.Sprint("tick ", time.Since(t0))) })
		tick.Unref()
		if tick.HasRef() {
			t.Fatal("HasRef after Unref")
		}
		l.AfterFunc(time.Second, func() { g.lines = append(g.lines, fmt.Sprint("done ", time.Since(t0))) })
		if err := l.Run(); err != nil {
			t.Fatal(err)
		}
		if time.Since(t0) != time.Second {
			t.Errorf("Run returned after %v, want 1s", time.Since(t0))
		}
		g.want(t, "tick 300ms", "tick 600ms", "tick 900ms", "done 1s")
		if !tick.Active() {
			t.Fatal("the unreferenced ticker should still be active")
		}
		// An unreferenced timer alone does not keep Run alive...
		if err := l.Run(); err != nil || time.Since(t0) != time.Second {
			t.Fatalf("Run with only an unreferenced timer: %v after %v", err, time.Since(t0))
		}
		// ...until it is referenced again.
		n := 0
		tick.Stop()
		tick = l.NewTimer(func() {
			n++
			if n == 2 {
				tick.Stop()
			}
		})
		tick.Start(0, 100*time.Millisecond)
		tick.Unref()
		tick.Ref()
		if err := l.Run(); err != nil || n != 2 || time.Since(t0) != time.Second+100*time.Millisecond {
			t.Fatalf("Run with a referenced timer: %v, %d runs, after %v", err, n, time.Since(t0))
		}
	})
}

func TestRunNothingReturnsAtOnce(t *testing.T) {
	_, l := virtualLoop()
	if err := l.Run(); err != nil {
		t.Fatal(err)
	}
	if l.RunOnce() || l.RunNoWait() {
		t.Fatal("an empty loop reports itself alive")
	}
	if _, ok := l.Timeout(); ok {
		t.Fatal("an empty loop has a timeout")
	}
}

// TestPostFromGoroutines: functions posted from many goroutines all run,
// on the loop goroutine (the race detector checks the plain counter), in
// each poster's order, and a Ref keeps Run waiting for them.
func TestPostFromGoroutines(t *testing.T) {
	_, l := virtualLoop()
	const posters, each = 8, 200
	count := 0
	last := make([]int, posters)
	l.Ref()
	var wg sync.WaitGroup
	for p := range posters {
		wg.Go(func() {
			for i := range each {
				if err := l.Post(func() {
					count++
					if last[p] != i {
						t.Errorf("poster %d: ran %d after %d", p, i, last[p]-1)
					}
					last[p] = i + 1
				}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	go func() { wg.Wait(); l.Unref() }()
	if err := l.Run(); err != nil {
		t.Fatal(err)
	}
	if count != posters*each {
		t.Fatalf("ran %d posted functions, want %d", count, posters*each)
	}
}

// TestRunOnVirtualClock: Run on its own goroutine, the test moving the
// virtual clock; a posted function is the barrier that says the loop has
// caught up.
func TestRunOnVirtualClock(t *testing.T) {
	clk, l := virtualLoop()
	fired := make(chan time.Duration, 10)
	l.Every(time.Second, func() { fired <- clk.Now().Sub(start) })
	done := make(chan error)
	go func() { done <- l.Run() }()
	for i := 1; i <= 3; i++ {
		clk.Advance(time.Second)
		barrier := make(chan struct{})
		l.Post(func() { close(barrier) })
		<-barrier
		if got := <-fired; got != time.Duration(i)*time.Second {
			t.Fatalf("tick %d at %v", i, got)
		}
	}
	l.Stop()
	if err := <-done; err != loop.ErrStopped {
		t.Fatalf("Run after Stop = %v, want ErrStopped", err)
	}
	if err := l.Post(func() { t.Error("ran after Stop") }); err != loop.ErrStopped {
		t.Fatalf("Post after Stop = %v, want ErrStopped", err)
	}
	if err := l.Run(); err != loop.ErrStopped {
		t.Fatalf("Run on a stopped loop = %v", err)
	}
}

func TestStopFromCallback(t *testing.T) {
	clk, l := virtualLoop()
	ran := 0
	l.AfterFunc(time.Second, func() { ran++; l.Stop() })
	l.AfterFunc(time.Second, func() { ran++ })
	l.Post(func() { ran++ })
	drive(l, clk, time.Hour)
	if ran != 2 { // the posted function and the first timer
		t.Fatalf("%d callbacks ran, want 2: nothing runs after Stop", ran)
	}
	if err := l.Run(); err != loop.ErrStopped {
		t.Fatalf("Run = %v", err)
	}
}

func TestStopWhileWaiting(t *testing.T) {
	_, l := virtualLoop()
	l.Ref()
	done := make(chan error)
	go func() { done <- l.Run() }()
	l.Post(func() {}) // the loop is running or about to
	l.Stop()
	if err := <-done; err != loop.ErrStopped {
		t.Fatalf("Run = %v", err)
	}
}

func TestPanickingCallback(t *testing.T) {
	clk, l := virtualLoop()
	var ran []string
	l.AfterFunc(time.Second, func() { ran = append(ran, "a"); panic("boom") })
	l.AfterFunc(time.Second, func() { ran = append(ran, "b") })
	clk.Advance(time.Second)
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v", r)
			}
		}()
		l.RunNoWait()
	}()
	if l.RunNoWait() {
		t.Fatal("loop still alive after both timers")
	}
	if !slices.Equal(ran, []string{"a", "b"}) {
		t.Fatalf("ran %v: the timer due with the panicking one should run on the next pass", ran)
	}
}

func TestWithTick(t *testing.T) {
	clk := clock.NewVirtual(start)
	l := loop.New(loop.WithClock(clk), loop.WithTick(time.Second))
	var at time.Duration
	l.AfterFunc(1500*time.Millisecond, func() { at = clk.Now().Sub(start) })
	drive(l, clk, time.Hour)
	if at != 2*time.Second {
		t.Fatalf("a 1.5s timer on a 1s tick fired at %v, want 2s", at)
	}
}

// TestRepeatKeepsItsRate: a repeating timer whose repeat is not a whole
// number of ticks keeps to its exact grid, each run rounded up to the
// tick, as the scheduler's Ticker does: 666 runs of 1.5 ms in a second
// (on the old tick grid, 1.5 ms rounded to 2 ms: 500), none early.
func TestRepeatKeepsItsRate(t *testing.T) {
	for _, tc := range []struct {
		tick, repeat time.Duration
		want         int
	}{
		{time.Millisecond, 1500 * time.Microsecond, 666},
		{time.Millisecond, 10250 * time.Microsecond, 97},
		{10 * time.Millisecond, 10250 * time.Microsecond, 97},
	} {
		clk := clock.NewVirtual(start)
		l := loop.New(loop.WithClock(clk), loop.WithTick(tc.tick))
		runs := 0
		l.Every(tc.repeat, func() {
			runs++
			if due := time.Duration(runs) * tc.repeat; clk.Now().Sub(start) < due {
				t.Fatalf("run %d at %v, before its grid point %v", runs, clk.Now().Sub(start), due)
			}
		})
		drive(l, clk, time.Second)
		if runs != tc.want {
			t.Errorf("tick %v, repeat %v: %d runs in a second, want %d", tc.tick, tc.repeat, runs, tc.want)
		}
	}
}
