package wheelctx_test

import (
	"context"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/wheelctx"
)

func derivedSched(t *testing.T) (*clock.Virtual, wheelctx.Scheduler) {
	t.Helper()
	clk := clock.NewVirtual(time.Unix(1e9, 0))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	t.Cleanup(func() { w.Close() })
	return clk, wheelctx.On(w)
}

// TestDerivedThroughWithValue: a context derived by package context
// through context.WithValue (the way middleware adds request values) is
// canceled with the same error as this package's context, when the
// CancelFunc is called or the deadline passes, as under
// context.WithTimeout: synchronously, before the call that ends the
// context returns, with no goroutine to watch it.
func TestDerivedThroughWithValue(t *testing.T) {
	type k struct{}
	clk, s := derivedSched(t)
	for _, tc := range []struct {
		name string
		end  func(cancel context.CancelFunc)
		want error
	}{
		{"cancel", func(cancel context.CancelFunc) { cancel() }, context.Canceled},
		{"deadline", func(context.CancelFunc) { clk.Advance(time.Second) }, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := s.WithTimeout(context.Background(), time.Second)
			defer cancel()
			child, ccancel := context.WithCancel(context.WithValue(ctx, k{}, 1))
			defer ccancel()
			if child.Value(k{}) != 1 {
				t.Fatal("value lost")
			}
			if err := child.Err(); err != nil {
				t.Fatalf("child done before its parent: %v", err)
			}
			tc.end(cancel)
			if ctx.Err() != tc.want {
				t.Fatalf("ctx.Err() = %v, want %v", ctx.Err(), tc.want)
			}
			select {
			case <-child.Done():
			default:
				t.Fatal("child of WithValue(ctx) still open right after ctx is done")
			}
			if got := child.Err(); got != tc.want {
				t.Errorf("child of WithValue(ctx): Err() = %v, want %v", got, tc.want)
			}
			if got := context.Cause(child); got != tc.want {
				t.Errorf("child of WithValue(ctx): Cause = %v, want %v", got, tc.want)
			}
		})
	}
}
