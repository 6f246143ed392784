package loop_test

import (
	"errors"
	"fmt"
	"math"
	"net"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/loop"
)

// A misuse is one wrong use of the package and what it must do: want is
// "panic: " and the exact message, or what the call returns, printed.
type misuse struct {
	name string
	f    func() any
	want string
}

// outcome runs f and returns what it returned, printed, or "panic: " and
// what it panicked with.
func outcome(f func() any) (s string) {
	defer func() {
		if r := recover(); r != nil {
			s = fmt.Sprint("panic: ", r)
		}
	}()
	return fmt.Sprint(f())
}

func checkMisuse(t *testing.T, c misuse) {
	t.Helper()
	if got := outcome(c.f); got != c.want {
		t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
	}
}

func runMisuses(t *testing.T, cases []misuse) {
	t.Helper()
	for _, c := range cases {
		checkMisuse(t, c)
	}
}

func noopf() {}

// TestZeroLoop: the zero Loop, declared or made with new, is the loop
// New() returns. It used to die with a nil dereference in Run, RunOnce,
// RunNoWait, Timeout, Now, AfterFunc and Every.
func TestZeroLoop(t *testing.T) {
	for name, mk := range map[string]func() *loop.Loop{
		"var": func() *loop.Loop { var l loop.Loop; return &l },
		"new": func() *loop.Loop { return new(loop.Loop) },
	} {
		runMisuses(t, []misuse{
			{name + " Now", func() any { return mk().Now().IsZero() }, "false"},
			{name + " Run", func() any { return mk().Run() }, "<nil>"},
			{name + " RunOnce", func() any { return mk().RunOnce() }, "false"},
			{name + " RunNoWait", func() any { return mk().RunNoWait() }, "false"},
			{name + " Timeout", func() any { d, ok := mk().Timeout(); return fmt.Sprint(d, ok) }, "0s false"},
			{name + " Unref", func() any { mk().Unref(); return nil }, "panic: loop: Unref called with no Ref held"},
			{name + " Ref, Unref, Run", func() any { l := mk(); l.Ref(); l.Unref(); return l.Run() }, "<nil>"},
			{name + " Post, Run", func() any {
				l := mk()
				ran := false
				err := l.Post(func() { ran = true })
				return fmt.Sprint(err, l.Run(), ran)
			}, "<nil> <nil> true"},
			{name + " Stop, Post, Run", func() any {
				l := mk()
				l.Stop()
				return fmt.Sprint(l.Post(noopf), l.Run())
			}, "loop: stopped loop: stopped"},
			{name + " NewTimer", func() any { return mk().NewTimer(noopf).Active() }, "false"},
		})
		// Its timers run on the real clock, with a millisecond tick.
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := mk()
				t0 := time.Now()
				var at []time.Duration
				l.AfterFunc(1500*time.Microsecond, func() { at = append(at, time.Since(t0)) })
				n := 0
				var every *loop.Timer
				every = l.Every(time.Second, func() {
					if n++; n == 2 {
						every.Stop()
					}
					at = append(at, time.Since(t0))
				})
				if err := l.Run(); err != nil {
					t.Fatal(err)
				}
				if got := fmt.Sprint(at); got != "[2ms 1s 2s]" {
					t.Errorf("%s Loop: timers ran at %s, want [2ms 1s 2s]", name, got)
				}
			})
		})
	}
}

// TestZeroTimer: the zero Timer is a stopped timer of no loop. Start and
// Stop used to die with a nil dereference.
func TestZeroTimer(t *testing.T) {
	for name, mk := range map[string]func() *loop.Timer{
		"var": func() *loop.Timer { var t loop.Timer; return &t },
		"new": func() *loop.Timer { return new(loop.Timer) },
	} {
		runMisuses(t, []misuse{
			{name + " Start", func() any { mk().Start(time.Second, 0); return nil },
				"panic: loop: Timer.Start called on a zero Timer; make one with Loop.NewTimer"},
			{name + " Stop", func() any { return mk().Stop() }, "false"},
			{name + " Again", func() any { return errors.Is(mk().Again(), loop.ErrNeverStarted) }, "true"},
			{name + " SetRepeat, Repeat", func() any { tm := mk(); tm.SetRepeat(time.Second); return tm.Repeat() }, "1s"},
			{name + " Active", func() any { return mk().Active() }, "false"},
			{name + " Unref, Ref", func() any {
				tm := mk()
				tm.Unref()
				a := tm.HasRef()
				tm.Ref()
				return fmt.Sprint(a, tm.HasRef())
			}, "false true"},
		})
	}
}

