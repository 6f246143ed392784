package timewheel_test

import (
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel"
)

// liveObjects returns the number of live heap objects after two
// collections, and after the cleanups they queued have had a chance to
// run.
func liveObjects() int64 {
	var m runtime.MemStats
	for range 2 {
		runtime.GC()
		runtime.Gosched()
	}
	runtime.ReadMemStats(&m)
	return int64(m.HeapObjects)
}

// settledObjects returns the fewest live heap objects over a few rounds of
// collections: objects a cleanup released are freed by a later collection
// (several, under the race detector), so one reading may still count them.
func settledObjects() int64 {
	least := liveObjects()
	for range 10 {
		time.Sleep(time.Millisecond) // lets the cleanup goroutine run; not a timing assertion
		least = min(least, liveObjects())
	}
	return least
}

// collectedLen waits, a bounded number of collections, for w.Len to come
// down to want, and returns it.
func collectedLen(w *timewheel.Wheel, want int) int {
	for range 500 { // a bound, not a deadline: usually a few rounds do
		if n := w.Len(); n <= want {
			return n
		}
		runtime.GC()
		time.Sleep(time.Millisecond) // lets the cleanup goroutine run; not a timing assertion
	}
	return w.Len()
}

// TestForgottenTimersAreCollected: as with Go 1.23's package time (its
// TestTimerGC), 10,000 channel timers, After channels and tickers dropped
// without Stop are collected: the live objects grow by no more than
// package time's do in the same test plus a small constant, the wheel's
// Len comes back to what it was, and the dropped tickers stop ticking.
func TestForgottenTimersAreCollected(t *testing.T) {
	const n = 10_000
	w := timewheel.New()
	defer w.Close()
	keep := w.AfterFunc(time.Hour, func() {}) // AfterFunc timers stay pending
	defer keep.Stop()
	for _, tc := range []struct {
		name  string
		ours  func()
		their func()
	}{
		{"NewTimer", func() { w.NewTimer(time.Hour) }, func() { time.NewTimer(time.Hour) }},
		{"After", func() { w.After(time.Hour) }, func() { time.After(time.Hour) }},
		{"NewTicker", func() { w.NewTicker(time.Millisecond) }, func() { time.NewTicker(time.Millisecond) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			growth := func(start func(), settle func()) int64 {
				before := settledObjects()
				for range n {
					start()
				}
				settle()
				return settledObjects() - before
			}
			theirs := growth(tc.their, func() {})
			ours := growth(tc.ours, func() {
				if got := collectedLen(w, 1); got != 1 {
					t.Fatalf("Len = %d after dropping %d %s, want 1 (the AfterFunc timer)", got, n, tc.name)
				}
			})
			t.Logf("live objects after dropping %d: timewheel %+d, package time %+d", n, ours, theirs)
			slack := int64(200)
			if raceEnabled {
				// The race detector frees objects and runs cleanups
				// several collections late: up to 856 of the 10,000
				// tickers' objects were seen left, at 354868a too (one
				// run in six). A leak of them all still fails.
				slack = n / 5
			}
			if ours > theirs+slack {
				t.Fatalf("dropping %d %s left %d more live objects, package time %d", n, tc.name, ours, theirs)
			}
		})
	}
}

// TestAfterDeliversToABlockedReceiver: a goroutine blocked on an After
// channel that nothing else references, and on a dropped Timer's channel,
// still receives, collections notwithstanding.
func TestAfterDeliversToABlockedReceiver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := timewheel.New()
		defer w.Close()
		done := make(chan string, 2)
		go func() {
			<-w.After(time.Second)
			done <- "After"
		}()
		go func() {
			c := w.NewTimer(2 * time.Second).C // the Timer is dropped at once
			<-c
			done <- "NewTimer"
		}()
		synctest.Wait()
		for range 3 {
			runtime.GC()
		}
		if got, want := <-done, "After"; got != want {
			t.Fatalf("first %s, want %s", got, want)
		}
		if got, want := <-done, "NewTimer"; got != want {
			t.Fatalf("second %s, want %s", got, want)
		}
	})
}

// TestTimerResetAfterACollectionIsCollected: a channel timer that was
// stopped when a collection ended, then reset and dropped, is collected
// too.
func TestTimerResetAfterACollectionIsCollected(t *testing.T) {
	w := timewheel.New()
	defer w.Close()
	timers := make([]*timewheel.Timer, 100)
	for i := range timers {
		timers[i] = w.NewTimer(time.Hour)
		timers[i].Stop()
	}
	liveObjects() // collections end with every timer stopped
	for _, tm := range timers {
		tm.Reset(time.Hour)
	}
	if w.Len() != len(timers) {
		t.Fatalf("Len = %d, want %d", w.Len(), len(timers))
	}
	timers = nil
	if got := collectedLen(w, 0); got != 0 {
		t.Fatalf("Len = %d after dropping the reset timers, want 0", got)
	}
}

// TestForgottenGoWithinThreeCollections holds the wheel to what Go's own
// test of the same (TestTimerGC) asks of package time: drop 10,000
// timers or tickers due in an hour, run three collections back to back,
// and fewer than 10,000 heap objects may be left, fewer than one per
// timer, and at most a tenth of them pending. Timers due in 10 s go as
// fast as those due in an hour (see node). The race
// detector delays frees and cleanups, so under it the test is skipped;
// CI runs it on its own without the race detector.
func TestForgottenGoWithinThreeCollections(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector delays frees and cleanups")
	}
	w := timewheel.New()
	defer w.Close()
	for _, tc := range []struct {
		name string
		drop func()
	}{
		{"After", func() { w.After(time.Hour) }},
		{"Tick", func() { w.Tick(time.Hour) }},
		{"NewTimer", func() { w.NewTimer(time.Hour) }},
		{"NewTicker", func() { w.NewTicker(time.Hour) }},
		{"NewTimerStop", func() { w.NewTimer(time.Hour).Stop() }},
		{"NewTickerStop", func() { w.NewTicker(time.Hour).Stop() }},
		{"NewTimerReset", func() { w.NewTimer(time.Millisecond).Reset(time.Hour) }},
		{"After10s", func() { w.After(10 * time.Second) }},
		{"NewTimer10s", func() { w.NewTimer(10 * time.Second) }},
		{"NewTicker10s", func() { w.NewTicker(10 * time.Second) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 10_000
			var m runtime.MemStats
			threeCollections := func() int64 {
				runtime.GC()
				runtime.GC()
				runtime.GC()
				runtime.ReadMemStats(&m)
				return int64(m.Mallocs - m.Frees)
			}
			before := threeCollections()
			for range n {
				tc.drop()
			}
			left := threeCollections() - before
			pending := w.Len()
			t.Logf("%d objects left of %d dropped, %d pending", left, n, pending)
			if left >= n {
				t.Fatalf("dropping %d %s left %d heap objects after three collections", n, tc.name, left)
			}
			if pending > n/10 {
				t.Fatalf("dropping %d %s left %d pending after three collections", n, tc.name, pending)
			}
		})
	}
}
