package loop_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel/loop"
)

// TestPanickingPostKeepsLaterPosts: a posted function that panics does
// not make the functions posted after it vanish: Post returned nil for
// them, the loop can run again after a panic, and a posted function keeps
// Run from returning until it has run.
func TestPanickingPostKeepsLaterPosts(t *testing.T) {
	_, l := virtualLoop()
	ranB := false
	if err := l.Post(func() { panic("boom") }); err != nil {
		t.Fatal(err)
	}
	if err := l.Post(func() { ranB = true }); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v", r)
			}
		}()
		l.RunNoWait()
	}()
	alive := l.RunNoWait()
	if !ranB {
		t.Fatalf("function posted after a panicking one never ran (RunNoWait after the panic reported alive=%v): it was dropped silently", alive)
	}
}

// TestRunLifetime: Run's lifetime on the real clock in a synctest
// bubble: an unreferenced ticker fires while a referenced timer keeps the
// loop alive and does not keep it alive alone; stopping the last
// referenced timer from a Post (from another goroutine) makes Run return
// nil; Stop from another goroutine ends a Run held by Ref; Post after Stop
// returns ErrStopped at once.
func TestRunLifetime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := loop.New()
		var tm *loop.Timer
		tm = l.AfterFunc(time.Hour, func() { t.Error("stopped timer fired") })
		ticks := 0
		tk := l.Every(time.Second, func() { ticks++ })
		tk.Unref()
		done := make(chan error, 1)
		go func() { done <- l.Run() }()
		time.Sleep(10*time.Second + time.Millisecond)
		if err := l.Post(func() { tm.Stop() }); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatal("Run did not return after the only referenced timer was stopped")
		}
		if ticks != 10 {
			t.Fatalf("unref'd ticker ran %d times in 10s, want 10", ticks)
		}
		// Run again with a Ref, Stop from outside while waiting.
		l.Ref()
		go func() { done <- l.Run() }()
		time.Sleep(time.Second)
		l.Stop()
		synctest.Wait()
		if err := <-done; err != loop.ErrStopped {
			t.Fatalf("Run after Stop = %v", err)
		}
		if err := l.Post(func() {}); err != loop.ErrStopped {
			t.Fatalf("Post after Stop = %v", err)
		}
		l.Unref()
	})
}

// TestRepeatRearmOrderAsLibuv: libuv re-arms a repeating timer
// (uv_timer_again, a new start_id) right before running its own callback,
// so a timer started by an earlier callback of the same pass, for the same
// due time, runs first.
func TestRepeatRearmOrderAsLibuv(t *testing.T) {
	clk, l := virtualLoop()
	g := &log{clk: clk}
	l.AfterFunc(10*time.Millisecond, func() {
		g.add("X starts B")
		l.AfterFunc(10*time.Millisecond, func() { g.add("B") })
	})
	n := 0
	var a *loop.Timer
	a = l.NewTimer(func() {
		n++
		g.add("A%d", n)
		if n == 2 {
			a.Stop()
		}
	})
	a.Start(10*time.Millisecond, 10*time.Millisecond)
	drive(l, clk, time.Hour)
	g.want(t, "10ms X starts B", "10ms A1", "20ms B", "20ms A2")
}