// TestCopiedTimer: the methods that change a timer panic on a copy,
// and the original and its loop go on as if nothing happened. A copy's
// Stop used to return true and unlink the original from the wheel, whose
// count went wrong; a copy's Unref made Run return with the original
// still active.
func TestCopiedTimer(t *testing.T) {
	const copied = "called on a copy of a Timer; use the *Timer that Loop.NewTimer returned"
	for _, c := range []struct {
		method string
		f      func(c *loop.Timer)
	}{
		{"Start", func(c *loop.Timer) { c.Start(time.Second, 0) }},
		{"Stop", func(c *loop.Timer) { c.Stop() }},
		{"Again", func(c *loop.Timer) { c.Again() }},
		{"Unref", func(c *loop.Timer) { c.Unref() }},
		{"Ref", func(c *loop.Timer) { c.Ref() }},
	} {
		checkMisuse(t, misuse{"copy " + c.method, func() any {
			clk, l := virtualLoop()
			var ran []string
			tm := l.AfterFunc(time.Second, func() { ran = append(ran, "original") })
			l.AfterFunc(time.Second, func() { ran = append(ran, "other") })
			cp := copyTimer(tm)
			got := outcome(func() any { c.f(cp); return nil })
			clk.Advance(time.Second)
			alive := l.RunNoWait()
			return fmt.Sprint(got, "; then ran ", ran, ", alive ", alive, ", active ", tm.Active())
		}, "panic: loop: Timer." + c.method + " " + copied + "; then ran [original other], alive false, active false"})
	}
	checkMisuse(t, misuse{"copy reads", func() any {
		_, l := virtualLoop()
		tm := l.Every(time.Second, noopf)
		cp := copyTimer(tm)
		return fmt.Sprint(cp.Active(), cp.Repeat(), cp.HasRef(), tm.Stop())
	}, "true 1s true true"})
}

// copyTimer returns a copy of *t, as c := *t makes one (which go vet
// reports, so the test copies through reflect).
func copyTimer(t *loop.Timer) *loop.Timer {
	c := new(loop.Timer)
	reflect.ValueOf(c).Elem().Set(reflect.ValueOf(t).Elem())
	return c
}

type nilTimerClock struct{ *clock.Virtual }

func (nilTimerClock) AfterFunc(time.Duration, func()) clock.Timer { return nil }

func TestMisuseNilAndStopped(t *testing.T) {
	runMisuses(t, []misuse{
		{"Post nil", func() any { _, l := virtualLoop(); return l.Post(nil) }, "panic: loop: Post called with nil func"},
		{"NewTimer nil", func() any { _, l := virtualLoop(); return l.NewTimer(nil) }, "panic: loop: NewTimer called with nil func"},
		{"AfterFunc nil", func() any { _, l := virtualLoop(); return l.AfterFunc(time.Second, nil) }, "panic: loop: AfterFunc called with nil func"},
		{"Every nil", func() any { _, l := virtualLoop(); return l.Every(time.Second, nil) }, "panic: loop: Every called with nil func"},
		{"WithClock nil", func() any { return loop.WithClock(nil) }, "panic: loop: WithClock: nil clock"},
		// A nil *clock.Virtual used to be accepted, and Now, Run and
		// AfterFunc then died with a nil dereference.
		{"WithClock nil pointer", func() any { return loop.WithClock((*clock.Virtual)(nil)) },
			"panic: loop: WithClock: nil clock (a nil *clock.Virtual)"},
		{"New with a nil Option", func() any {
			return loop.New(loop.WithTick(time.Second), nil)
		}, "panic: loop: New: option 1 is nil"},
		{"a Clock whose AfterFunc returns nil", func() any {
			l := loop.New(loop.WithClock(nilTimerClock{clock.NewVirtual(start)}))
			l.AfterFunc(time.Second, noopf)
			return l.RunOnce()
		}, "panic: loop: the clock's AfterFunc returned a nil Timer (a loop_test.nilTimerClock); a Clock must return one"},
		{"Stop twice", func() any { _, l := virtualLoop(); l.Stop(); l.Stop(); return l.Run() }, "loop: stopped"},
		{"Post after Stop", func() any { _, l := virtualLoop(); l.Stop(); return errors.Is(l.Post(noopf), loop.ErrStopped) }, "true"},
		{"AfterFunc after Stop", func() any {
			_, l := virtualLoop()
			l.Stop()
			return l.AfterFunc(time.Second, noopf).Active()
		}, "false"},
		{"Start after Stop leaves the timer as it was", func() any {
			_, l := virtualLoop()
			tm := l.AfterFunc(time.Hour, noopf)
			l.Stop()
			tm.Start(time.Second, 0)
			return fmt.Sprint(tm.Active(), tm.Stop())
		}, "true true"},
		// Again used to return nil, leaving the timer stopped.
		{"Again after Stop", func() any {
			_, l := virtualLoop()
			tm := l.Every(time.Second, noopf)
			l.Stop()
			err := tm.Again()
			return fmt.Sprint(errors.Is(err, loop.ErrStopped), tm.Active())
		}, "true false"},
		// Timeout used to report the next timer, which no RunOnce waits for.
		{"Timeout after Stop", func() any {
			_, l := virtualLoop()
			l.AfterFunc(time.Second, noopf)
			l.Stop()
			d, ok := l.Timeout()
			return fmt.Sprint(d, ok)
		}, "0s true"},
	})
}

