package wheelctx_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/timewheel/timewheel"
	"github.com/timewheel/timewheel/wheelctx"
)

const benchTimeout = time.Minute

// BenchmarkCreateCancel is the per-request cost of a deadline: create a
// context with a one-minute timeout and cancel it, as a handler does with
// defer cancel(). pending is the number of other deadline contexts alive
// meanwhile, made earlier with the same timeout (requests in flight);
// parent is Background or a cancelable context (r.Context() in a
// server, on which wheelctx returns package context's own context: see
// the package doc); use=done also waits on the context's Done once (a
// select with its data ready, as code that passes the context on does),
// which makes wheelctx's inner context. Package context runs as a
// sub-benchmark in the same function:
//
//	go test -run '^$' -bench CreateCancel -count 6 ./wheelctx > ctx.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl ctx.txt
func BenchmarkCreateCancel(b *testing.B) {
	for _, pending := range []int{0, 1e5} {
		for _, parent := range []string{"background", "cancelable"} {
			for _, use := range []string{"none", "done"} {
				for _, impl := range []string{"context", "wheelctx"} {
					name := fmt.Sprintf("pending=%.0e/parent=%s/use=%s/impl=%s", float64(pending), parent, use, impl)
					b.Run(name, func(b *testing.B) { createCancel(b, pending, parent, use, impl) })
				}
			}
		}
	}
}

// ready is a channel always ready to receive from.
var ready = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// createCancel is one sub-benchmark of BenchmarkCreateCancel.
func createCancel(b *testing.B, pending int, parent, use, impl string) {
	w := timewheel.New()
	defer w.Close()
	withTimeout := context.WithTimeout
	if impl == "wheelctx" {
		withTimeout = wheelctx.On(w).WithTimeout
	}
	for range pending {
		_, cancel := withTimeout(context.Background(), benchTimeout)
		defer cancel()
	}
	p := context.Background()
	if parent == "cancelable" {
		var cancel context.CancelFunc
		p, cancel = context.WithCancel(p)
		defer cancel()
	}
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := withTimeout(p, benchTimeout)
		if use == "done" {
			select {
			case <-ready:
			case <-ctx.Done():
			}
		}
		cancel()
	}
}

// BenchmarkCreateCancelParallel is BenchmarkCreateCancel from every
// processor at once, each goroutine on a parent of its own: Background,
// or a cancelable one (on which wheelctx returns package context's own
// context: see the package doc). With pending=1e3 each goroutine first
// makes 1,000 contexts it cancels only at the end (calls in flight), so
// the wheel is never empty. Run it with a time, not a count
// (-benchtime 1s).
func BenchmarkCreateCancelParallel(b *testing.B) {
	for _, pending := range []int{0, 1e3} {
		for _, parent := range []string{"background", "cancelable"} {
			for _, impl := range []string{"context", "wheelctx"} {
				b.Run(fmt.Sprintf("pending=%.0e/parent=%s/impl=%s", float64(pending), parent, impl), func(b *testing.B) {
					w := timewheel.New()
					defer w.Close()
					withTimeout := context.WithTimeout
					if impl == "wheelctx" {
						withTimeout = wheelctx.On(w).WithTimeout
					}
					b.ReportAllocs()
					b.RunParallel(func(pb *testing.PB) {
						p := context.Background()
						if parent == "cancelable" {
							var cancel context.CancelFunc
							p, cancel = context.WithCancel(p)
							defer cancel()
						}
						for range pending {
							_, cancel := withTimeout(p, benchTimeout)
							defer cancel()
						}
						for pb.Next() {
							_, cancel := withTimeout(p, benchTimeout)
							cancel()
						}
					})
				})
			}
		}
	}
}

// BenchmarkCreateCancelFloor: what any context with a deadline pays, in
// the same units as BenchmarkCreateCancel, on a cancelable parent:
//   - op=inner: package context's own child (context.WithCancelCause,
//     then its cancel), the only way a context outside package context
//     is canceled synchronously with such a parent;
//   - op=inner+wheel: that, and a timer on a wheel: the least an outside
//     context on the wheel pays there, before it gives package context's
//     children DeadlineExceeded (which it cannot) or lets the parent's
//     cancel release its timer;
//   - op=inner+wheel+release: that, and context.AfterFunc on the parent
//     to release the timer when the parent is canceled (on a goroutine);
//   - op=package: package context's context.WithTimeout, which does all
//     of it (wheelctx returns it on such a parent);
//   - op=clock: the wall clock read that WithTimeout takes the deadline
//     from (time.Now).
func BenchmarkCreateCancelFloor(b *testing.B) {
	w := timewheel.New()
	defer w.Close()
	nop := func() {}
	for _, op := range []string{"inner", "inner+wheel", "inner+wheel+release", "package"} {
		b.Run("op="+op, func(b *testing.B) {
			p, cancel := context.WithCancel(context.Background())
			defer cancel()
			b.ReportAllocs()
			for b.Loop() {
				if op == "package" {
					_, cancel := context.WithTimeout(p, benchTimeout)
					cancel()
					continue
				}
				_, cancel := context.WithCancelCause(p)
				var t *timewheel.Timer
				var stop func() bool
				if op != "inner" {
					t = w.AfterFunc(benchTimeout, nop)
				}
				if op == "inner+wheel+release" {
					stop = context.AfterFunc(p, nop)
				}
				if stop != nil {
					stop()
				}
				if t != nil {
					t.Stop()
				}
				cancel(nil)
			}
		})
	}
	b.Run("op=clock", func(b *testing.B) {
		var sink time.Time
		for b.Loop() {
			sink = time.Now()
		}
		_ = sink
	})
}
