package loop_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/timewheel/timewheel/loop"
)

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