// TestNilLoopAndTimer: every method of a nil *Loop or a nil *Timer
// panics naming itself. They used to die with a nil dereference.
func TestNilLoopAndTimer(t *testing.T) {
	var l *loop.Loop
	var tm *loop.Timer
	runMisuses(t, []misuse{
		{"nil Loop Now", func() any { return l.Now() }, "panic: loop: Now called on a nil *Loop"},
		{"nil Loop Run", func() any { return l.Run() }, "panic: loop: Run called on a nil *Loop"},
		{"nil Loop RunOnce", func() any { return l.RunOnce() }, "panic: loop: RunOnce called on a nil *Loop"},
		{"nil Loop RunNoWait", func() any { return l.RunNoWait() }, "panic: loop: RunNoWait called on a nil *Loop"},
		{"nil Loop Timeout", func() any { d, ok := l.Timeout(); return fmt.Sprint(d, ok) }, "panic: loop: Timeout called on a nil *Loop"},
		{"nil Loop Post", func() any { return l.Post(noopf) }, "panic: loop: Post called on a nil *Loop"},
		{"nil Loop Stop", func() any { l.Stop(); return nil }, "panic: loop: Stop called on a nil *Loop"},
		{"nil Loop Ref", func() any { l.Ref(); return nil }, "panic: loop: Ref called on a nil *Loop"},
		{"nil Loop Unref", func() any { l.Unref(); return nil }, "panic: loop: Unref called on a nil *Loop"},
		{"nil Loop NewTimer", func() any { return l.NewTimer(noopf) }, "panic: loop: NewTimer called on a nil *Loop"},
		{"nil Loop AfterFunc", func() any { return l.AfterFunc(time.Second, noopf) }, "panic: loop: AfterFunc called on a nil *Loop"},
		{"nil Loop Every", func() any { return l.Every(time.Second, noopf) }, "panic: loop: Every called on a nil *Loop"},
		{"nil Loop NewSocket", func() any {
			c1, c2 := net.Pipe()
			defer c1.Close()
			defer c2.Close()
			_, err := l.NewSocket(c1)
			return err
		}, "panic: loop: NewSocket called on a nil *Loop"},
		{"nil Loop NewListener", func() any {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			defer ln.Close()
			_, err = l.NewListener(ln, func(*loop.Socket) {})
			return err
		}, "panic: loop: NewListener called on a nil *Loop"},
		{"nil Timer Start", func() any { tm.Start(time.Second, 0); return nil }, "panic: loop: Timer.Start called on a nil *Timer"},
		{"nil Timer Stop", func() any { return tm.Stop() }, "panic: loop: Timer.Stop called on a nil *Timer"},
		{"nil Timer Again", func() any { return tm.Again() }, "panic: loop: Timer.Again called on a nil *Timer"},
		{"nil Timer SetRepeat", func() any { tm.SetRepeat(time.Second); return nil }, "panic: loop: Timer.SetRepeat called on a nil *Timer"},
		{"nil Timer Repeat", func() any { return tm.Repeat() }, "panic: loop: Timer.Repeat called on a nil *Timer"},
		{"nil Timer Active", func() any { return tm.Active() }, "panic: loop: Timer.Active called on a nil *Timer"},
		{"nil Timer Unref", func() any { tm.Unref(); return nil }, "panic: loop: Timer.Unref called on a nil *Timer"},
		{"nil Timer Ref", func() any { tm.Ref(); return nil }, "panic: loop: Timer.Ref called on a nil *Timer"},
		{"nil Timer HasRef", func() any { return tm.HasRef() }, "panic: loop: Timer.HasRef called on a nil *Timer"},
	})
}

// TestMisuseFromCallbacks: calls into the loop from its own callbacks.
func TestMisuseFromCallbacks(t *testing.T) {
	const running = " called while the loop is running (from one of its own callbacks, or on a second goroutine); one goroutine runs a loop at a time"
	fromPost := func(f func()) func() any {
		return func() any { _, l := virtualLoop(); l.Post(f); return l.RunNoWait() }
	}
	var l *loop.Loop
	runMisuses(t, []misuse{
		{"Run", func() any { _, l = virtualLoop(); l.Post(func() { l.Run() }); return l.RunNoWait() }, "panic: loop: Run" + running},
		{"RunOnce", func() any { _, l = virtualLoop(); l.Post(func() { l.RunOnce() }); return l.RunNoWait() }, "panic: loop: RunOnce" + running},
		{"RunNoWait", func() any { _, l = virtualLoop(); l.Post(func() { l.RunNoWait() }); return l.RunNoWait() }, "panic: loop: RunNoWait" + running},
		{"Stop, then Post", func() any {
			_, l = virtualLoop()
			var err error
			l.Post(func() { l.Stop(); err = l.Post(noopf) })
			return fmt.Sprint(l.RunNoWait(), err, l.Run())
		}, "false loop: stopped loop: stopped"},
		{"Timeout", fromPost(func() { l.Timeout() }), "false"},
		{"own one-shot timer's Stop, Start", func() any {
			clk, l := virtualLoop()
			var tm *loop.Timer
			var got []any
			tm = l.AfterFunc(time.Second, func() {
				got = append(got, tm.Stop(), tm.Active())
				if len(got) < 4 {
					tm.Start(time.Second, 0)
				}
			})
			drive(l, clk, time.Hour)
			return fmt.Sprint(got, clk.Since(start))
		}, "[false false false false] 2s"},
		{"own repeating timer's Stop", func() any {
			clk, l := virtualLoop()
			var tm *loop.Timer
			var got []any
			tm = l.Every(time.Second, func() { got = append(got, tm.Stop(), tm.Active()) })
			drive(l, clk, time.Hour)
			return fmt.Sprint(got, clk.Since(start))
		}, "[true false] 1s"},
		{"own timer's Again, Unref", func() any {
			clk, l := virtualLoop()
			var tm *loop.Timer
			n := 0
			tm = l.NewTimer(func() {
				if n++; n < 3 {
					tm.Again()
				} else {
					tm.Unref()
				}
			})
			tm.Start(time.Second, time.Second)
			drive(l, clk, time.Hour)
			return fmt.Sprint(n, clk.Since(start), tm.Active())
		}, "3 3s true"},
	})
}

