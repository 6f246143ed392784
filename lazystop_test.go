package timewheel_test

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
)

// TestLazyStopsKeepTheContracts runs the tests that hold timers to package
// time's rules with every Stop and Reset taking the path of a goroutine
// on another processor than the timer's shard, which takes no lock (see
// inbox.go): on one shard, and under the test clock, which it otherwise
// takes only on a server whose goroutines move between processors.
func TestLazyStopsKeepTheContracts(t *testing.T) {
	defer timewheel.LazyStops()()
	t.Run("TimerMatchesPackageTime", TestTimerMatchesPackageTime)
	t.Run("AfterFuncMatchesPackageTime", TestAfterFuncMatchesPackageTime)
	t.Run("NoStaleValueUnderRace", TestNoStaleValueUnderRace)
	t.Run("StopResetFromCallback", TestStopResetFromCallback)
	t.Run("EmptyingAWheelStopsTheDriver", TestEmptyingAWheelStopsTheDriver)
}

// TestStopFromAnotherProcessorTakesNoLock counts the shard locks taken by
// Stops and Resets made as if from another processor than the timers'
// shard, in a churn of starts and stops (the server pattern): none for a
// Stop, none for a Reset that postpones a pending timer or restarts one
// stopped no earlier than it was due, before its shard buried it; one for
// each Reset that moves a timer earlier or restarts one its shard has
// buried, and for the Stop of the timer the driver is set for: the cases
// the lock is kept for.
func TestStopFromAnotherProcessorTakesNoLock(t *testing.T) {
	defer timewheel.LazyStops()()
	w, _ := newVirtual(t)
	const n = 5000
	// The first timer is due before the churn's, so that no Stop below
	// stops the timer the driver is set for (which takes the lock, to
	// move the driver's wake).
	first := w.AfterFunc(time.Second, func() {})
	timers := make([]*timewheel.Timer, 0, n)
	for i := range n {
		timers = append(timers, w.AfterFunc(time.Minute+time.Duration(i%977)*time.Millisecond, func() {}))
		if i >= 100 {
			if !timers[i-100].Stop() {
				t.Fatalf("Stop of pending timer %d returned false", i-100)
			}
		}
	}
	if got := timewheel.AwayLocks(w); got != 0 {
		t.Fatalf("%d Stops took a shard's lock; want 0", got)
	}
	// Timers stopped a moment ago, not yet buried by their shard, and
	// restarted no earlier than they were due; then pending ones
	// postponed. Forty, so that they fit their ring with the fifteen at
	// most that the churn may have left in it (a full ring is drained).
	live := timers[n-100:]
	for _, tm := range live[:40] {
		tm.Stop()
	}
	for _, tm := range live[:40] {
		if tm.Reset(2 * time.Minute) {
			t.Fatal("Reset of a stopped timer returned true")
		}
	}
	for _, tm := range live {
		if !tm.Reset(3 * time.Minute) {
			t.Fatal("Reset of a pending timer returned false")
		}
	}
	locked := func() uint64 { st := w.Stats(); return st.Reset - st.LazyResets }
	if got := locked(); got != 0 {
		t.Fatalf("%d Resets that restart or postpone a timer took a shard's lock; want 0", got)
	}
	// Timers whose Stop the shard has seen to (buried: a start drains
	// the inbox), restarted: the lock, to put them back on the wheel.
	for _, tm := range timers[:100] {
		tm.Reset(time.Minute)
	}
	if got := locked(); got != 100 {
		t.Fatalf("%d of 100 Resets of stopped timers no longer on the wheel took a shard's lock; want all", got)
	}
	for _, tm := range live {
		tm.Reset(time.Minute) // earlier: moved under the lock
	}
	if got := locked(); got != 200 {
		t.Fatalf("%d of 100 Resets that move a timer earlier took a shard's lock; want all", got-100)
	}
	if got, want := w.Len(), 201; got != want {
		t.Fatalf("Len = %d, want %d", got, want)
	}
	first.Stop()
	if got := timewheel.AwayLocks(w); got != 1 {
		t.Fatalf("the Stop of the timer the driver is set for took %d locks; want 1", got)
	}
	if st := w.Stats(); st.Stopped != n-100+40+1 {
		t.Fatalf("Stats.Stopped = %d, want %d", st.Stopped, n-100+40+1)
	}
}

// TestCopyStoppedOnAnotherProcessor: a Stop on another processor cannot
// tell a copy of a pending AfterFunc Timer from the Timer (it reads no
// links): it returns true, and the shard, which can, skips the copy when
// it drains its inbox, so the Timer copied from stays pending, is counted
// once, and fires once, as Timer.Stop's doc says.
func TestCopyStoppedOnAnotherProcessor(t *testing.T) {
	defer timewheel.LazyStops()()
	w, clk := newVirtual(t)
	fired := 0
	tm := w.AfterFunc(time.Second, func() { fired++ })
	if !copyOf(tm).Stop() {
		t.Fatal("Stop of a copy on another processor returned false")
	}
	if n := w.Len(); n != 1 {
		t.Fatalf("Len = %d after a copy's Stop; want 1", n)
	}
	clk.Advance(time.Second)
	if fired != 1 {
		t.Fatalf("the Timer copied from fired %d times; want 1", fired)
	}
	if w.Len() != 0 || tm.Stop() {
		t.Fatal("the Timer copied from is still pending after it fired")
	}
}

// TestStopRacesPromotion stops young channel timers from another
// goroutine, usually on another processor (the lock-free Stop), while
// collections end and promote them (commitLocked writes the node's channel
// fields under the shard's lock). Under -race, a Stop that read those
// fields without the lock was reported (found by Go's TestStopResult).
// And every Stop must return true: a collection during the call, once
// the caller's Timer was dead to the compiler, could collect C and cancel
// the timer under it (about one run in ten, at 354868a too, before
// Stop kept the Timer alive to its end).
func TestStopRacesPromotion(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two processors")
	}
	w := timewheel.New()
	defer w.Close()
	var done atomic.Bool
	go func() {
		for !done.Load() {
			runtime.GC() // each collection's end promotes the pending young nodes
		}
	}()
	defer done.Store(true)
	timers := make(chan *timewheel.Timer, 256)
	go func() {
		defer close(timers)
		for range 20_000 {
			timers <- w.NewTimer(time.Second)
		}
	}()
	for tm := range timers {
		if !tm.Stop() {
			t.Fatal("Stop of a pending timer returned false")
		}
	}
}
