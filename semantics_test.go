package timewheel_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel"
)

// chanTimer is what the Stop/Reset scenarios need of a channel timer, so
// that each runs on package time and on timewheel side by side.
type chanTimer interface {
	Stop() bool
	Reset(time.Duration) bool
	C() <-chan time.Time
}

type stdTimer struct{ *time.Timer }

func (t stdTimer) C() <-chan time.Time { return t.Timer.C }

type wheelTimer struct{ *timewheel.Timer }

func (t wheelTimer) C() <-chan time.Time { return t.Timer.C }

// received reports whether a value is waiting on c, taking it.
func received(c <-chan time.Time) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// scenarios drive a timer through Stop and Reset and record what each call
// returned and whether a value could be received. They run inside a
// synctest bubble, where time.Sleep moves the fake clock.
var scenarios = []struct {
	name string
	run  func(t chanTimer) []bool
}{
	{"stop pending, stop again", func(t chanTimer) []bool {
		a := t.Stop()
		b := t.Stop()
		time.Sleep(2 * time.Second)
		return []bool{a, b, received(t.C())}
	}},
	{"fired and received, then stop", func(t chanTimer) []bool {
		<-t.C()
		return []bool{t.Stop(), received(t.C())}
	}},
	{"fired, not received, then stop", func(t chanTimer) []bool {
		time.Sleep(2 * time.Second)
		synctest.Wait()
		return []bool{t.Stop(), received(t.C())}
	}},
	{"fired, not received, then reset", func(t chanTimer) []bool {
		time.Sleep(2 * time.Second)
		synctest.Wait()
		a := t.Reset(time.Second)
		b := received(t.C()) // no stale value
		time.Sleep(2 * time.Second)
		synctest.Wait()
		return []bool{a, b, received(t.C())}
	}},
	{"reset pending", func(t chanTimer) []bool {
		a := t.Reset(3 * time.Second)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		b := received(t.C())
		time.Sleep(2 * time.Second)
		synctest.Wait()
		return []bool{a, b, received(t.C())}
	}},
	{"stop then reset", func(t chanTimer) []bool {
		a := t.Stop()
		b := t.Reset(time.Second)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		return []bool{a, b, received(t.C()), t.Stop()}
	}},
	{"reset to zero fires now", func(t chanTimer) []bool {
		a := t.Reset(0)
		synctest.Wait()
		return []bool{a, received(t.C())}
	}},
	{"reset negative after receive", func(t chanTimer) []bool {
		<-t.C()
		a := t.Reset(-time.Hour)
		synctest.Wait()
		return []bool{a, received(t.C()), t.Stop()}
	}},
}

// TestTimerMatchesPackageTime runs every scenario on time.NewTimer and on
// Wheel.NewTimer and requires the same results.
func TestTimerMatchesPackageTime(t *testing.T) {
	// Each way a user can make a channel timer: NewTimer, and, as Go's own
	// tests do, an AfterFunc timer whose C is set by hand to a channel its
	// callback sends on (the library must not take that Timer for one
	// NewTimer made, nor drain a channel it did not make).
	impls := []struct {
		name string
		std  func(d time.Duration) chanTimer
		ours func(w *timewheel.Wheel, d time.Duration) chanTimer
	}{
		{"NewTimer",
			func(d time.Duration) chanTimer { return stdTimer{time.NewTimer(d)} },
			func(w *timewheel.Wheel, d time.Duration) chanTimer { return wheelTimer{w.NewTimer(d)} }},
		{"AfterFunc with C set",
			func(d time.Duration) chanTimer {
				c := make(chan time.Time, 1)
				tm := time.AfterFunc(d, func() { c <- time.Now() })
				tm.C = c
				return stdTimer{tm}
			},
			func(w *timewheel.Wheel, d time.Duration) chanTimer {
				c := make(chan time.Time, 1)
				tm := w.AfterFunc(d, func() { c <- time.Now() })
				tm.C = c
				return wheelTimer{tm}
			}},
	}
	for _, impl := range impls {
		for _, sc := range scenarios {
			t.Run(impl.name+"/"+sc.name, func(t *testing.T) {
				var want, got []bool
				synctest.Test(t, func(t *testing.T) {
					want = sc.run(impl.std(time.Second))
				})
				synctest.Test(t, func(t *testing.T) {
					w := timewheel.New()
					defer w.Close()
					got = sc.run(impl.ours(w, time.Second))
				})
				t.Logf("both: %v", want)
				if len(got) != len(want) {
					t.Fatalf("got %v, package time %v", got, want)
				}
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("got %v, package time %v", got, want)
					}
				}
			})
		}
	}
}

// TestAfterFuncMatchesPackageTime compares Stop and Reset of AfterFunc
// timers with package time's.
func TestAfterFuncMatchesPackageTime(t *testing.T) {
	type afterFunc func(time.Duration, func()) interface {
		Stop() bool
		Reset(time.Duration) bool
	}
	run := func(after afterFunc) []any {
		var runs int
		tm := after(time.Second, func() { runs++ })
		a := tm.Stop()
		b := tm.Reset(time.Second)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		c := tm.Stop()
		d := tm.Reset(time.Second)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		return []any{a, b, c, d, runs}
	}
	var want, got []any
	synctest.Test(t, func(t *testing.T) {
		want = run(func(d time.Duration, f func()) interface {
			Stop() bool
			Reset(time.Duration) bool
		} {
			return time.AfterFunc(d, f)
		})
	})
	synctest.Test(t, func(t *testing.T) {
		w := timewheel.New()
		defer w.Close()
		got = run(func(d time.Duration, f func()) interface {
			Stop() bool
			Reset(time.Duration) bool
		} {
			return w.AfterFunc(d, f)
		})
	})
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, package time %v", got, want)
		}
	}
}

// TestNoStaleValueUnderRace stops and resets channel timers while the
// driver fires them: after Stop or Reset returns, no value for an earlier
// deadline may be received.
func TestNoStaleValueUnderRace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := timewheel.New()
		defer w.Close()
		for i := range 200 {
			tm := w.NewTimer(time.Duration(i%3) * time.Millisecond)
			time.Sleep(time.Millisecond)
			tm.Stop()
			if received(tm.C) {
				t.Fatalf("timer %d: value received after Stop returned", i)
			}
			tm.Reset(time.Hour)
			if received(tm.C) {
				t.Fatalf("timer %d: value received after Reset returned", i)
			}
			tm.Stop()
		}
	})
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
