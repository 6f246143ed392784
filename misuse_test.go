package timewheel_test

import (
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/internal/misusetest"
)

// panics runs f and returns the message it panicked with, or "" if it
// returned.
func panics(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmtPanic(r)
		}
	}()
	f()
	return ""
}

func fmtPanic(r any) string {
	switch v := r.(type) {
	case string:
		return v
	case error:
		return "error: " + v.Error()
	default:
		return "non-string panic"
	}
}

// TestZeroAndNilWheel: every method of a zero Wheel and of a nil *Wheel
// panics naming the method, where it used to die inside ("integer divide
// by zero", "close of nil channel").
func TestZeroAndNilWheel(t *testing.T) {
	methods := []struct {
		name string
		call func(w *timewheel.Wheel)
	}{
		{"AfterFunc", func(w *timewheel.Wheel) { w.AfterFunc(time.Second, func() {}) }},
		{"NewTimer", func(w *timewheel.Wheel) { w.NewTimer(time.Second) }},
		{"After", func(w *timewheel.Wheel) { w.After(time.Second) }},
		{"NewTicker", func(w *timewheel.Wheel) { w.NewTicker(time.Second) }},
		{"NewTicker", func(w *timewheel.Wheel) { w.Tick(time.Second) }},
		{"Tick", func(w *timewheel.Wheel) { w.Tick(0) }},
		{"Sleep", func(w *timewheel.Wheel) { w.Sleep(time.Second) }},
		{"Sleep", func(w *timewheel.Wheel) { w.Sleep(0) }},
		{"Now", func(w *timewheel.Wheel) { w.Now() }},
		{"Since", func(w *timewheel.Wheel) { w.Since(time.Time{}) }},
		{"Err", func(w *timewheel.Wheel) { w.Err() }},
		{"Resolution", func(w *timewheel.Wheel) { w.Resolution() }},
		{"Len", func(w *timewheel.Wheel) { w.Len() }},
		{"Discarded", func(w *timewheel.Wheel) { w.Discarded() }},
		{"Stats", func(w *timewheel.Wheel) { w.Stats() }},
		{"Close", func(w *timewheel.Wheel) { w.Close() }},
	}
	var cases []misusetest.Case
	for _, m := range methods {
		cases = append(cases,
			misusetest.Case{Name: "zero/" + m.name, Panic: "timewheel: " + m.name + " called on a zero Wheel; make one with New",
				Do: func(*testing.T) { m.call(new(timewheel.Wheel)) }},
			misusetest.Case{Name: "nil/" + m.name, Panic: "timewheel: " + m.name + " called on a nil *Wheel",
				Do: func(*testing.T) { m.call(nil) }})
	}
	misusetest.Run(t, cases)
}

// TestBadArguments: nil and out-of-range arguments panic naming the
// function and repeating the value.
func TestBadArguments(t *testing.T) {
	w := timewheel.New()
	defer w.Close()
	misusetest.Run(t, []misusetest.Case{
		{Name: "AfterFunc nil func", Panic: "timewheel: AfterFunc: nil func", Do: func(*testing.T) { w.AfterFunc(time.Second, nil) }},
		{Name: "NewTicker zero", Panic: "timewheel: NewTicker: non-positive interval 0s", Do: func(*testing.T) { w.NewTicker(0) }},
		{Name: "NewTicker negative", Panic: "timewheel: NewTicker: non-positive interval -5ms", Do: func(*testing.T) { w.NewTicker(-5 * time.Millisecond) }},
		{Name: "Ticker.Reset negative", Panic: "timewheel: Ticker.Reset: non-positive interval -1ns", Do: func(*testing.T) {
			tk := w.NewTicker(time.Second)
			defer tk.Stop()
			tk.Reset(-1)
		}},
		{Name: "WithTick zero", Panic: "timewheel: WithTick: non-positive tick 0s", Do: func(*testing.T) { timewheel.WithTick(0) }},
		{Name: "WithClock nil", Panic: "timewheel: WithClock: nil clock", Do: func(*testing.T) { timewheel.WithClock(nil) }},
		{Name: "WithClock nil pointer", Panic: "timewheel: WithClock: nil clock", Do: func(*testing.T) { timewheel.WithClock((*clock.Virtual)(nil)) }},
		{Name: "WithExecutor nil", Panic: "timewheel: WithExecutor: nil executor", Do: func(*testing.T) { timewheel.WithExecutor(nil) }},
		{Name: "WithExecutor nil *Pool", Panic: "timewheel: WithExecutor: nil executor", Do: func(*testing.T) { timewheel.WithExecutor((*timewheel.Pool)(nil)) }},
		{Name: "WithWorkers zero", Panic: "timewheel: WithWorkers: fewer than one worker: 0", Do: func(*testing.T) { timewheel.WithWorkers(0) }},
		{Name: "WithShards zero", Panic: "timewheel: WithShards: fewer than one shard: 0", Do: func(*testing.T) { timewheel.WithShards(0) }},
		{Name: "WithShards huge", Panic: "timewheel: WithShards: more than 65536 shards: 2147483647", Do: func(*testing.T) { timewheel.WithShards(math.MaxInt32) }},
		{Name: "WithPanicHandler nil", Panic: "timewheel: WithPanicHandler: nil handler", Do: func(*testing.T) { timewheel.WithPanicHandler(nil) }},
		{Name: "New nil option", Panic: "timewheel: New: option 1 is nil", Do: func(*testing.T) { timewheel.New(timewheel.WithTick(time.Second), nil) }},
		{Name: "Pool.Execute nil func", Panic: "timewheel: Pool.Execute: nil func", Do: func(*testing.T) { new(timewheel.Pool).Execute(nil) }},
		{Name: "nil *Pool Execute", Panic: "timewheel: Execute called on a nil *Pool", Do: func(*testing.T) { (*timewheel.Pool)(nil).Execute(func() {}) }},
		{Name: "nil *Pool Wait", Panic: "timewheel: Wait called on a nil *Pool", Do: func(*testing.T) { (*timewheel.Pool)(nil).Wait() }},
		{Name: "nil *Pool Stats", Panic: "timewheel: Stats called on a nil *Pool", Do: func(*testing.T) { (*timewheel.Pool)(nil).Stats() }},
		{Name: "Clock whose AfterFunc returns nil", Panic: "timewheel: New: the Clock's AfterFunc returned a nil Timer (timewheel_test.nilTimerClock)", Do: func(*testing.T) {
			timewheel.New(timewheel.WithClock(nilTimerClock{clock.NewVirtual(time.Unix(0, 0))}))
		}},
	})
}

