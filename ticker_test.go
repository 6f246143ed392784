package timewheel_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel"
)

// tickCounter receives from c until stop is closed, counting the ticks
// and checking each against the exact grid: the k-th tick at or after
// start + k*period.
type tickCounter struct {
	n     atomic.Int64
	early atomic.Value // string: the first early tick, if any
}

func (tc *tickCounter) run(c <-chan time.Time, stop <-chan struct{}, start time.Time, period time.Duration) {
	for {
		select {
		case v := <-c:
			k := tc.n.Add(1)
			if due := start.Add(time.Duration(k) * period); time.Now().Before(due) || v.Before(due) {
				tc.early.CompareAndSwap(nil, fmt.Sprintf("tick %d at %v, before its grid point %v", k, time.Since(start), due.Sub(start)))
			}
		case <-stop:
			return
		}
	}
}

// TestTickerRateMatchesPackageTime runs a wheel's Ticker and package
// time's side by side in a synctest bubble, for periods that are and are
// not whole numbers of ticks, over a simulated second and after a Reset:
// the wheel's never sends more ticks than package time's, nor (for a
// period of a tick or more) more than one fewer, and never a tick before
// its exact grid point. With a period shorter than the tick, it sends one
// tick per wheel tick.
func TestTickerRateMatchesPackageTime(t *testing.T) {
	for _, tick := range []time.Duration{time.Millisecond, 10 * time.Millisecond} {
		for _, period := range []time.Duration{1500 * time.Microsecond, 10250 * time.Microsecond, 7 * time.Millisecond, 999 * time.Microsecond} {
			t.Run(fmt.Sprintf("tick=%v/period=%v", tick, period), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					checkTickerRate(t, tick, period)
				})
			})
		}
	}
}

func checkTickerRate(t *testing.T, tick, period time.Duration) {
	w := timewheel.New(timewheel.WithTick(tick))
	defer w.Close()
	for round := range 2 {
		stop := make(chan struct{})
		var ours, theirs tickCounter
		start := time.Now()
		var tk *timewheel.Ticker
		if round == 0 {
			tk = w.NewTicker(period)
		} else {
			// A Reset starts a new grid at the call.
			tk = w.NewTicker(3 * period)
			time.Sleep(period / 2)
			start = time.Now()
			tk.Reset(period)
		}
		ref := time.NewTicker(period)
		go ours.run(tk.C, stop, start, period)
		go theirs.run(ref.C, stop, start, period)
		const span = time.Second
		for elapsed := time.Duration(0); elapsed < span; elapsed += 250 * time.Microsecond {
			time.Sleep(250 * time.Microsecond)
			synctest.Wait()
			a, b := ours.n.Load(), theirs.n.Load()
			if a > b {
				t.Fatalf("round %d at %v: %d ticks, package time %d: ahead", round, time.Since(start), a, b)
			}
			switch {
			case period >= tick && b-a > 1:
				t.Fatalf("round %d at %v: %d ticks, package time %d: more than one behind", round, time.Since(start), a, b)
			case period < tick && a < int64(time.Since(start)/tick)-1:
				t.Fatalf("round %d at %v: %d ticks, fewer than one per tick", round, time.Since(start), a)
			}
		}
		if e := ours.early.Load(); e != nil {
			t.Fatalf("round %d: %s", round, e)
		}
		t.Logf("round %d: %d ticks in %v, package time %d", round, ours.n.Load(), span, theirs.n.Load())
		tk.Stop()
		ref.Stop()
		close(stop)
	}
}

// TestTickerSkipsWhenReceiverFallsBehind: a receiver that does not
// receive for a while gets one tick waiting, not a backlog, and the next
// tick is back on the grid.
func TestTickerSkipsWhenReceiverFallsBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := timewheel.New()
		defer w.Close()
		start := time.Now()
		tk := w.NewTicker(10 * time.Millisecond)
		defer tk.Stop()
		time.Sleep(105 * time.Millisecond)
		<-tk.C
		select {
		case v := <-tk.C:
			t.Fatalf("a second tick was queued, sent at %v", v.Sub(start))
		default:
		}
		v := <-tk.C
		if got := v.Sub(start); got != 110*time.Millisecond {
			t.Fatalf("the next tick came at %v, want 110ms (the grid)", got)
		}
	})
}

// TestHandBuiltTicker: Stop on a Ticker not made by NewTicker returns
// quietly and Reset panics, as package time's; a zero Timer's Stop and
// Reset panic, naming the package.
func TestHandBuiltTicker(t *testing.T) {
	(&time.Ticker{C: make(chan time.Time)}).Stop() // package time's behaviour, for reference
	(&timewheel.Ticker{C: make(chan time.Time)}).Stop()
	for name, f := range map[string]func(){
		"Ticker.Reset": func() { (&timewheel.Ticker{C: make(chan time.Time)}).Reset(time.Second) },
		"Timer.Stop":   func() { new(timewheel.Timer).Stop() },
		"Timer.Reset":  func() { new(timewheel.Timer).Reset(time.Second) },
	} {
		msg := func() (msg string) {
			defer func() { msg = fmt.Sprint(recover()) }()
			f()
			return ""
		}()
		if !strings.HasPrefix(msg, "timewheel: ") || !strings.Contains(msg, "uninitialized") {
			t.Errorf("%s: panic %q, want one naming the package and the uninitialized value", name, msg)
		}
	}
}

// TestTick: Tick sends on the grid and returns nil for d ≤ 0, as package
// time's does.
func TestTick(t *testing.T) {
	if timewheel.Tick(0) != nil || timewheel.Tick(-time.Second) != nil {
		t.Fatal("Tick(d ≤ 0) is not nil")
	}
	synctest.Test(t, func(t *testing.T) {
		w := timewheel.New()
		defer w.Close()
		start := time.Now()
		c := w.Tick(time.Second)
		for k := 1; k <= 3; k++ {
			if v := <-c; v.Sub(start) != time.Duration(k)*time.Second {
				t.Fatalf("tick %d at %v", k, v.Sub(start))
			}
		}
	})
}
