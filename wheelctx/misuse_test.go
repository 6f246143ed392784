package wheelctx_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/clock"
	"github.com/timewheel/timewheel/internal/misusetest"
	"github.com/timewheel/timewheel/wheelctx"
)

// virtual returns a wheel on a virtual clock that fires inline, closed at
// cleanup, and its Scheduler.
func virtual(t *testing.T) (*clock.Virtual, *timewheel.Wheel, wheelctx.Scheduler) {
	t.Helper()
	clk := clock.NewVirtual(time.Unix(1e9, 0))
	w := timewheel.New(timewheel.WithClock(clk), timewheel.WithExecutor(timewheel.Inline()))
	t.Cleanup(func() { w.Close() })
	return clk, w, wheelctx.On(w)
}

// makers are the functions that make a context, on s where they take one.
func makers(s wheelctx.Scheduler) map[string]func(context.Context) (context.Context, context.CancelFunc) {
	d, at := time.Hour, time.Now().Add(time.Hour)
	return map[string]func(context.Context) (context.Context, context.CancelFunc){
		"WithTimeout":  func(p context.Context) (context.Context, context.CancelFunc) { return wheelctx.WithTimeout(p, d) },
		"WithDeadline": func(p context.Context) (context.Context, context.CancelFunc) { return wheelctx.WithDeadline(p, at) },
		"WithTimeoutCause": func(p context.Context) (context.Context, context.CancelFunc) {
			return wheelctx.WithTimeoutCause(p, d, nil)
		},
		"WithDeadlineCause": func(p context.Context) (context.Context, context.CancelFunc) {
			return wheelctx.WithDeadlineCause(p, at, nil)
		},
		"Scheduler.WithTimeout":       func(p context.Context) (context.Context, context.CancelFunc) { return s.WithTimeout(p, d) },
		"Scheduler.WithDeadline":      func(p context.Context) (context.Context, context.CancelFunc) { return s.WithDeadline(p, at) },
		"Scheduler.WithTimeoutCause":  func(p context.Context) (context.Context, context.CancelFunc) { return s.WithTimeoutCause(p, d, nil) },
		"Scheduler.WithDeadlineCause": func(p context.Context) (context.Context, context.CancelFunc) { return s.WithDeadlineCause(p, at, nil) },
	}
}

// TestNilParent: every maker panics on a nil parent, as package context
// does, with the package's name.
func TestNilParent(t *testing.T) {
	for _, wheel := range []string{"open", "closed"} {
		for name, mk := range makers(wheelctx.Scheduler{}) {
			m := misusetest.Case{
				Name: wheel + " wheel/" + name,
				Call: func(t *testing.T) error {
					if wheel == "closed" {
						_, w, _ := virtual(t)
						w.Close()
						mk = makers(wheelctx.On(w))[name]
					}
					var parent context.Context
					mk(parent)
					return nil
				},
				Want: "panic: wheelctx: cannot create context from nil parent",
			}
			t.Run(m.Name, func(t *testing.T) { misusetest.CheckWithin(t, time.Minute, m) })
		}
	}
}

// TestMisuse: zero and nil values, a sub-tick timeout, and calls back
// into a context from a function it runs when done.
func TestMisuse(t *testing.T) {
	for _, m := range []misusetest.Case{
		{
			Name: "zero Scheduler uses the default wheel",
			Call: func(*testing.T) error {
				var s wheelctx.Scheduler
				ctx, cancel := s.WithTimeout(context.Background(), time.Hour)
				cancel()
				return ignore(ctx.Err(), context.Canceled)
			},
			Want: "ok",
		},
		{
			Name: "On(nil) uses the default wheel",
			Call: func(*testing.T) error {
				ctx, cancel := wheelctx.On(nil).WithTimeout(context.Background(), -1)
				defer cancel()
				return ignore(ctx.Err(), context.DeadlineExceeded)
			},
			Want: "ok",
		},
		{
			Name: "On(zero Wheel)",
			Call: func(*testing.T) error {
				wheelctx.On(new(timewheel.Wheel)).WithTimeout(context.Background(), time.Hour)
				return nil
			},
			Want: "panic: timewheel: Now called on a zero Wheel; make one with New",
		},
		{
			// The wheel rounds deadlines up to its tick: never early.
			Name: "timeout 1ns is done at the first tick",
			Call: func(t *testing.T) error {
				clk, _, s := virtual(t)
				ctx, cancel := s.WithTimeout(context.Background(), time.Nanosecond)
				defer cancel()
				clk.Advance(time.Millisecond - time.Nanosecond)
				before := ctx.Err()
				clk.Advance(time.Nanosecond)
				return errors.Join(before, ctx.Err())
			},
			Want: "error: context deadline exceeded",
		},
		{
			Name: "cancel twice, and after the deadline",
			Call: func(t *testing.T) error {
				clk, _, s := virtual(t)
				ctx, cancel := s.WithTimeout(context.Background(), time.Second)
				clk.Advance(time.Second)
				cancel()
				cancel()
				return ctx.Err()
			},
			Want: "error: context deadline exceeded",
		},
		reentrant("deadline", func(clk *clock.Virtual, cancel context.CancelFunc) { clk.Advance(time.Second) }, "context deadline exceeded"),
		reentrant("cancel", func(clk *clock.Virtual, cancel context.CancelFunc) { cancel() }, "context canceled"),
	} {
		t.Run(m.Name, func(t *testing.T) { misusetest.CheckWithin(t, time.Minute, m) })
	}
}

// reentrant is a misuse whose context, when end ends it, runs a function
// registered with context.AfterFunc that calls back into it: its
// CancelFunc, the stop function of the registration, its Err and Value,
// and a new context derived from it. None of them may wait for the
// context's own lock.
func reentrant(how string, end func(*clock.Virtual, context.CancelFunc), want string) misusetest.Case {
	return misusetest.Case{
		Name: "calls back from AfterFunc when done by " + how,
		Call: func(t *testing.T) error {
			clk, _, s := virtual(t)
			ctx, cancel := s.WithTimeout(context.Background(), time.Second)
			var stop func() bool
			var errs []error
			ran := make(chan struct{})
			stop = context.AfterFunc(ctx, func() {
				defer close(ran)
				cancel()
				if stop() {
					errs = append(errs, errors.New("stop() = true from the func it stops"))
				}
				ctx.Value("key")
				child, ccancel := s.WithTimeout(ctx, time.Hour)
				ccancel()
				errs = append(errs, ctx.Err(), ignore(child.Err(), ctx.Err()))
			})
			end(clk, cancel)
			<-ran // package context runs the func on a goroutine of its own
			return errors.Join(errs...)
		},
		Want: "error: " + want,
	}
}

// ignore returns err unless it is want.
func ignore(err, want error) error {
	if err == want {
		return nil
	}
	return fmt.Errorf("%v, want %v", err, want)
}