// nilTimerClock is a broken Clock: its AfterFunc returns nil, which used
// to leave every timer of a wheel on it pending for ever, in silence.
type nilTimerClock struct{ *clock.Virtual }

func (nilTimerClock) AfterFunc(time.Duration, func()) clock.Timer { return nil }

// TestExtremeDurations: any time.Duration is a valid timeout; zero and
// negative mean now, and the end of time saturates instead of wrapping.
func TestExtremeDurations(t *testing.T) {
	w, clk := newVirtual(t)
	var fired []string
	for _, d := range []time.Duration{math.MinInt64, -1, 0, 1, math.MaxInt64} {
		w.AfterFunc(d, func() { fired = append(fired, d.String()) })
	}
	tk := w.NewTicker(1) // shorter than the tick: once per tick
	defer tk.Stop()
	far := w.NewTimer(math.MaxInt64)
	clk.Advance(time.Millisecond)
	if got := strings.Join(fired, " "); got != "-2562047h47m16.854775808s -1ns 0s 1ns" {
		t.Fatalf("fired %q after 1ms; want the four due by then in start order", got)
	}
	if !far.Stop() {
		t.Fatal("a timer due at the end of time was not pending")
	}
	if w.Len() != 2 { // the ticker and the MaxInt64 AfterFunc
		t.Fatalf("Len %d; want 2", w.Len())
	}
	// A wheel with the coarsest tick still never fires early.
	w2, clk2 := newVirtual(t, timewheel.WithTick(math.MaxInt64))
	ran := false
	w2.AfterFunc(time.Hour, func() { ran = true })
	clk2.Advance(1000 * time.Hour)
	if ran {
		t.Fatal("a timer fired before its tick, math.MaxInt64 ns after the epoch")
	}
}

// TestZeroTimerAndTicker: package time's zero values, matched.
func TestZeroTimerAndTicker(t *testing.T) {
	c := make(chan time.Time)
	misusetest.Run(t, []misusetest.Case{
		{Name: "zero Timer Stop", Panic: "timewheel: Stop called on uninitialized Timer", Do: func(*testing.T) { new(timewheel.Timer).Stop() }},
		{Name: "zero Timer Reset", Panic: "timewheel: Reset called on uninitialized Timer", Do: func(*testing.T) { new(timewheel.Timer).Reset(time.Second) }},
		{Name: "Timer with only C Stop", Panic: "timewheel: Stop called on uninitialized Timer", Do: func(*testing.T) { (&timewheel.Timer{C: c}).Stop() }},
		{Name: "zero Ticker Stop does nothing", Panic: "", Do: func(*testing.T) { new(timewheel.Ticker).Stop() }},
		{Name: "fake Ticker Stop does nothing", Panic: "", Do: func(*testing.T) { (&timewheel.Ticker{C: c}).Stop() }},
		{Name: "zero Ticker Reset", Panic: "timewheel: Reset called on uninitialized Ticker", Do: func(*testing.T) { new(timewheel.Ticker).Reset(time.Second) }},
	})
	// The same calls on package time, for the record: the same outcomes.
	if got := panics(func() { new(time.Timer).Stop() }); got != "time: Stop called on uninitialized Timer" {
		t.Errorf("package time's zero Timer Stop: %q", got)
	}
	if got := panics(func() { new(time.Ticker).Stop() }); got != "" {
		t.Errorf("package time's zero Ticker Stop: %q", got)
	}
}