func TestMisuseDurations(t *testing.T) {
	// runs starts a timer as start says, moves the clock by d, and
	// returns how many times it ran.
	runs := func(d time.Duration, start func(l *loop.Loop, f func()) *loop.Timer) func() any {
		return func() any {
			clk, l := virtualLoop()
			n := 0
			tm := start(l, func() { n++ })
			tm.Unref()
			l.RunNoWait()
			now := n
			clk.Advance(d)
			l.RunNoWait()
			return fmt.Sprint(now, n)
		}
	}
	after := func(d time.Duration) func(l *loop.Loop, f func()) *loop.Timer {
		return func(l *loop.Loop, f func()) *loop.Timer { return l.AfterFunc(d, f) }
	}
	every := func(d time.Duration) func(l *loop.Loop, f func()) *loop.Timer {
		return func(l *loop.Loop, f func()) *loop.Timer { return l.Every(d, f) }
	}
	startNow := func(repeat time.Duration) func(l *loop.Loop, f func()) *loop.Timer {
		return func(l *loop.Loop, f func()) *loop.Timer { tm := l.NewTimer(f); tm.Start(0, repeat); return tm }
	}
	runMisuses(t, []misuse{
		{"AfterFunc MinInt64 is due now", runs(0, after(math.MinInt64)), "1 1"},
		{"AfterFunc -1ns is due now", runs(0, after(-1)), "1 1"},
		{"AfterFunc 0 is due now", runs(0, after(0)), "1 1"},
		{"AfterFunc 1ns waits for the next tick", runs(time.Millisecond, after(1)), "0 1"},
		{"AfterFunc MaxInt64 saturates", runs(time.Hour, after(math.MaxInt64)), "0 0"},
		{"Every 0", runs(0, every(0)), "panic: loop: Every called with non-positive interval 0s"},
		{"Every -1ns", runs(0, every(-1)), "panic: loop: Every called with non-positive interval -1ns"},
		{"Every MinInt64", runs(0, every(math.MinInt64)), "panic: loop: Every called with non-positive interval -2562047h47m16.854775808s"},
		{"Every 1ns runs once a pass", runs(time.Second, every(1)), "0 1"},
		{"Every MaxInt64 saturates", runs(time.Hour, every(math.MaxInt64)), "0 0"},
		{"Start repeat -1ns", runs(0, startNow(-1)), "panic: loop: Timer.Start called with negative repeat -1ns"},
		{"Start repeat MinInt64", runs(0, startNow(math.MinInt64)), "panic: loop: Timer.Start called with negative repeat -2562047h47m16.854775808s"},
		{"Start repeat 0 runs once", runs(time.Hour, startNow(0)), "1 1"},
		{"Start repeat MaxInt64 runs once", runs(time.Hour, startNow(math.MaxInt64)), "1 1"},
		{"SetRepeat -1ns", func() any { _, l := virtualLoop(); l.NewTimer(noopf).SetRepeat(-1); return nil },
			"panic: loop: Timer.SetRepeat called with negative repeat -1ns"},
		{"SetRepeat 0, Again stops", func() any {
			_, l := virtualLoop()
			tm := l.Every(time.Second, noopf)
			tm.SetRepeat(0)
			return fmt.Sprint(tm.Again(), tm.Active())
		}, "<nil> false"},
		{"WithTick 0", func() any { return loop.WithTick(0) }, "panic: loop: WithTick: non-positive tick 0s"},
		{"WithTick MinInt64", func() any { return loop.WithTick(math.MinInt64) }, "panic: loop: WithTick: non-positive tick -2562047h47m16.854775808s"},
		{"WithTick 1ns", func() any {
			clk := clock.NewVirtual(start)
			l := loop.New(loop.WithClock(clk), loop.WithTick(1))
			l.AfterFunc(time.Second+1, noopf)
			clk.Advance(time.Second)
			d, ok := l.Timeout()
			return fmt.Sprint(d, ok)
		}, "1ns true"},
		{"WithTick MaxInt64 rounds up to the tick", func() any {
			clk := clock.NewVirtual(start)
			l := loop.New(loop.WithClock(clk), loop.WithTick(math.MaxInt64))
			ran := false
			l.AfterFunc(time.Second, func() { ran = true })
			clk.Advance(time.Second)
			alive := l.RunNoWait()
			d, ok := l.Timeout()
			return fmt.Sprint(ran, alive, d, ok)
		}, "false true 2562047h47m15.854775807s true"},
	})
}

