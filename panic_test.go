package timewheel_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
)

// TestPanicKeepsConcurrentDriverCall: while an inline callback runs, the
// driver fires for the next due tick on another goroutine (as the real
// clock's AfterFunc does); it finds the shard firing and only asks it to
// go round again. The callback then panics, the last of its batch: the
// request must not be lost with the panic, or the timer due at 2ms never
// fires.
func TestPanicKeepsConcurrentDriverCall(t *testing.T) {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	started, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	w.AfterFunc(time.Millisecond, func() {
		close(started)
		<-release
		panic("boom")
	})
	var fired atomic.Bool
	w.AfterFunc(2*time.Millisecond, func() { fired.Store(true) })
	go func() {
		defer close(done)
		defer func() { recover() }()
		clk.Advance(time.Millisecond) // runs the panicking callback
	}()
	<-started
	clk.Advance(time.Millisecond) // now 2ms: the driver fires while the shard is firing
	close(release)
	<-done
	clk.Advance(time.Hour)
	if !fired.Load() {
		t.Fatalf("timer due at 2ms never fired after the clock moved 1h past it (Len %d, clock timers pending %d)", w.Len(), clk.Len())
	}
}

// TestPanicKeptBatchCountedByClose: callbacks kept after a panic
// (expired: their Stop returns false) that Close drops before they run are
// counted in Discarded.
func TestPanicKeptBatchCountedByClose(t *testing.T) {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	w.AfterFunc(time.Millisecond, func() { panic("boom") })
	ran := false
	tm := w.AfterFunc(time.Millisecond, func() { ran = true })
	func() {
		defer func() { recover() }()
		clk.Advance(time.Millisecond)
	}()
	stopped := tm.Stop()
	w.Close()
	clk.Advance(time.Hour)
	if !ran && !stopped && w.Discarded() == 0 {
		t.Fatalf("a timer whose Stop returned false (it had expired) never ran, and Close counted it in neither Discarded (%d) nor anything else", w.Discarded())
	}
}

// TestPanicKeepsDueNowTimerAndKeptBatch: the same driver call with a
// non-empty kept batch. The panicking callback starts a due-now timer (the
// driver is set for the current tick), the driver fires while the shard
// is firing, then the callback panics: both the kept callback B and the
// due-now timer must still run.
func TestPanicKeepsDueNowTimerAndKeptBatch(t *testing.T) {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()
	var ranB, ranNow bool
	w.AfterFunc(time.Millisecond, func() {
		w.AfterFunc(0, func() { ranNow = true })
		clk.Advance(0) // the driver, set for now, fires on this goroutine as it would on another
		panic("boom")
	})
	w.AfterFunc(time.Millisecond, func() { ranB = true })
	func() {
		defer func() { recover() }()
		clk.Advance(time.Millisecond)
	}()
	clk.Advance(time.Hour)
	if !ranB || !ranNow {
		t.Fatalf("after the panic and 1h more: kept batch ran = %v, due-now timer ran = %v (Len %d, clock timers pending %d)", ranB, ranNow, w.Len(), clk.Len())
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