// copyOf returns a copy of *t made where the caller cannot see it, as a
// user's c := *t would (go vet reports that line; this one it cannot).
func copyOf[T any](t *T) *T {
	c := new(T)
	*c = *t
	return c
}

// TestCopiedTimers: a copy of a Timer or Ticker is refused with a panic
// naming the mistake, never a crash or a wrong count, and the original
// goes on working. A copy used to be read as a larger struct than it is
// (a channel Timer: SIGSEGV), or to unlink the original (an AfterFunc
// Timer: Stop true twice and Len 0 with a timer pending).
func TestCopiedTimers(t *testing.T) {
	w, clk := newVirtual(t)
	other := w.AfterFunc(time.Hour, func() {}) // a neighbour in the same slot
	defer other.Stop()
	misusetest.Run(t, []misusetest.Case{
		{Name: "channel Timer Stop", Panic: "timewheel: Stop called on a copy of a Timer; call it on the *Timer NewTimer returned", Do: func(t *testing.T) {
			tm := w.NewTimer(time.Hour)
			defer func() {
				if !tm.Stop() {
					t.Error("the original did not stop after its copy was refused")
				}
			}()
			copyOf(tm).Stop()
		}},
		{Name: "channel Timer Reset", Panic: "timewheel: Reset called on a copy of a Timer; call it on the *Timer NewTimer returned", Do: func(*testing.T) {
			tm := w.NewTimer(time.Hour)
			defer tm.Stop()
			copyOf(tm).Reset(time.Second)
		}},
		{Name: "pending AfterFunc Timer Stop", Panic: "timewheel: Stop called on a copy of a Timer; call it on the *Timer AfterFunc returned", Do: func(t *testing.T) {
			tm := w.AfterFunc(time.Hour, func() {})
			defer func() {
				if n := w.Len(); n != 2 {
					t.Errorf("Len %d after the copy's Stop was refused; want 2", n)
				}
				if !tm.Stop() {
					t.Error("the original did not stop after its copy was refused")
				}
			}()
			copyOf(tm).Stop()
		}},
		{Name: "pending AfterFunc Timer Reset earlier", Panic: "timewheel: Reset called on a copy of a Timer; call it on the *Timer AfterFunc returned", Do: func(*testing.T) {
			tm := w.AfterFunc(time.Hour, func() {})
			defer tm.Stop()
			copyOf(tm).Reset(time.Second)
		}},
		{Name: "fired AfterFunc Timer Stop is false", Panic: "", Do: func(t *testing.T) {
			tm := w.AfterFunc(time.Millisecond, func() {})
			clk.Advance(time.Millisecond)
			if copyOf(tm).Stop() {
				t.Error("Stop of a copy of a fired timer returned true")
			}
		}},
		{Name: "Ticker Stop", Panic: "timewheel: Stop called on a copy of a Ticker; call it on the *Ticker NewTicker returned", Do: func(t *testing.T) {
			tk := w.NewTicker(time.Second)
			defer tk.Stop()
			copyOf(tk).Stop()
		}},
		{Name: "Ticker Reset", Panic: "timewheel: Reset called on a copy of a Ticker; call it on the *Ticker NewTicker returned", Do: func(t *testing.T) {
			tk := w.NewTicker(time.Second)
			defer tk.Stop()
			copyOf(tk).Reset(time.Second)
		}},
	})
	if n := w.Len(); n != 1 {
		t.Fatalf("Len %d at the end; want 1, the neighbour", n)
	}
	st := w.Stats()
	if st.Started-st.Stopped-st.Fired != 1 {
		t.Fatalf("Stats started %d stopped %d fired %d: the books do not leave the one pending", st.Started, st.Stopped, st.Fired)
	}
}