// TestMisuseFromOtherGoroutines: a second Run, and the loop goroutine's
// methods called from another goroutine while the loop waits for work.
// The Stop from another goroutine used to return true, a data race on
// the loop's wheel.
func TestMisuseFromOtherGoroutines(t *testing.T) {
	const elsewhere = " called from another goroutine while the loop runs; Post a function that calls it"
	for _, c := range []struct {
		name string
		f    func(l *loop.Loop, tm *loop.Timer) any
		want string
	}{
		{"Run", func(l *loop.Loop, _ *loop.Timer) any { return l.Run() },
			"panic: loop: Run called while the loop is running (from one of its own callbacks, or on a second goroutine); one goroutine runs a loop at a time"},
		{"Timeout", func(l *loop.Loop, _ *loop.Timer) any { d, ok := l.Timeout(); return fmt.Sprint(d, ok) }, "panic: loop: Timeout" + elsewhere},
		{"Timer.Stop", func(_ *loop.Loop, tm *loop.Timer) any { return tm.Stop() }, "panic: loop: Timer.Stop" + elsewhere},
		{"Timer.Start", func(_ *loop.Loop, tm *loop.Timer) any { tm.Start(0, 0); return nil }, "panic: loop: Timer.Start" + elsewhere},
		{"Timer.Again", func(_ *loop.Loop, tm *loop.Timer) any { return tm.Again() }, "panic: loop: Timer.Again" + elsewhere},
		{"Timer.Unref", func(_ *loop.Loop, tm *loop.Timer) any { tm.Unref(); return nil }, "panic: loop: Timer.Unref" + elsewhere},
		{"Timer.Ref", func(_ *loop.Loop, tm *loop.Timer) any { tm.Ref(); return nil }, "panic: loop: Timer.Ref" + elsewhere},
		{"AfterFunc", func(l *loop.Loop, _ *loop.Timer) any { l.AfterFunc(0, noopf); return nil }, "panic: loop: AfterFunc" + elsewhere},
		{"Every", func(l *loop.Loop, _ *loop.Timer) any { l.Every(1, noopf); return nil }, "panic: loop: Every" + elsewhere},
		{"Post, NewTimer, Ref, Unref, Now", func(l *loop.Loop, _ *loop.Timer) any {
			l.Ref()
			l.Unref()
			return fmt.Sprint(l.Post(noopf), l.NewTimer(noopf).Active(), l.Now().IsZero())
		}, "<nil> false false"},
	} {
		// A failure in a bubble ends the test that ran it: one test a case.
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := loop.New()
				tm := l.AfterFunc(time.Hour, noopf)
				done := make(chan error)
				go func() { done <- l.Run() }()
				synctest.Wait() // the loop waits for its timer
				checkMisuse(t, misuse{c.name, func() any { return c.f(l, tm) }, c.want})
				l.Stop()
				if err := <-done; err != loop.ErrStopped {
					t.Errorf("%s: Run = %v, want ErrStopped", c.name, err)
				}
			})
		})
	}
}

// onSocket returns a misuse case's f: it makes a socket on a scriptConn
// of a virtual-clock loop, calls f, and stops the loop, its goroutines
// gone, whatever f did.
func onSocket(f func(l *loop.Loop, s *loop.Socket, c *scriptConn) any) func() any {
	return func() any {
		_, l := virtualLoop()
		c := newScriptConn()
		s, err := l.NewSocket(c)
		if err != nil {
			return err
		}
		defer func() { l.Stop(); l.RunNoWait() }()
		return f(l, s, c)
	}
}

// onListener is onSocket's twin for a Listener on a chanListener.
func onListener(f func(l *loop.Loop, ls *loop.Listener) any) func() any {
	return func() any {
		_, l := virtualLoop()
		ls, err := l.NewListener(newChanListener(), func(*loop.Socket) {})
		if err != nil {
			return err
		}
		defer func() { l.Stop(); l.RunNoWait() }()
		return f(l, ls)
	}
}

