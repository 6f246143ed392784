package wheelctx_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/wheelctx"
)

// The package-level functions are package context's, on the default
// wheel.
func ExampleWithTimeout() {
	ctx, cancel := wheelctx.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	select {
	case <-ctx.Done():
		fmt.Println(ctx.Err())
	case <-time.After(time.Minute):
		fmt.Println("not done")
	}
	// Output: context deadline exceeded
}

// On binds a wheel of one's own; on a virtual clock, a test decides when
// the deadline passes.
func ExampleOn() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()

	ctx, cancel := wheelctx.On(w).WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	deadline, _ := ctx.Deadline()
	fmt.Println("deadline:", deadline.Format(time.TimeOnly))
	clk.Advance(1999 * time.Millisecond)
	fmt.Println("at 1.999s:", ctx.Err())
	clk.Advance(time.Millisecond)
	fmt.Println("at 2s:", ctx.Err())
	// Output:
	// deadline: 00:00:02
	// at 1.999s: <nil>
	// at 2s: context deadline exceeded
}

// A cause says why; context.Cause reads it, from the context and from
// everything derived from it, while Err stays DeadlineExceeded.
func ExampleWithTimeoutCause() {
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	defer w.Close()

	errSlowBackend := errors.New("backend took longer than 100ms")
	ctx, cancel := wheelctx.On(w).WithTimeoutCause(context.Background(), 100*time.Millisecond, errSlowBackend)
	defer cancel()
	query, cancelQuery := context.WithCancel(ctx) // derived by package context
	defer cancelQuery()

	clk.Advance(100 * time.Millisecond)
	fmt.Println(query.Err())
	fmt.Println(context.Cause(query))
	fmt.Println(errors.Is(ctx.Err(), context.DeadlineExceeded))
	// Output:
	// context deadline exceeded
	// backend took longer than 100ms
	// true
}