// TestHandSetC: Go's own tests make a channel timer as AfterFunc(d, f)
// with C set by hand, and NewTimer's C can be overwritten: no field a
// user can set steers the library. The AfterFunc timer stays one (its
// Stop and Reset say whether the func was pending and leave the user's
// channel alone); the channel timer still sends on, and takes back from,
// the channel NewTimer made.
func TestHandSetC(t *testing.T) {
	w, clk := newVirtual(t)
	c := make(chan time.Time, 1)
	tm := w.AfterFunc(time.Second, func() { c <- clk.Now() })
	tm.C = c
	if !tm.Reset(2 * time.Second) {
		t.Fatal("Reset of a pending AfterFunc timer with C set returned false")
	}
	clk.Advance(2 * time.Second)
	if len(c) != 1 {
		t.Fatal("the callback did not send on the hand-set C")
	}
	if tm.Stop() {
		t.Fatal("Stop after the func ran returned true")
	}
	if len(c) != 1 {
		t.Fatal("Stop drained a channel the library did not make")
	}

	nt := w.NewTimer(time.Second)
	made := nt.C
	nt.C = make(chan time.Time, 1)
	clk.Advance(time.Second)
	if !nt.Stop() { // takes back the unreceived value from the channel it made
		t.Fatal("Stop of a fired, unreceived timer with C replaced returned false")
	}
	if len(made) != 0 {
		t.Fatal("Stop left the value on the channel NewTimer made")
	}
}

// TestDefaultWheelCannotBeClosed: one package's Close must not kill every
// timer of the process; the default wheel refuses and goes on.
func TestDefaultWheelCannotBeClosed(t *testing.T) {
	if err := timewheel.Default().Close(); !errors.Is(err, timewheel.ErrDefaultWheel) {
		t.Fatalf("Default().Close() = %v; want ErrDefaultWheel", err)
	}
	if err := timewheel.Default().Err(); err != nil {
		t.Fatalf("the default wheel reports %v after a refused Close", err)
	}
	tm := timewheel.AfterFunc(time.Hour, func() {})
	if !tm.Stop() {
		t.Fatal("a timer on the default wheel was not pending after a refused Close")
	}
}

// TestCloseTwiceAndAfterClose: the second Close says so; a closed wheel
// refuses new timers without blocking.
func TestCloseTwiceAndAfterClose(t *testing.T) {
	w := timewheel.New()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); !errors.Is(err, timewheel.ErrClosed) {
		t.Fatalf("second Close = %v; want ErrClosed", err)
	}
	if tm := w.AfterFunc(0, func() { t.Error("fired on a closed wheel") }); tm.Stop() || tm.Reset(time.Second) {
		t.Fatal("a timer made on a closed wheel was pending")
	}
	if tm := w.NewTimer(time.Second); tm.Stop() || tm.Reset(time.Second) {
		t.Fatal("a channel timer made on a closed wheel was pending")
	}
	tk := w.NewTicker(time.Second)
	tk.Reset(time.Second)
	tk.Stop()
	w.Sleep(time.Hour) // returns at once
	if w.Len() != 0 {
		t.Fatalf("Len %d on a closed wheel", w.Len())
	}
}

// TestCloseFromCallback: Close called from a callback of its own wheel
// closes it and returns, with the pool and with an inline executor,
// instead of waiting for itself. In a synctest bubble a hang is a
// deadlock, which fails the test instead of hanging it.
func TestCloseFromCallback(t *testing.T) {
	for _, ex := range []struct {
		name string
		opts []timewheel.Option
	}{
		{"pool", nil},
		{"inline", []timewheel.Option{timewheel.WithExecutor(timewheel.Inline())}},
	} {
		t.Run(ex.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := timewheel.New(ex.opts...)
				var later atomic.Bool
				w.AfterFunc(2*time.Second, func() { later.Store(true) })
				errc := make(chan error, 1)
				w.AfterFunc(time.Second, func() { errc <- w.Close() })
				if err := <-errc; err != nil {
					t.Fatalf("Close from a callback: %v", err)
				}
				time.Sleep(time.Hour)
				synctest.Wait()
				if later.Load() {
					t.Fatal("a timer fired after Close")
				}
				if err := w.Close(); !errors.Is(err, timewheel.ErrClosed) {
					t.Fatalf("Close after Close from a callback = %v", err)
				}
			})
		})
	}
}

// TestPoolWaitFromCallback: a callback that waits for its own pool would
// wait forever; it panics instead, and the panic reaches the wheel's
// panic handler.
func TestPoolWaitFromCallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := timewheel.NewPool(2)
		got := make(chan any, 1)
		w := timewheel.New(timewheel.WithExecutor(p))
		defer w.Close()
		w.AfterFunc(time.Second, func() {
			defer func() { got <- recover() }()
			p.Wait()
		})
		if r := <-got; r != "timewheel: Pool.Wait called from a timer callback, which it could wait for forever" {
			t.Fatalf("recovered %v", r)
		}
		p.Wait()
	})
}

// TestZeroPool: a zero Pool runs what it is given, as a zero value
// should, where it used to queue work and never run it.
func TestZeroPool(t *testing.T) {
	var p timewheel.Pool
	done := make(chan struct{})
	p.Execute(func() { close(done) })
	<-done
	p.Wait()
	if st := p.Stats(); st.Limit != timewheel.DefaultWorkers() || st.Submitted != 1 {
		t.Fatalf("zero Pool stats %+v", st)
	}
}