// socketMethods calls every method of a Socket once, each by name.
var socketMethods = []struct {
	name string
	f    func(s *loop.Socket) any
}{
	{"OnData", func(s *loop.Socket) any { s.OnData(func([]byte) {}); return nil }},
	{"OnEnd", func(s *loop.Socket) any { s.OnEnd(noopf); return nil }},
	{"OnError", func(s *loop.Socket) any { s.OnError(func(error) {}); return nil }},
	{"OnClose", func(s *loop.Socket) any { s.OnClose(noopf); return nil }},
	{"OnDrain", func(s *loop.Socket) any { s.OnDrain(noopf); return nil }},
	{"Pause", func(s *loop.Socket) any { s.Pause(); return nil }},
	{"Resume", func(s *loop.Socket) any { s.Resume(); return nil }},
	{"Ref", func(s *loop.Socket) any { s.Ref(); return nil }},
	{"Unref", func(s *loop.Socket) any { s.Unref(); return nil }},
	{"Err", func(s *loop.Socket) any { return s.Err() }},
	{"LocalAddr", func(s *loop.Socket) any { return s.LocalAddr() }},
	{"RemoteAddr", func(s *loop.Socket) any { return s.RemoteAddr() }},
	{"Write", func(s *loop.Socket) any { return s.Write([]byte("x")) }},
	{"End", func(s *loop.Socket) any { s.End(); return nil }},
	{"Close", func(s *loop.Socket) any { return s.Close() }},
	{"SetTimeout", func(s *loop.Socket) any { s.SetTimeout(time.Second, noopf); return nil }},
	{"Poll", func(s *loop.Socket) any { return s.Poll(time.Second, func(bool) {}) }},
}

// listenerMethods calls every method of a Listener once, each by name.
var listenerMethods = []struct {
	name string
	f    func(ls *loop.Listener) any
}{
	{"Addr", func(ls *loop.Listener) any { return ls.Addr() }},
	{"OnError", func(ls *loop.Listener) any { ls.OnError(func(error) {}); return nil }},
	{"OnClose", func(ls *loop.Listener) any { ls.OnClose(noopf); return nil }},
	{"Ref", func(ls *loop.Listener) any { ls.Ref(); return nil }},
	{"Unref", func(ls *loop.Listener) any { ls.Unref(); return nil }},
	{"Err", func(ls *loop.Listener) any { return ls.Err() }},
	{"Close", func(ls *loop.Listener) any { return ls.Close() }},
}

// TestZeroSocketAndListener: the zero and nil Socket and Listener have no
// connection and no loop: every method panics, naming itself.
func TestZeroSocketAndListener(t *testing.T) {
	for _, m := range socketMethods {
		const want = " called on a zero or nil Socket; make one with Loop.NewSocket or a Listener"
		runMisuses(t, []misuse{
			{"zero Socket " + m.name, func() any { return m.f(new(loop.Socket)) }, "panic: loop: Socket." + m.name + want},
			{"nil Socket " + m.name, func() any { return m.f(nil) }, "panic: loop: Socket." + m.name + want},
		})
	}
	for _, m := range listenerMethods {
		const want = " called on a zero or nil Listener; make one with Loop.NewListener"
		runMisuses(t, []misuse{
			{"zero Listener " + m.name, func() any { return m.f(new(loop.Listener)) }, "panic: loop: Listener." + m.name + want},
			{"nil Listener " + m.name, func() any { return m.f(nil) }, "panic: loop: Listener." + m.name + want},
		})
	}
}

// TestCopiedSocketAndListener: every method of a copy panics, and the
// original goes on: it still reads, and closes once.
func TestCopiedSocketAndListener(t *testing.T) {
	for _, m := range socketMethods {
		checkMisuse(t, misuse{"copy of a Socket " + m.name, onSocket(func(l *loop.Loop, s *loop.Socket, c *scriptConn) any {
			cp := new(loop.Socket)
			reflect.ValueOf(cp).Elem().Set(reflect.ValueOf(s).Elem())
			got := outcome(func() any { return m.f(cp) })
			var data string
			s.OnData(func(p []byte) { data = string(p) })
			go func() { c.reads <- result{"still reads", nil} }()
			for data == "" {
				l.RunOnce()
			}
			return fmt.Sprint(got, "; then ", data, ", Close ", s.Close(), ", ", c.closes.Load())
		}), "panic: loop: Socket." + m.name + " called on a copy of a Socket; use the *Socket that Loop.NewSocket returned; then still reads, Close <nil>, 1"})
	}
	for _, m := range listenerMethods {
		checkMisuse(t, misuse{"copy of a Listener " + m.name, onListener(func(l *loop.Loop, ls *loop.Listener) any {
			cp := new(loop.Listener)
			reflect.ValueOf(cp).Elem().Set(reflect.ValueOf(ls).Elem())
			got := outcome(func() any { return m.f(cp) })
			return fmt.Sprint(got, "; then Close ", ls.Close())
		}), "panic: loop: Listener." + m.name + " called on a copy of a Listener; use the *Listener that Loop.NewListener returned; then Close <nil>"})
	}
}

