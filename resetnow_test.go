package timewheel_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
)

// TestResetDueNowSendsNoOlderTime: Reset(0) of a pending channel timer
// while the driver is busy must not deliver a time older than the call,
// as package time's never does (its value is the deadline). Two
// goroutines reset their timer to now twice and receive; two others keep
// the driver busy with bursts of AfterFunc timers. A fire that read the
// clock before the second Reset used to send that older reading (about
// one value in four thousand): a lock-free Reset left the timer in the
// slot the fire was expiring.
func TestResetDueNowSendsNoOlderTime(t *testing.T) {
	w := timewheel.New(timewheel.WithTick(10 * time.Microsecond))
	defer w.Close()
	var done atomic.Bool
	var busy sync.WaitGroup
	for range 2 {
		busy.Add(1)
		go func() {
			defer busy.Done()
			for !done.Load() {
				for i := range 200 {
					w.AfterFunc(time.Duration(i%3)*100*time.Microsecond, func() {})
				}
				time.Sleep(100 * time.Microsecond) // pacing the load, not a timing assertion
			}
		}()
	}
	rounds := 150_000
	if raceEnabled || testing.Short() {
		rounds = 20_000
	}
	var older, total atomic.Int64
	var resetters sync.WaitGroup
	for range 2 {
		resetters.Add(1)
		go func() {
			defer resetters.Done()
			tm := w.NewTimer(time.Hour)
			defer tm.Stop()
			for range rounds {
				tm.Reset(0)
				start := time.Now()
				tm.Reset(0)
				if v := <-tm.C; v.Before(start) {
					older.Add(1)
				}
				total.Add(1)
			}
		}()
	}
	resetters.Wait()
	done.Store(true)
	busy.Wait()
	if n := older.Load(); n > 0 {
		t.Fatalf("%d of %d values were older than the Reset(0) that armed them", n, total.Load())
	}
}
