package timewheel_test

import (
	"sync"
	"testing"
	"time"
)

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