func TestMisuseSockets(t *testing.T) {
	anyConn := func() net.Conn { return newScriptConn() }
	runMisuses(t, []misuse{
		{"NewSocket nil", func() any { _, l := virtualLoop(); return fmt.Sprint(l.NewSocket(nil)) },
			"panic: loop: NewSocket called with nil net.Conn"},
		{"NewSocket nil *net.TCPConn", func() any { _, l := virtualLoop(); return fmt.Sprint(l.NewSocket((*net.TCPConn)(nil))) },
			"panic: loop: NewSocket called with nil net.Conn (a nil *net.TCPConn)"},
		{"NewListener nil", func() any { _, l := virtualLoop(); return fmt.Sprint(l.NewListener(nil, func(*loop.Socket) {})) },
			"panic: loop: NewListener called with nil net.Listener"},
		{"NewListener nil *net.TCPListener", func() any {
			_, l := virtualLoop()
			return fmt.Sprint(l.NewListener((*net.TCPListener)(nil), func(*loop.Socket) {}))
		}, "panic: loop: NewListener called with nil net.Listener (a nil *net.TCPListener)"},
		{"NewListener nil func", func() any { _, l := virtualLoop(); return fmt.Sprint(l.NewListener(newChanListener(), nil)) },
			"panic: loop: NewListener called with nil func"},
		{"NewSocket on a stopped loop leaves the conn open", func() any {
			_, l := virtualLoop()
			l.Stop()
			c := newScriptConn()
			s, err := l.NewSocket(c)
			return fmt.Sprint(s, " ", err, ", closes ", c.closes.Load())
		}, "<nil> loop: stopped, closes 0"},
		{"NewListener on a stopped loop leaves it open", func() any {
			_, l := virtualLoop()
			l.Stop()
			ln := newChanListener()
			ls, err := l.NewListener(ln, func(*loop.Socket) {})
			return fmt.Sprint(ls, " ", err, ", closed ", ln.Close() == nil)
		}, "<nil> loop: stopped, closed true"},
		{"the zero Loop's NewSocket", func() any {
			var l loop.Loop
			s, err := l.NewSocket(anyConn())
			defer func() { l.Stop(); l.RunNoWait() }()
			return fmt.Sprint(err, " ", s.Err())
		}, "<nil> <nil>"},
		{"SetTimeout negative", onSocket(func(l *loop.Loop, s *loop.Socket, c *scriptConn) any { s.SetTimeout(-1, noopf); return nil }),
			"panic: loop: Socket.SetTimeout called with negative timeout -1ns"},
		{"SetTimeout MinInt64", onSocket(func(l *loop.Loop, s *loop.Socket, c *scriptConn) any { s.SetTimeout(math.MinInt64, noopf); return nil }),
			"panic: loop: Socket.SetTimeout called with negative timeout -2562047h47m16.854775808s"},
		{"SetTimeout nil func", onSocket(func(l *loop.Loop, s *loop.Socket, c *scriptConn) any { s.SetTimeout(time.Second, nil); return nil }),
			"panic: loop: Socket.SetTimeout called with nil func and timeout 1s"},
		{"SetTimeout 0 with nil func disables it", onSocket(func(l *loop.Loop, s *loop.Socket, c *scriptConn) any {
			s.SetTimeout(0, nil)
			d, ok := l.Timeout()
			return fmt.Sprint(d, ok)
		}), "0s false"},
		{"SetTimeout MaxInt64 saturates", onSocket(func(l *loop.Loop, s *loop.Socket, c *scriptConn) any {
			ran := false
			s.SetTimeout(math.MaxInt64, func() { ran = true })
			l.RunNoWait()
			return ran
		}), "false"},
		{"SetTimeout 1ns waits for the next tick", func() any {
			clk, l := virtualLoop()
			s, _ := l.NewSocket(anyConn())
			defer func() { l.Stop(); l.RunNoWait() }()
			var at []time.Duration
			s.SetTimeout(1, func() { at = append(at, clk.Since(start)) })
			drive(l, clk, time.Second)
			return fmt.Sprint(at)
		}, "[1ms]"},
		{"Poll nil func", onSocket(func(l *loop.Loop, s *loop.Socket, c *scriptConn) any { return s.Poll(time.Second, nil) }),
			"panic: loop: Socket.Poll called with nil func"},
		{"Poll twice", onSocket(func(l *loop.Loop, s *loop.Socket, c *scriptConn) any {
			s.Poll(time.Second, func(bool) {})
			return s.Poll(time.Second, func(bool) {})
		}), "panic: loop: Socket.Poll called while a Poll of the socket is pending"},
		{"Poll negative is due now", func() any {
			clk, l := virtualLoop()
			s, _ := l.NewSocket(anyConn())
			defer func() { l.Stop(); l.RunNoWait() }()
			var got []string
			s.Poll(math.MinInt64, func(r bool) { got = append(got, fmt.Sprint(clk.Since(start), " ", r)) })
			l.RunNoWait()
			return fmt.Sprint(got)
		}, "[0s false]"},
		{"Poll on a closed socket", onSocket(func(l *loop.Loop, s *loop.Socket, c *scriptConn) any {
			s.Close()
			err := s.Poll(time.Second, func(bool) { panic("ran") })
			return fmt.Sprint(err, errors.Is(err, net.ErrClosed))
		}), "loop: Socket.Poll: use of closed network connection true"},
		{"Close twice", onSocket(func(l *loop.Loop, s *loop.Socket, c *scriptConn) any {
			s.Close()
			err := s.Close()
			return fmt.Sprint(err, errors.Is(err, net.ErrClosed), c.closes.Load())
		}), "loop: Socket.Close: use of closed network connection true 1"},
		{"Listener Close twice", onListener(func(l *loop.Loop, ls *loop.Listener) any {
			ls.Close()
			err := ls.Close()
			return fmt.Sprint(err, errors.Is(err, net.ErrClosed))
		}), "loop: Listener.Close: use of closed network connection true"},
		{"Write, End, SetTimeout, Resume, Ref on a closed socket", onSocket(func(l *loop.Loop, s *loop.Socket, c *scriptConn) any {
			s.Close()
			w := s.Write([]byte("x"))
			s.End()
			s.SetTimeout(time.Second, noopf)
			s.Pause()
			s.Resume()
			s.Unref()
			s.Ref()
			err := l.Run() // until OnClose has run
			d, ok := l.Timeout()
			return fmt.Sprint(w, " ", c.got() == "", " ", err, " ", d, ok, " ", s.Err())
		}), "false true <nil> 0s false use of closed network connection"},
		{"Write after Stop", onSocket(func(l *loop.Loop, s *loop.Socket, c *scriptConn) any {
			l.Stop()
			return fmt.Sprint(s.Write([]byte("x")), c.closes.Load())
		}), "false 1"},
		{"Write of nothing", onSocket(func(l *loop.Loop, s *loop.Socket, c *scriptConn) any { return s.Write(nil) }), "true"},
		{"a nil OnData drops the data, which is still activity", func() any {
			clk, l := virtualLoop()
			c := newScriptConn()
			s, _ := l.NewSocket(c)
			defer func() { l.Stop(); l.RunNoWait() }()
			var at []time.Duration
			s.SetTimeout(time.Second, func() { at = append(at, clk.Since(start)); s.Close() })
			s.OnData(nil)
			clk.Advance(500 * time.Millisecond)
			go func() { c.reads <- result{"dropped", nil} }()
			l.RunOnce()
			drive(l, clk, time.Hour)
			return fmt.Sprint(at)
		}, "[1.5s]"},
		{"Close from OnClose, Write, Poll", func() any {
			_, l := virtualLoop()
			s, _ := l.NewSocket(anyConn())
			var got string
			s.OnClose(func() {
				got = fmt.Sprint(s.Close(), " ", s.Write([]byte("x")), " ", s.Poll(0, func(bool) {}))
			})
			s.Close()
			return fmt.Sprint(l.Run(), " ", got)
		}, "<nil> loop: Socket.Close: use of closed network connection false loop: Socket.Poll: use of closed network connection"},
		{"Stop from OnData: nothing more runs", func() any {
			_, l := virtualLoop()
			c := newScriptConn()
			s, _ := l.NewSocket(c)
			var got []string
			s.OnData(func(p []byte) { got = append(got, string(p)); l.Stop(); s.Write([]byte("x")) })
			s.OnClose(func() { got = append(got, "close") })
			go func() { c.reads <- result{"a", errBoom} }()
			return fmt.Sprint(l.Run(), " ", got, " ", c.got() == "", " ", c.closes.Load())
		}, "loop: stopped [a] true 1"},
	})
}

// TestSocketMisuseFromOtherGoroutines: NewSocket, NewListener and the
// methods of sockets and listeners called from another goroutine while
// the loop waits for work panic, and the loop goes on.
func TestSocketMisuseFromOtherGoroutines(t *testing.T) {
	const elsewhere = " called from another goroutine while the loop runs; Post a function that calls it"
	cases := []misuse{
		{"NewSocket", nil, "panic: loop: NewSocket" + elsewhere},
		{"NewListener", nil, "panic: loop: NewListener" + elsewhere},
	}
	for _, m := range socketMethods {
		want := "panic: loop: Socket." + m.name + elsewhere
		if m.name == "LocalAddr" || m.name == "RemoteAddr" {
			want = map[string]string{"LocalAddr": "local", "RemoteAddr": "remote"}[m.name] // safe for concurrent use
		}
		cases = append(cases, misuse{"Socket." + m.name, nil, want})
	}
	for _, m := range listenerMethods {
		want := "panic: loop: Listener." + m.name + elsewhere
		if m.name == "Addr" {
			want = "listener" // safe for concurrent use
		}
		cases = append(cases, misuse{"Listener." + m.name, nil, want})
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := loop.New()
				s, _ := l.NewSocket(newScriptConn())
				ls, _ := l.NewListener(newChanListener(), func(*loop.Socket) {})
				done := running(l, nil)
				synctest.Wait() // the loop waits for work
				c.f = func() any {
					switch {
					case i == 0:
						return fmt.Sprint(l.NewSocket(newScriptConn()))
					case i == 1:
						return fmt.Sprint(l.NewListener(newChanListener(), func(*loop.Socket) {}))
					case i < 2+len(socketMethods):
						return m(socketMethods[i-2].f(s))
					default:
						return m(listenerMethods[i-2-len(socketMethods)].f(ls))
					}
				}
				checkMisuse(t, c)
				l.Stop()
				if err := <-done; err != loop.ErrStopped {
					t.Errorf("%s: Run = %v, want ErrStopped", c.name, err)
				}
			})
		})
	}
}

// m prints an address, or passes anything else on.
func m(v any) any {
	if a, ok := v.(net.Addr); ok {
		return a.String()
	}
	return v
}
